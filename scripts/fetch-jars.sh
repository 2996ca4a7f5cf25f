#!/usr/bin/env bash
# Copies the Maven Central jars that connectors/pom.xml pins into build/jars/<profile>/:
#   scripts/fetch-jars.sh flink    the Kafka connector the job loads
#   scripts/fetch-jars.sh jdbc     Flink's JDBC connector and the PostgreSQL driver (--postgres)
#   scripts/fetch-jars.sh broker   Apache Kafka (KRaft) for scripts/kafka.sh
# Cached: a profile whose folder exists is not fetched again (`make clean` removes build/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
for profile in "$@"; do
  case "$profile" in
    flink) dest=$root/build/jars/flink ;;
    jdbc) dest=$root/build/jars/jdbc ;;
    broker) dest=$root/build/jars/kafka ;;
    *) echo "usage: scripts/fetch-jars.sh flink|jdbc|broker ..." >&2; exit 2 ;;
  esac
  if [ -f "$dest/.complete" ]; then continue; fi
  rm -rf "$dest"
  if ! log=$(mvn -q -B -Dstyle.color=never -f "$root/connectors/pom.xml" -P"$profile" \
    org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
    -DoutputDirectory="$dest" -DincludeScope=runtime 2>&1); then
    echo "$log" >&2
    echo "fetch-jars: Maven could not fetch the $profile jars (see above)" >&2
    exit 1
  fi
  touch "$dest/.complete"
done
