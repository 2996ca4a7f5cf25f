"""The wiring of a run, in the client process: the topology (:mod:`~ais_pipeline.pipeline.topology`),
where it runs (:mod:`~ais_pipeline.pipeline.environment`), its sources and sinks (files, Kafka,
PostgreSQL), and how a run goes: execution until the end or a Ctrl-C, its progress line, its web
UI and its summary. The jobs of ``jobs/`` put these together."""
