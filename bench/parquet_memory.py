"""What the job's GeoParquet reader needs to read a NOAA day of NOAA's size: the reader alone
(``ais.flink.ReadLines``: every line the job's source gives, counted) in a JVM whose heap is
capped, on a generated day of 7,293,408 rows (as many as ``ais-2024-01-01.parquet``) in NOAA's
2024 schema, written as pyarrow writes it (row groups of 1,048,576 rows, snappy). It prints the
reader's peak heap and the process's peak RSS: a reader that loaded the file whole would not fit.

    python -m bench.parquet_memory [--rows 7293408] [--heap-mb 256]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ais_pipeline.resources import CHECKOUT as ROOT


def classpath() -> str:
    import pyflink

    lib = Path(pyflink.__file__).parent / "lib"
    return ":".join([str(ROOT / "udfs" / "ais_pipeline" / "jars" / "ais-flink-helpers.jar"), f"{lib}/*"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=7_293_408)
    parser.add_argument("--heap-mb", type=int, default=256)
    args = parser.parse_args()
    from bench.files import noaa_parquet_feed

    day = noaa_parquet_feed(args.rows)
    print(f"{day}: {day.stat().st_size / 1e6:.0f} MB", file=sys.stderr)
    cmd = ["java", f"-Xmx{args.heap_mb}m", "-cp", classpath(), "ais.flink.ReadLines", str(day)]
    with tempfile.TemporaryFile("w+") as out:
        java = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, text=True)
        _, status, usage = os.wait4(java.pid, 0)  # this child's own peak RSS
        out.seek(0)
        text = out.read()
    if status != 0:
        print(text[-3000:], file=sys.stderr)
        return 1
    print(f"{text.strip()}; peak RSS of the JVM {usage.ru_maxrss / 1024:.0f} MB")
    print(f"(`java -Xmx{args.heap_mb}m -cp <helper jar>:<PyFlink's lib/*> ais.flink.ReadLines {day.name}`)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
