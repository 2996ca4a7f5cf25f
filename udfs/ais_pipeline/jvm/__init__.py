"""The one door between the job's Python and the JVM: one small wrapper per Java class of
``java/`` (and the few of Flink's own that PyFlink does not wrap), in the style of PyFlink's
connector wrappers.

- :mod:`~ais_pipeline.jvm.operators`: the job's Java operators; every wrapper a dataclass of
  named fields, ``name`` and ``uid`` first, then ``apply(stream)``.
- :mod:`~ais_pipeline.jvm.sources`, :mod:`~ais_pipeline.jvm.kafka`, :mod:`~ais_pipeline.jvm.jdbc`,
  :mod:`~ais_pipeline.jvm.parquet`, :mod:`~ais_pipeline.jvm.aws`: sources and sinks of the same
  shape (``read(env)`` for a source).
- :mod:`~ais_pipeline.jvm.streams`: side outputs and keying in Java.
- :mod:`~ais_pipeline.jvm.metrics`: Java gauges on a Python operator's metric group.
- :mod:`~ais_pipeline.jvm.cluster`: a local cluster that outlives its jobs.
- :mod:`~ais_pipeline.jvm.gateway`: the py4j handles all of them share; the only module of the
  project that calls py4j's gateway or reads a PyFlink object's Java handle.

The Java classes live in the package's ``jars/ais-flink-helpers.jar`` (built by Maven from
``java/pom.xml``); the wrappers add it to the job with ``add_jars``, so ``flink run`` ships it to
the cluster.
"""
