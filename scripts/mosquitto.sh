#!/usr/bin/env bash
# One MQTT broker (Debian's mosquitto) on 127.0.0.1, for the mqtt:// inputs and their tests:
#   scripts/mosquitto.sh start | stop | status
# mosquitto is installed with apt-get when missing (as root or with sudo). Settings (environment):
# MQTT_PORT (1883), MQTT_DIR (build/mosquitto: config, log, pid), MQTT_USERS ("user:password ..."
# turns anonymous access off and admits these users). Persistent sessions keep up to 1,000,000
# QoS 1 messages each while their client is away (mosquitto's default is 1,000).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
port=${MQTT_PORT:-1883}
dir=${MQTT_DIR:-$root/build/mosquitto}
pidfile=$dir/mosquitto.pid

binary() { command -v mosquitto 2>/dev/null || { [ -x /usr/sbin/mosquitto ] && echo /usr/sbin/mosquitto; } || true; }

install_if_missing() {
  if [ -n "$(binary)" ]; then return; fi
  echo "mosquitto.sh: installing Debian's mosquitto with apt-get" >&2
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q mosquitto >&2
  # Debian's package would start a broker of its own under systemd; this project does not use it.
}

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

start() {
  install_if_missing
  if running; then echo "mosquitto already running (pid $(cat "$pidfile")) on 127.0.0.1:$port"; return; fi
  mkdir -p "$dir"
  cat >"$dir/mosquitto.conf" <<CONF
listener $port 127.0.0.1
pid_file $pidfile
persistence false
log_dest file $dir/mosquitto.log
log_type error
log_type warning
log_type notice
connection_messages true
max_queued_messages 1000000
max_inflight_messages 100
user $(id -un)
CONF
  if [ -n "${MQTT_USERS:-}" ]; then
    : >"$dir/passwords"
    chmod 600 "$dir/passwords"
    local pair
    for pair in $MQTT_USERS; do mosquitto_passwd -b "$dir/passwords" "${pair%%:*}" "${pair#*:}"; done
    printf 'allow_anonymous false\npassword_file %s\n' "$dir/passwords" >>"$dir/mosquitto.conf"
  else
    echo "allow_anonymous true" >>"$dir/mosquitto.conf"
  fi
  "$(binary)" -c "$dir/mosquitto.conf" -d
  for _ in $(seq 1 50); do
    if running && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "mosquitto running (pid $(cat "$pidfile")) on 127.0.0.1:$port"
      return
    fi
    sleep 0.2
  done
  echo "mosquitto did not start; its log: $dir/mosquitto.log" >&2
  tail -20 "$dir/mosquitto.log" >&2 || true
  exit 1
}

stop() {
  if running; then
    kill "$(cat "$pidfile")"
    for _ in $(seq 1 50); do running || break; sleep 0.1; done
  fi
  rm -f "$pidfile"
  echo "mosquitto stopped"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) if running; then echo "running on 127.0.0.1:$port"; else echo "stopped"; exit 1; fi ;;
  *) echo "usage: $0 start | stop | status" >&2; exit 2 ;;
esac
