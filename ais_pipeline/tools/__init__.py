"""Tools around the job: the run report and the Kafka replay."""
