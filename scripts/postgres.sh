#!/usr/bin/env bash
# A PostgreSQL server of the project's own, for trying the PostgreSQL outputs and for the tests:
#   scripts/postgres.sh start | stop | status | url
# Debian's postgresql is installed with apt-get when initdb is missing, and Debian's PostGIS for
# its major version when the extension is missing (as root or with sudo; apt may upgrade packages
# they depend on; PG_NO_POSTGIS=1 skips PostGIS). The server gets a scratch data directory (PG_DIR,
# build/postgres), listens on 127.0.0.1 only (PG_PORT, 55432), and takes password logins
# (scram-sha-256) of one user (PG_USER "ais", password PG_PASSWORD or a generated one kept in
# $PG_DIR/password, mode 600) on one database (PG_DATABASE "ais"). `url` prints the connection URL
# without the password; the password is in the file, or PGPASSWORD. PostgreSQL refuses to run as
# root: as root, the server runs as the system user `postgres` that Debian's package creates.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PG_DIR:-$root/build/postgres}
port=${PG_PORT:-55432}
user=${PG_USER:-ais}
db=${PG_DATABASE:-ais}
data=$dir/data

bin_dir() {
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
  if [ -z "$found" ] && command -v initdb >/dev/null 2>&1; then found=$(dirname "$(command -v initdb)"); fi
  echo "$found"
}

apt_install() {
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "$@" >&2
}

install_if_missing() {
  if [ -z "$(bin_dir)" ]; then
    echo "postgres.sh: installing Debian's postgresql with apt-get (apt may also upgrade packages it depends on)" >&2
    apt_install postgresql
    # Debian's package starts a cluster of its own on 5432; this project does not use it.
  fi
  # PostGIS for the server's major version (the job gives its tables geometry columns with it).
  local major
  major=$(basename "$(dirname "$(bin_dir)")")
  if [ ! -f "/usr/share/postgresql/$major/extension/postgis.control" ] && [ -z "${PG_NO_POSTGIS:-}" ] \
    && [ ! -f "$dir/no-postgis" ]; then
    echo "postgres.sh: installing Debian's PostGIS for PostgreSQL $major with apt-get" >&2
    if ! apt_install "postgresql-$major-postgis-3"; then
      echo "postgres.sh: no PostGIS for PostgreSQL $major: the tables get no geometry columns" \
        "(not tried again while $dir/no-postgis exists)" >&2
      mkdir -p "$dir" && touch "$dir/no-postgis"
    fi
  fi
}

as_server() {  # run a server command as a user PostgreSQL accepts
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

running() { [ -f "$data/postmaster.pid" ] && as_server "$(bin_dir)/pg_ctl" -D "$data" status >/dev/null 2>&1; }

case "${1:-}" in
  start)
    install_if_missing
    bin=$(bin_dir)
    if running; then echo "postgres already running on 127.0.0.1:$port"; exit 0; fi
    mkdir -p "$dir"
    if [ ! -f "$dir/password" ]; then
      (umask 077; printf '%s' "${PG_PASSWORD:-$(head -c 18 /dev/urandom | base64 | tr -d '/+=')}" > "$dir/password")
    fi
    if [ ! -f "$data/PG_VERSION" ]; then
      rm -rf "$data"
      mkdir -p "$data"
      if [ "$(id -u)" = 0 ]; then
        chown -R postgres "$data"
        runuser -u postgres -- test -w "$data" \
          || { echo "postgres.sh: the user postgres cannot reach $data (PG_DIR must be traversable)" >&2; exit 1; }
      fi
      pwfile=$dir/.pwfile  # a copy the server's user can read, for initdb only
      (umask 077; cp "$dir/password" "$pwfile")
      if [ "$(id -u)" = 0 ]; then chown postgres "$pwfile"; fi
      as_server "$bin/initdb" -D "$data" -U "$user" --pwfile="$pwfile" --auth=scram-sha-256 \
        --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; rm -f "$pwfile"; exit 1; }
      rm -f "$pwfile"
    fi
    if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
    as_server "$bin/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $data" start >/dev/null
    if ! PGPASSWORD=$(cat "$dir/password") "$bin/psql" -h 127.0.0.1 -p "$port" -U "$user" -d postgres -tAc \
      "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1; then
      PGPASSWORD=$(cat "$dir/password") "$bin/createdb" -h 127.0.0.1 -p "$port" -U "$user" "$db"
    fi
    echo "postgres up: postgresql://$user@127.0.0.1:$port/$db (password in $dir/password)"
    ;;
  stop)
    if running; then as_server "$(bin_dir)/pg_ctl" -D "$data" -m fast -w stop >/dev/null; fi
    ;;
  status)
    if running; then echo "running on 127.0.0.1:$port"; else echo "not running"; exit 1; fi
    ;;
  url)
    echo "postgresql://$user@127.0.0.1:$port/$db"
    ;;
  *)
    echo "usage: scripts/postgres.sh start | stop | status | url" >&2
    exit 2
    ;;
esac
