"""The ``ais-pipeline`` console script: one command per job or tool, every user-facing error
printed in one line by :func:`ais_pipeline.errors.guarded`."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from ais_pipeline.errors import guarded

USAGE = """usage: ais-pipeline run [--input PATH] [--output DIR] [flags]
       ais-pipeline load DIR --postgres URL
       ais-pipeline report DIR [--window tumbling|sliding] [--start ISO] [--color vessels|reports]
       ais-pipeline replay FILE --topic TOPIC [--rate N]
       ais-pipeline relay --from udp://|tcp://|tcp-listen://HOST:PORT --topic TOPIC
       ais-pipeline --version

commands:
  run     run the job in a local Flink mini-cluster, on a file or a Kafka topic
          (ais-pipeline run --help for the flags)
  load    a file run's output directory into the PostgreSQL tables (as --postgres writes them)
  report  a density map, a duplicates chart and an HTML page of a run's outputs
  replay  feed a Kafka topic from a capture, at a rate or as fast as possible
  relay   feed a Kafka topic from a live feed (UDP, TCP), tagging lines with station and time
"""


def _command(name: str) -> Callable[[Sequence[str]], int] | None:
    # Imported when chosen: a bad flag of one command never waits for another's imports.
    if name == "run":
        from ais_pipeline.jobs.ais_traffic import main as run

        return run
    if name == "load":
        from ais_pipeline.jobs.load_postgres import main as load

        return load
    if name == "report":
        from ais_pipeline.tools.report import main as report

        return report
    if name == "replay":
        from ais_pipeline.tools.replay import main as replay

        return replay
    if name == "relay":
        from ais_pipeline.tools.relay import main as relay

        return relay
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, end="")
        return 0 if args else 2
    if args[0] == "--version":  # the build a job of this installation carries
        from ais_pipeline.build import this_build

        print(f"ais-pipeline {this_build()}")
        return 0
    command = _command(args[0])
    if command is None:
        print(f"ais-pipeline: error: unknown command {args[0]!r}\n{USAGE}", file=sys.stderr, end="")
        return 2
    return guarded(command, args[1:])


if __name__ == "__main__":
    sys.exit(main())
