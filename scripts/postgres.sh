#!/usr/bin/env bash
# A throw-away PostgreSQL cluster for the tests.
#
#   scripts/postgres.sh start DIR   # initdb + start in DIR; prints the admin URL
#   scripts/postgres.sh stop DIR    # stop it and delete DIR
#
# DIR must not exist yet, and its parent must be reachable by the cluster's user (a fresh
# name directly under /tmp is).
#
# The cluster listens on 127.0.0.1 on a free port (or $GRACE_PG_PORT) and keeps its Unix
# socket inside DIR, so it never meets a system PostgreSQL or another test run. Trust
# authentication, no fsync: test data only. initdb refuses to run as root, so as root the
# cluster runs as the `postgres` user (Debian's package creates it) or else `nobody`.
set -euo pipefail

usage() {
    echo "usage: $0 start|stop DIR" >&2
    exit 2
}
[ $# -eq 2 ] || usage
action=$1
dir=$2

pg_bin() {
    local name=$1 candidate
    for candidate in /usr/lib/postgresql/*/bin/"$name"; do
        [ -x "$candidate" ] && {
            echo "$candidate"
            return 0
        }
    done
    command -v "$name" && return 0
    echo "error: PostgreSQL's $name not found (apt-get install postgresql)" >&2
    return 1
}

# Run a command as the cluster's owner (ourselves unless we are root).
as_owner() {
    if [ "$(id -u)" -ne 0 ]; then
        "$@"
    else
        runuser -u "$(owner)" -- "$@"
    fi
}

owner() {
    if [ "$(id -u)" -ne 0 ]; then
        id -un
    elif getent passwd postgres >/dev/null; then
        echo postgres
    else
        echo nobody
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
    local initdb pg_ctl port data
    initdb=$(pg_bin initdb)
    pg_ctl=$(pg_bin pg_ctl)
    mkdir "$dir"
    dir=$(cd "$dir" && pwd)
    data="$dir/data"
    if [ "$(id -u)" -eq 0 ]; then
        chown "$(owner)" "$dir"
        chmod 700 "$dir"
        as_owner test -w "$dir" || {
            echo "error: $(owner) cannot reach $dir; use a directory under /tmp" >&2
            rm -rf "$dir"
            return 1
        }
    fi
    as_owner "$initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 \
        >"$dir/initdb.log" 2>&1 || {
        cat "$dir/initdb.log" >&2
        return 1
    }
    port=${GRACE_PG_PORT:-$(free_port)}
    # Room for many tests at once (each engine pools up to 15 connections).
    as_owner "$pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 start -o \
        "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=400 \
         -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
         -c shared_buffers=32MB" >/dev/null || {
        cat "$dir/server.log" >&2
        return 1
    }
    echo "$port" >"$dir/port"
    echo "postgresql+asyncpg://postgres@127.0.0.1:$port/postgres"
}

stop() {
    local pg_ctl
    [ -d "$dir/data" ] || return 0
    pg_ctl=$(pg_bin pg_ctl)
    as_owner "$pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}

case "$action" in
start) start ;;
stop) stop ;;
*) usage ;;
esac
