#!/usr/bin/env bash
# moto's server (moto[server], the project's test extra) on 127.0.0.1: Kinesis and DynamoDB as AWS
# serves them, for the tests and to try the Kinesis source and the DynamoDB sink without AWS
# (docs/kinesis.md). It runs scripts/moto_server.py: moto with Kinesis's own resharding.
#   scripts/moto.sh start | stop | status
# Settings (environment): MOTO_PORT (5000), MOTO_DIR (build/moto: its pid and log), MOTO_FAULTS
# (a JSON file of faults to inject, see the module).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
port=${MOTO_PORT:-5000}
dir=${MOTO_DIR:-$root/build/moto}
py=${PYTHON:-$root/.venv/bin/python}
pidfile=$dir/server.pid

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

start() {
  if running; then echo "moto already running (pid $(cat "$pidfile")) on 127.0.0.1:$port"; return; fi
  mkdir -p "$dir"
  : >"$dir/server.log"
  # its own session: Ctrl-C in the shell that started it does not stop it
  setsid "$py" "$root/scripts/moto_server.py" -H 127.0.0.1 -p "$port" >>"$dir/server.log" 2>&1 </dev/null &
  echo $! >"$pidfile"
  for _ in $(seq 1 100); do
    if "$py" - "$port" <<'PY' 2>/dev/null; then
import sys, urllib.request
urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/moto-api/", timeout=1).read()
PY
      echo "moto up on http://127.0.0.1:$port (log: $dir/server.log)"
      return
    fi
    if ! running; then echo "moto exited; its log:" >&2; tail -20 "$dir/server.log" >&2; exit 1; fi
    sleep 0.2
  done
  echo "moto did not answer on 127.0.0.1:$port within 20 s (log: $dir/server.log)" >&2
  exit 1
}

stop() {
  if running; then
    kill "$(cat "$pidfile")"
    for _ in $(seq 1 50); do running || break; sleep 0.1; done
    if running; then kill -9 "$(cat "$pidfile")"; fi
  fi
  rm -f "$pidfile"
  echo "moto stopped"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) if running; then echo "moto running (pid $(cat "$pidfile")) on 127.0.0.1:$port"; else echo "moto not running"; exit 1; fi ;;
  *) echo "usage: scripts/moto.sh start | stop | status" >&2; exit 2 ;;
esac
