# A throwaway PostgreSQL server for the tests: initdb into a temporary folder, listen
# on a Unix socket only (no TCP), run as an unprivileged user when we are root
# (PostgreSQL refuses to run as root; CI runs as root).
#
# Sourced by scripts/test:   postgres_test_server_start   (exports HUBSCRIPT_TEST_POSTGRES,
#                            stops the server on exit)
# Run by tests that stop and restart a server of their own:
#   scripts/lib/postgres.sh start DIR | stop DIR | restart DIR
#
# The cluster has two roles: `hubscript` (trusted on the socket, owns the database
# `hubscript`) and `hubscript_pw` (password `right-password`, checked with SCRAM), for
# tests of a wrong password.

postgres_bin_dir() {
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  [ -n "$dir" ] && [ -x "$dir/initdb" ] || { echo "postgres.sh: no PostgreSQL server (apt-get install postgresql)" >&2; return 2; }
  echo "$dir"
}

# Runs a command as the server's user: `postgres` when we are root, else ourselves.
postgres_as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# postgres_server_start DIR: makes a cluster in DIR/data (once) and starts it with its
# socket in DIR. Prints nothing; the URL is postgresql:///hubscript?host=DIR&user=hubscript.
postgres_server_start() {
  local dir="$1" bin
  bin="$(postgres_bin_dir)" || return 2
  mkdir -p "$dir"
  if [ "$(id -u)" -eq 0 ]; then chown postgres "$dir"; fi
  chmod 755 "$dir"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    postgres_as_owner "$bin/initdb" -D "$dir/data" -U hubscript --auth=trust --no-locale -E UTF8 >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; return 2; }
    printf 'local all hubscript_pw scram-sha-256\nlocal all all trust\n' | postgres_as_owner tee "$dir/data/pg_hba.conf" >/dev/null
  fi
  postgres_as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
    -o "-c listen_addresses='' -c unix_socket_directories='$dir' -c fsync=off -c max_connections=200" start >/dev/null \
    || { tail -n 20 "$dir/server.log" >&2; return 2; }
  if ! "$bin/psql" -h "$dir" -U hubscript -d postgres -Atqc "SELECT 1 FROM pg_database WHERE datname = 'hubscript'" | grep -q 1; then
    "$bin/psql" -h "$dir" -U hubscript -d postgres -qc "CREATE DATABASE hubscript" \
      -c "CREATE ROLE hubscript_pw LOGIN PASSWORD 'right-password'" \
      -c "GRANT ALL ON DATABASE hubscript TO hubscript_pw" >/dev/null
  fi
}

# postgres_server_stop DIR: stops the server (fast: open sessions are ended).
postgres_server_stop() {
  local bin
  bin="$(postgres_bin_dir)" || return 2
  postgres_as_owner "$bin/pg_ctl" -D "$1/data" -m fast -w stop >/dev/null 2>&1 || true
}

# For scripts/test: a server for the whole run, stopped (and its folder removed) on exit.
postgres_test_server_start() {
  postgres_test_dir="$(mktemp -d /tmp/hubscript-pg.XXXXXX)"
  postgres_server_start "$postgres_test_dir" || { rm -rf "$postgres_test_dir"; return 2; }
  trap 'postgres_server_stop "$postgres_test_dir"; rm -rf "$postgres_test_dir"' EXIT
  export HUBSCRIPT_TEST_POSTGRES="postgresql:///hubscript?host=$postgres_test_dir&user=hubscript"
  echo "scripts/test: PostgreSQL on $postgres_test_dir (HUBSCRIPT_TEST_POSTGRES)" >&2
}

# Closes the descriptors this shell inherited beyond stdin, stdout and stderr (and
# bash's own 255), so the server it starts holds none of its caller's pipes: a test
# process waiting for a pipe to close, or for this script to end, would wait forever.
postgres_close_inherited_fds() {
  local fd
  for fd in /proc/$BASHPID/fd/*; do
    fd="${fd##*/}"
    if [ "$fd" -gt 2 ] && [ "$fd" -ne 255 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  postgres_close_inherited_fds
  case "${1:-}" in
    start) postgres_server_start "$2" ;;
    stop) postgres_server_stop "$2" ;;
    restart) postgres_server_stop "$2"; postgres_server_start "$2" ;;
    *) echo "usage: $0 start|stop|restart DIR" >&2; exit 2 ;;
  esac
fi
