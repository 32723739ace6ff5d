#!/usr/bin/env bash
# A private PostgreSQL primary and a streaming replica of it, for the tests and .ci/run: both under
# DIR, listening on 127.0.0.1 only, trust authentication (loopback, throwaway data). The primary's
# own pg_hba.conf lets the replica connect for replication; the replica is a pg_basebackup -R of it
# (standby.signal and primary_conninfo written by pg_basebackup), applying WAL after
# APPLY_DELAY (recovery_min_apply_delay, e.g. 2s; default 0). Never the system's cluster.
#   scripts/replica.sh start DIR PRIMARY_PORT REPLICA_PORT [APPLY_DELAY]
#   scripts/replica.sh stop-replica DIR     stops the replica only (immediate: as a crash would)
#   scripts/replica.sh stop DIR             stops both (DIR is left for the caller to remove)
# PostgreSQL refuses to run as root: as root every server command runs as the postgres user,
# which owns DIR. The binaries: PG_BIN, else the newest /usr/lib/postgresql/*/bin.
set -euo pipefail
command="${1:?start, stop-replica or stop}"
dir="${2:?directory}"
bin="${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}"
[ -x "$bin/initdb" ] || { echo "no PostgreSQL binaries (initdb) in '$bin'; set PG_BIN" >&2; exit 3; }

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

ctl() { as_owner "$bin/pg_ctl" -D "$1" -l "$1.log" -w -t 30 "${@:2}" >/dev/null; }

case "$command" in
  start)
    primary_port="${3:?primary port}"
    replica_port="${4:?replica port}"
    delay="${5:-0}"
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    as_owner "$bin/initdb" -D "$dir/primary" -U postgres --auth=trust --no-sync -E UTF8 >/dev/null
    cat >>"$dir/primary/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $primary_port
unix_socket_directories = '$dir'
wal_level = replica
max_wal_senders = 4
fsync = off
CONF
    printf 'host replication postgres 127.0.0.1/32 trust\n' >>"$dir/primary/pg_hba.conf"
    ctl "$dir/primary" start
    as_owner "$bin/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U postgres -D "$dir/replica" -R -X stream --no-sync
    cat >>"$dir/replica/postgresql.conf" <<CONF
port = $replica_port
recovery_min_apply_delay = '$delay'
hot_standby = on
CONF
    ctl "$dir/replica" start
    ;;
  stop-replica)
    [ -f "$dir/replica/postmaster.pid" ] && ctl "$dir/replica" stop -m immediate || true
    ;;
  stop)
    [ -f "$dir/replica/postmaster.pid" ] && ctl "$dir/replica" stop -m immediate || true
    [ -f "$dir/primary/postmaster.pid" ] && ctl "$dir/primary" stop -m fast || true
    ;;
  *)
    echo "usage: $0 start DIR PRIMARY_PORT REPLICA_PORT [APPLY_DELAY] | stop-replica DIR | stop DIR" >&2
    exit 2
    ;;
esac
