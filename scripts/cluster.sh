#!/usr/bin/env bash
# A standalone Flink cluster from the PyFlink package's own bin/ scripts, configured by flink-conf/.
#   scripts/cluster.sh start | stop | submit [job flags...] | add-taskmanager | kill-taskmanager
# submit passes FLINK_RUN_ARGS to `flink run` (for example "-s <savepoint> -p 2"); kill-taskmanager
# kills every TaskManager with SIGKILL (fault injection), add-taskmanager starts one more.
# Logs go to log/flink/. Thread mode embeds the venv's Python in the TaskManager: the daemons get
# PYTHONPATH (the venv's site-packages and this project) from here, and flink-python's jar goes to
# lib/ (without it a TaskManager's second job failed with NoSuchFieldException: loadedLibraryNames).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-$root/.venv/bin/python}
flink_home=$("$py" -c 'import os, pyflink; print(os.path.dirname(pyflink.__file__))')
site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
export FLINK_CONF_DIR=$root/flink-conf
export FLINK_LOG_DIR=${FLINK_LOG_DIR:-$root/log/flink}
export PYTHONPATH=$root:$site${PYTHONPATH:+:$PYTHONPATH}
mkdir -p "$FLINK_LOG_DIR"

rest_url() {
  "$py" - <<'PY'
import yaml, os
conf = yaml.safe_load(open(os.path.join(os.environ["FLINK_CONF_DIR"], "config.yaml")))
print(f"http://{conf['rest']['address']}:{conf['rest']['port']}")
PY
}

case "${1:-}" in
  start)
    cp -n "$flink_home"/opt/flink-python-*.jar "$flink_home/lib/" 2>/dev/null || true
    bash "$flink_home/bin/start-cluster.sh"
    url=$(rest_url)
    for _ in $(seq 1 60); do
      if curl -fsS "$url/taskmanagers" 2>/dev/null | grep -q '"taskmanagers":\[{'; then
        echo "cluster up: $url"
        exit 0
      fi
      sleep 1
    done
    echo "cluster did not come up; see $FLINK_LOG_DIR" >&2
    exit 1
    ;;
  stop)
    bash "$flink_home/bin/stop-cluster.sh"
    bash "$flink_home/bin/taskmanager.sh" stop-all >/dev/null 2>&1 || true  # any added ones
    ;;
  submit)
    shift
    test -f "$root/build/java/ais-flink-helpers.jar" || { echo "build/java/ais-flink-helpers.jar is missing: run make setup" >&2; exit 2; }
    # shellcheck disable=SC2086
    exec "$flink_home/bin/flink" run ${FLINK_RUN_ARGS:-} -py "$root/ais_pipeline/flink/job.py" --pyFiles "$root/ais_pipeline" \
      -pyexec "$py" -pyclientexec "$py" "$@"
    ;;
  add-taskmanager)
    bash "$flink_home/bin/taskmanager.sh" start
    ;;
  kill-taskmanager)
    pkill -9 -f 'org.apache.flink.runtime.taskexecutor.TaskManagerRunner' && echo "killed" || echo "no TaskManager"
    ;;
  *)
    echo "usage: scripts/cluster.sh start | stop | submit [job flags...] | add-taskmanager | kill-taskmanager" >&2
    exit 2
    ;;
esac
