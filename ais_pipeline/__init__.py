"""AIS vessel traffic on Apache Flink (PyFlink).

- :mod:`ais_pipeline.rules`: the domain rules in plain Python (records, parsing, multipart,
  dedup, the reference windows, outputs, and the plain loop that runs them all). It never
  imports pyflink, and its tests run without a JVM.
- :mod:`ais_pipeline.flink`: the Flink side: the Python operators around the rules, the one
  door to the job's Java classes (:mod:`ais_pipeline.flink.jvm`), the topology, the environment,
  Kafka, and the run itself.
- :mod:`ais_pipeline.tools`: what a user runs besides the job (report, replay).
- ``java/``: the JVM side (a Maven module): batching, watermarks, the cell windows.
"""
