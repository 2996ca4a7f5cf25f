#!/usr/bin/env bash
# Runs a command with a temporary folder of its own, removed when it ends: TMPDIR for Python and
# the tools it starts, and java.io.tmpdir (through JVM_ARGS, which PyFlink's gateway and Flink's
# daemons read) for every JVM. A JVM a test kills leaves its Flink files behind (the RPC jar it
# unpacked, its mini-cluster's and TaskManager's folders): tens of MB each, gone with the folder.
# The run's pytest folders go too. `make test` and `make bench` run through it.
set -uo pipefail
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ais-scratch.XXXXXX") || exit 1
chmod 755 "$scratch"  # the PostgreSQL tests' server runs as the user postgres
trap 'rm -rf "$scratch"' EXIT
export TMPDIR=$scratch
export JVM_ARGS="${JVM_ARGS:+$JVM_ARGS }-Djava.io.tmpdir=$scratch"
"$@"
