#!/usr/bin/env bash
# A throwaway PostgreSQL server for toolnexus-ts tests and benchmarks, on loopback only.
#
#   bash scripts/pg-test-server.sh [start]   start it (creating cluster and database on first use);
#                                            prints the connection string on stdout, nothing else
#   bash scripts/pg-test-server.sh stop      stop it (the data stays)
#   bash scripts/pg-test-server.sh restart   fast restart: open connections are cut, committed data stays
#   bash scripts/pg-test-server.sh status    exit 0 when it is running
#   bash scripts/pg-test-server.sh url       print the connection string
#   bash scripts/pg-test-server.sh destroy   stop it and delete the cluster
#
# Every subcommand is idempotent. Environment (all optional):
#   TOOLNEXUS_PG_DIR   where the cluster lives      (default /tmp/toolnexus-pg; never inside the repo)
#   TOOLNEXUS_PG_PORT  the loopback port            (default 54329)
#   TOOLNEXUS_PG_DB    the database to create       (default toolnexus_test)
#   TOOLNEXUS_PG_FSYNC on|off                       (default off: a test cluster need not survive a power cut,
#                                                    and a clean stop or restart flushes everything anyway)
# PostgreSQL refuses to run as root, so as root the cluster is owned by, and run as, the
# `postgres` user; as any other user it runs as that user.
set -euo pipefail

cmd="${1:-start}"
root_dir="${TOOLNEXUS_PG_DIR:-/tmp/toolnexus-pg}"
port="${TOOLNEXUS_PG_PORT:-54329}"
db="${TOOLNEXUS_PG_DB:-toolnexus_test}"
fsync="${TOOLNEXUS_PG_FSYNC:-off}"
data_dir="$root_dir/data"
socket_dir="$root_dir/socket"
log_file="$root_dir/server.log"
url="postgres://postgres@127.0.0.1:$port/$db"

log() { echo "pg-test-server: $*" >&2; }
die() { log "$*"; exit 1; }

find_bin_dir() {
  local candidate
  for candidate in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
    if [ -x "$candidate/pg_ctl" ] && [ -x "$candidate/initdb" ]; then echo "$candidate"; return 0; fi
  done
  return 1
}

bin_dir="$(find_bin_dir || true)"
ensure_binaries() {
  [ -n "$bin_dir" ] && return 0
  [ "$(id -u)" = 0 ] || die "PostgreSQL server binaries not found and not root: install postgresql-15 (apt-get install postgresql-15)"
  log "installing postgresql-15 with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q postgresql-15 >&2 || { apt-get update -q >&2 && apt-get install -y -q postgresql-15 >&2; }
  bin_dir="$(find_bin_dir)" || die "postgresql-15 installed but no pg_ctl/initdb under /usr/lib/postgresql"
}

# Runs a PostgreSQL binary as the cluster's owner.
# The lock descriptor (9) is closed for it, or the server would inherit and hold the lock.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@" 9>&-
  else
    "$@" 9>&-
  fi
}

is_running() {
  [ -n "$bin_dir" ] && [ -f "$data_dir/PG_VERSION" ] && as_owner "$bin_dir/pg_ctl" -D "$data_dir" status >/dev/null 2>&1
}

init_cluster() {
  [ -f "$data_dir/PG_VERSION" ] && return 0
  log "creating cluster in $data_dir"
  mkdir -p "$root_dir"
  rm -rf "$data_dir" "$socket_dir"
  mkdir -p "$data_dir" "$socket_dir"
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || die "no 'postgres' user to own the cluster (install postgresql-15 or create the user)"
    chown postgres: "$root_dir" "$data_dir" "$socket_dir"
  fi
  chmod 700 "$data_dir"
  as_owner "$bin_dir/initdb" -D "$data_dir" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 --no-sync >&2 \
    || as_owner "$bin_dir/initdb" -D "$data_dir" -U postgres --auth=trust --encoding=UTF8 --locale=C --no-sync >&2
  # Settings live in postgresql.auto.conf so the generated postgresql.conf stays untouched.
  cat >"$data_dir/postgresql.auto.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$socket_dir'
max_connections = 200
fsync = $fsync
full_page_writes = $fsync
logging_collector = off
CONF
  # Trust only loopback: the server listens nowhere else.
  cat >"$data_dir/pg_hba.conf" <<HBA
local all all trust
host  all all 127.0.0.1/32 trust
HBA
  [ "$(id -u)" = 0 ] && chown postgres: "$data_dir/postgresql.auto.conf" "$data_dir/pg_hba.conf"
  return 0
}

start_server() {
  ensure_binaries
  init_cluster
  if ! is_running; then
    if [ "$(id -u)" = 0 ]; then touch "$log_file" && chown postgres: "$log_file"; fi
    log "starting on 127.0.0.1:$port (log: $log_file)"
    as_owner "$bin_dir/pg_ctl" -D "$data_dir" -l "$log_file" -w -t 60 start >&2 \
      || { tail -n 20 "$log_file" >&2 || true; die "server did not start (is port $port taken?)"; }
  fi
  ensure_database
}

ensure_database() {
  local psql=("$bin_dir/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1)
  local exists
  exists="$("${psql[@]}" -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'")"
  if [ "$exists" != 1 ]; then
    log "creating database $db"
    "${psql[@]}" -c "CREATE DATABASE \"$db\"" >&2
  fi
}

# Parallel test files may all ask for the server at once: one of them creates it, the others wait.
if [ "$cmd" != url ] && command -v flock >/dev/null 2>&1; then
  mkdir -p "$(dirname "$root_dir")"
  exec 9>"$root_dir.lock"
  flock -w 120 9 || die "timed out waiting for another pg-test-server.sh on $root_dir"
fi

case "$cmd" in
  start)
    start_server
    echo "$url"
    ;;
  stop)
    if is_running; then as_owner "$bin_dir/pg_ctl" -D "$data_dir" -m fast -w stop >&2; fi
    ;;
  restart)
    if is_running; then
      as_owner "$bin_dir/pg_ctl" -D "$data_dir" -l "$log_file" -m fast -w -t 60 restart >&2
      ensure_database
    else
      start_server
    fi
    echo "$url"
    ;;
  status)
    is_running
    ;;
  url)
    echo "$url"
    ;;
  destroy)
    if is_running; then as_owner "$bin_dir/pg_ctl" -D "$data_dir" -m immediate -w stop >&2; fi
    rm -rf "$root_dir" "$root_dir.lock"
    ;;
  *)
    die "unknown subcommand '$cmd' (start | stop | restart | status | url | destroy)"
    ;;
esac
