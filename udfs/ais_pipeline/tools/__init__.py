"""What a user runs besides the jobs: the run report, the Kafka replay, the plain loop, the
benchmark and the feeds it and the tests generate."""
