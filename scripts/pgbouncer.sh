#!/usr/bin/env bash
# A PgBouncer of its own in transaction mode, for the tests, the benchmark and .ci/run: its config,
# log and pid file in DIR, listening on 127.0.0.1:PORT, reaching every database of the PostgreSQL
# server at 127.0.0.1:5432 by its name (the `*` entry), so that test databases created at run time
# are reachable through it. Never the system's service.
#   scripts/pgbouncer.sh start DIR PORT   starts it in the background and waits until it answers
#   scripts/pgbouncer.sh stop DIR         stops it
set -euo pipefail
command="${1:?start or stop}"
dir="${2:?directory}"
case "$command" in
  start)
    port="${3:?port}"
    mkdir -p "$dir"
    # trust as on the PostgreSQL server behind it; PgBouncer still wants the user in its auth file.
    printf '"postgres" ""\n' >"$dir/userlist.txt"
    cat >"$dir/pgbouncer.ini" <<INI
[databases]
* = host=127.0.0.1 port=${PGBOUNCER_SERVER_PORT:-5432}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
; Enough for the test files running side by side, each with a pool of 20 and child processes.
max_client_conn = 2000
default_pool_size = 40
; Tests drop their database WITH (FORCE) at the end: idle server connections go at once.
server_idle_timeout = 10
ignore_startup_parameters = extra_float_digits
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
    # PgBouncer refuses to run as root: as root it switches to the postgres user, which must read DIR.
    user=()
    if [ "$(id -u)" = 0 ]; then
      user=(-u postgres)
      chown -R postgres "$dir"
    fi
    pgbouncer -d "${user[@]}" "$dir/pgbouncer.ini"
    for _ in $(seq 1 50); do
      pg_isready -q -h 127.0.0.1 -p "$port" -U postgres -d postgres && exit 0
      sleep 0.1
    done
    echo "PgBouncer did not start on port $port:" >&2
    cat "$dir/pgbouncer.log" >&2 || true
    exit 1
    ;;
  stop)
    [ -f "$dir/pgbouncer.pid" ] && kill "$(cat "$dir/pgbouncer.pid")" 2>/dev/null || true
    ;;
  *)
    echo "usage: $0 start DIR PORT | stop DIR" >&2
    exit 2
    ;;
esac
