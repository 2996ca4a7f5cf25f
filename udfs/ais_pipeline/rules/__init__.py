"""The rules of the job in plain Python: what a line is, when two reports are one, what a window
holds. Nothing here imports pyflink or reads a file (a lint rule and ``tests/unit/test_layout.py``
check it); the operators of :mod:`ais_pipeline.functions` and the plain loop of
:mod:`ais_pipeline.rules.plain` both run it."""
