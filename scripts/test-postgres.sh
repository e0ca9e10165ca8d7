#!/usr/bin/env bash
# A private PostgreSQL 15 for the store tests: a fresh data dir in a temp
# dir, listening only on 127.0.0.1 on a free port, trust auth on loopback.
#
#   eval "$(scripts/test-postgres.sh start)"   # exports BERTH_TEST_PG_URL and BERTH_TEST_PG_DIR
#   scripts/test-postgres.sh stop [DIR]        # DIR defaults to $BERTH_TEST_PG_DIR
#
# `start` prints only the export lines on stdout (progress goes to stderr).
# initdb refuses to run as root, so as root the server runs as the
# `postgres` OS user (Debian's postgresql package creates it).
set -euo pipefail

bin=${BERTH_PG_BIN:-/usr/lib/postgresql/15/bin}

log() { echo "test-postgres: $*" >&2; }

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

start() {
  [ -x "$bin/initdb" ] || {
    log "no PostgreSQL 15 in $bin (scripts/install-deps.sh installs it)"
    exit 1
  }
  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/berth-pg.XXXXXX")
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; fi
  # The server's user may not be able to enter the caller's directory.
  cd "$dir"
  as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust --no-sync -E UTF8 \
    --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
    log "initdb failed:"
    cat "$dir/initdb.log" >&2
    rm -rf "$dir"
    exit 1
  }
  # A port picked now may be taken before the server binds it: try a few.
  local port attempt
  for attempt in 1 2 3 4 5; do
    port=$(free_port)
    if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300" \
      start >/dev/null 2>&1; then
      log "PostgreSQL listening on 127.0.0.1:$port (data in $dir)"
      echo "export BERTH_TEST_PG_URL=postgresql://postgres@127.0.0.1:$port/postgres"
      echo "export BERTH_TEST_PG_DIR=$dir"
      return 0
    fi
    log "start on port $port failed (attempt $attempt)"
  done
  cat "$dir/server.log" >&2 || true
  rm -rf "$dir"
  exit 1
}

stop() {
  local dir=${1:-${BERTH_TEST_PG_DIR:-}}
  [ -n "$dir" ] || {
    log "stop: no dir given and BERTH_TEST_PG_DIR unset"
    exit 1
  }
  case "$dir" in
    */berth-pg.*) ;;
    *)
      log "stop: $dir is not a test server dir"
      exit 1
      ;;
  esac
  local pid_file="$dir/data/postmaster.pid"
  if [ -f "$pid_file" ]; then
    local pid
    pid=$(head -n 1 "$pid_file")
    # SIGINT is PostgreSQL's fast shutdown: roll back sessions, then exit.
    if kill -INT "$pid" 2>/dev/null; then
      for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
    fi
    log "stopped PostgreSQL (pid $pid)"
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  start) start ;;
  stop) stop "${2:-}" ;;
  *)
    echo "usage: $0 start | stop [DIR]" >&2
    exit 2
    ;;
esac
