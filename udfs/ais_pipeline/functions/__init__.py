"""The Python that runs inside Flink's operators: the parse and dedup operators
(:mod:`~ais_pipeline.functions.operators`) around the rules of :mod:`ais_pipeline.rules`, the keyed
state they hold (:mod:`~ais_pipeline.functions.state`), and the Flink row types of the records
they exchange with the Java operators (:mod:`~ais_pipeline.functions.rows`)."""
