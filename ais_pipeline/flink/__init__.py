"""The Flink side of the job: Python operators over :mod:`ais_pipeline.rules`, the wrappers of
the job's Java classes (:mod:`ais_pipeline.flink.jvm`, the only module that talks to the JVM),
the topology (:mod:`ais_pipeline.flink.topology`) and the run (:mod:`ais_pipeline.flink.job`)."""
