#!/usr/bin/env bash
# Compiles the job's Java helpers against the PyFlink package's own jars:
#   scripts/build-java.sh          build/ais-flink-helpers.jar (line batches, stamped watermarks, line splitting)
#   scripts/build-java.sh kafka    build/ais-kafka-helpers.jar (Kafka record (de)serializers), also
#                                  against the Kafka connector jar (fetched by scripts/fetch-jars.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-$root/.venv/bin/python}
flink_lib=$("$py" -c 'import os, pyflink; print(os.path.join(os.path.dirname(pyflink.__file__), "lib"))')
what=${1:-core}
case "$what" in
  core) src=$root/java/src; cp="$flink_lib/*"; jar=$root/build/ais-flink-helpers.jar ;;
  kafka)
    bash "$root/scripts/fetch-jars.sh" flink
    src=$root/java/kafka/src; cp="$flink_lib/*:$root/build/jars/flink/*"; jar=$root/build/ais-kafka-helpers.jar ;;
  *) echo "usage: scripts/build-java.sh [kafka]" >&2; exit 2 ;;
esac
classes=$root/build/java/$what
rm -rf "$classes" && mkdir -p "$classes"
javac -nowarn --release 11 -cp "$cp" -d "$classes" $(find "$src" -name '*.java')
jar cf "$jar" -C "$classes" .
echo "built $jar"
