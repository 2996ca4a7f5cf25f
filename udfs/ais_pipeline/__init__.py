"""AIS vessel traffic on Apache Flink (PyFlink).

- :mod:`ais_pipeline.rules`: the domain rules in plain Python (records, parsing, multipart,
  dedup, the reference windows and watermarks, output records, and the plain loop that runs them
  all). It never imports pyflink, and its tests run without a JVM.
- :mod:`ais_pipeline.functions`: the Python that runs inside Flink's operators, around the rules.
- :mod:`ais_pipeline.jvm`: the one door to the job's Java classes (``java/``) and to Flink's own.
- :mod:`ais_pipeline.pipeline`: the wiring of a run: topology, environment, sources, sinks,
  execution, progress, web UI.
- :mod:`ais_pipeline.jobs`: the Flink jobs a user runs or submits (the checkout's ``jobs/``).
- :mod:`ais_pipeline.tools`: what a user runs besides the jobs (report, replay, the plain loop,
  the benchmark and its feeds).
- :mod:`ais_pipeline.config`, :mod:`ais_pipeline.files`, :mod:`ais_pipeline.postgres`,
  :mod:`ais_pipeline.resources`, :mod:`ais_pipeline.errors`: the one config object, the job's
  files, the PostgreSQL tables, where bundled files are, the errors a user can fix.
"""

__version__ = "0.1.0"  # the package's version (pyproject.toml reads it); its build: ais_pipeline.build
