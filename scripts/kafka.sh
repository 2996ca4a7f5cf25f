#!/usr/bin/env bash
# One Apache Kafka broker in KRaft mode (combined broker and controller) on 127.0.0.1, from the
# Maven Central jars that connectors/pom.xml pins (fetched into the jar cache on first use):
#   scripts/kafka.sh start | stop | status | clean
# Settings (environment): KAFKA_PORT (9092), KAFKA_CONTROLLER_PORT (9093),
# KAFKA_DIR (build/kafka: config, data and the broker's log), KAFKA_SASL_USERS ("user:password ..."
# turns the client listener into SASL_PLAINTEXT with the PLAIN mechanism and these users).
# Auto-creation of topics is off: the job fails clearly on a missing topic instead of inventing
# one; create topics with the replay tool (ais-pipeline replay), which creates its own.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
port=${KAFKA_PORT:-9092}
controller_port=${KAFKA_CONTROLLER_PORT:-9093}
dir=${KAFKA_DIR:-$root/build/kafka}
py=${PYTHON:-$root/.venv/bin/python}
pidfile=$dir/broker.pid

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

start() {
  if running; then echo "kafka already running (pid $(cat "$pidfile")) on 127.0.0.1:$port"; return; fi
  local jars
  jars=$("$py" -m ais_pipeline.resources jars kafka-broker)
  mkdir -p "$dir"
  local protocol=PLAINTEXT
  if [ -n "${KAFKA_SASL_USERS:-}" ]; then protocol=SASL_PLAINTEXT; fi
  cat >"$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller_port
listeners=$protocol://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=$protocol://127.0.0.1:$port
controller.listener.names=CONTROLLER
listener.security.protocol.map=$protocol:$protocol,CONTROLLER:PLAINTEXT
inter.broker.listener.name=$protocol
log.dirs=$dir/data
num.partitions=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
transaction.max.timeout.ms=900000
PROPS
  if [ -n "${KAFKA_SASL_USERS:-}" ]; then
    local users="" pair
    for pair in $KAFKA_SASL_USERS; do users="$users user_${pair%%:*}=\"${pair#*:}\""; done
    local broker_secret
    broker_secret=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
    cat >>"$dir/server.properties" <<PROPS
sasl.enabled.mechanisms=PLAIN
sasl.mechanism.inter.broker.protocol=PLAIN
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="$broker_secret" user_broker="$broker_secret"$users;
PROPS
  fi
  cat >"$dir/log4j2.properties" <<PROPS
rootLogger.level=INFO
rootLogger.appenderRef.file.ref=file
appender.file.type=File
appender.file.name=file
appender.file.fileName=$dir/broker.log
appender.file.layout.type=PatternLayout
appender.file.layout.pattern=[%d] %p %m (%c)%n
PROPS
  local java=(java -Xms256m -Xmx1g -cp "$jars/*" -Dlog4j2.configurationFile="$dir/log4j2.properties")
  if [ ! -f "$dir/data/meta.properties" ]; then
    local cluster_id
    cluster_id=$("${java[@]}" kafka.tools.StorageTool random-uuid)
    # transaction.version=1: Flink's Kafka sink (connector 5.0.0-2.2) recovers by committing the
    # transactions of its last checkpoint again, resuming them with the producer id and epoch it
    # checkpointed. Transactions version 2 (Kafka 4's default) bumps the epoch on every commit, so
    # that second commit of an already committed transaction is fenced and logged as possible data
    # loss on every recovery (seen in tests/integration/test_faults.py), and a transaction at the
    # epoch rollover cannot be recovered at all (FLINK-40689, open). Version 1 has neither.
    "${java[@]}" kafka.tools.StorageTool format -t "$cluster_id" -c "$dir/server.properties" \
      --feature transaction.version="${KAFKA_TRANSACTION_VERSION:-1}" >/dev/null
  fi
  : >"$dir/broker.log"
  nohup "${java[@]}" kafka.Kafka "$dir/server.properties" >"$dir/broker.out" 2>&1 &
  echo $! >"$pidfile"
  for _ in $(seq 1 120); do
    if grep -q "Kafka Server started" "$dir/broker.log" 2>/dev/null; then
      echo "kafka up on 127.0.0.1:$port (pid $(cat "$pidfile"), log $dir/broker.log)"
      return
    fi
    if ! running; then echo "kafka exited; see $dir/broker.out and $dir/broker.log" >&2; tail -20 "$dir/broker.out" >&2; exit 1; fi
    sleep 0.5
  done
  echo "kafka did not start within 60 s; see $dir/broker.log" >&2
  exit 1
}

stop() {
  if ! running; then rm -f "$pidfile"; return; fi
  local pid
  pid=$(cat "$pidfile")
  kill "$pid"
  for _ in $(seq 1 60); do
    if ! kill -0 "$pid" 2>/dev/null; then rm -f "$pidfile"; echo "kafka stopped"; return; fi
    sleep 0.5
  done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$pidfile"
  echo "kafka killed after 30 s"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) if running; then echo "running (pid $(cat "$pidfile")) on 127.0.0.1:$port"; else echo "stopped"; exit 1; fi ;;
  clean) stop; rm -rf "$dir" ;;
  *) echo "usage: scripts/kafka.sh start | stop | status | clean" >&2; exit 2 ;;
esac
