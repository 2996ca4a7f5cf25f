"""The rules of the job in plain Python: what a line is, when two reports are one, what a window
holds. Nothing here imports pyflink (a lint rule checks it); the Flink operators in
:mod:`ais_pipeline.flink` and the plain loop in :mod:`ais_pipeline.rules.plain` both run it."""
