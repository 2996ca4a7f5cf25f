"""The ``ais-pipeline`` console script: ``ais-pipeline run [flags]``."""

from __future__ import annotations

import sys
from collections.abc import Sequence

USAGE = """usage: ais-pipeline run [--input PATH] [--output DIR] [flags]
       ais-pipeline replay FILE --topic TOPIC [--rate N]
       ais-pipeline load DIR --postgres URL
       ais-pipeline report DIR [--window tumbling|sliding] [--start ISO] [--color vessels|reports]

commands:
  run     run the job in a local Flink mini-cluster, on a file or a Kafka topic
          (ais-pipeline run --help for the flags)
  load    a file run's output directory into the PostgreSQL tables (as --postgres writes them)
  replay  feed a Kafka topic from a capture, at a rate or as fast as possible
  report  a density map, a duplicates chart and an HTML page of a run's outputs
"""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, end="")
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command == "run":
        from ais_pipeline.flink.job import main as run_main

        return run_main(rest)
    if command == "report":
        from ais_pipeline.tools.report import main as report_main

        return report_main(rest)
    if command == "load":
        from ais_pipeline.flink.tables import load_main

        return load_main(rest)
    if command == "replay":
        from ais_pipeline.tools.replay import main as replay_main

        return replay_main(rest)
    print(f"ais-pipeline: error: unknown command {command!r}\n{USAGE}", file=sys.stderr, end="")
    return 2


if __name__ == "__main__":
    sys.exit(main())
