"""The Flink jobs of the project, each a script that reads top to bottom: its config, where it
runs, its source, the topology, its sinks, and the run. Installed as ``ais_pipeline.jobs``
(``pyproject.toml`` maps this folder there), so ``ais-pipeline run`` and ``flink run -py
jobs/<job>.py --pyFiles udfs`` run the same code.

- ``ais_traffic.py``: raw AIS lines to positions, static reports, per-cell window aggregates,
  late reports and dead letters (``ais-pipeline run``).
- ``load_postgres.py``: a file run's output directory into the PostgreSQL tables
  (``ais-pipeline load``).
"""
