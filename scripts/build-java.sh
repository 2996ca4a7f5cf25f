#!/usr/bin/env bash
# Compiles the job's one Java helper (per-event watermarks) against the PyFlink package's own jars.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-$root/.venv/bin/python}
flink_lib=$("$py" -c 'import os, pyflink; print(os.path.join(os.path.dirname(pyflink.__file__), "lib"))')
out=$root/build/java
rm -rf "$out/classes" && mkdir -p "$out/classes"
javac -nowarn --release 11 -cp "$flink_lib/*" -d "$out/classes" $(find "$root/java/src" -name '*.java')
jar cf "$root/build/ais-flink-helpers.jar" -C "$out/classes" .
echo "built $root/build/ais-flink-helpers.jar"
