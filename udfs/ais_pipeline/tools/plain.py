"""The plain loop as a command: the same job in one Python loop, no Flink
(:mod:`ais_pipeline.rules.plain`), on a file or a directory; the oracle of the Flink tests and the
benchmark's baseline.

    python -m ais_pipeline.tools.plain [--input PATH] [--output DIR] [flags]
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from ais_pipeline.config import parse_config
from ais_pipeline.errors import ConfigError, guarded
from ais_pipeline.files import read_lines, summarize, write_outputs
from ais_pipeline.rules import outputs
from ais_pipeline.rules.plain import run_plain


def main(argv: Sequence[str]) -> int:
    config = parse_config(argv)
    if config.output_formats != ("jsonl",):
        raise ConfigError("--output-format (OUTPUT_FORMAT): the plain loop writes JSON Lines only")
    started = time.monotonic()
    lines = list(read_lines(config.input_path))
    result = run_plain(config, lines)
    output_dir = config.output_dir or Path(tempfile.mkdtemp(prefix="ais-plain-"))
    try:
        write_outputs(result, output_dir)
        summary = summarize(result.tallies, len(lines), output_dir)
        summary["seconds"] = round(time.monotonic() - started, 3)
        if config.output_dir is not None:
            (output_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    finally:
        if config.output_dir is None:
            shutil.rmtree(output_dir, ignore_errors=True)
    print(outputs.format_summary(summary))
    return 0


if __name__ == "__main__":
    sys.exit(guarded(main, sys.argv[1:]))
