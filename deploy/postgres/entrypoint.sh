#!/bin/bash
# The entrypoint of writ/postgres (scripts/build-images.sh): Debian's PostgreSQL 15, initialised on
# first start the way the official image does it, with what Writ requires and nothing weaker:
#   POSTGRES_PASSWORD_FILE  the superuser's password (required: there is no passwordless mode)
#   POSTGRES_USER           the superuser (default postgres)
#   POSTGRES_DB             a database made at initialisation (default: the superuser's name)
#   POSTGRES_INITDB_ARGS    more initdb arguments
#   POSTGRES_SOCKET_DIR     where the Unix socket goes (default /tmp)
#   PGDATA                  the cluster (default /var/lib/postgresql/data; an empty or missing
#                           directory is initialised, a non-empty one must be a cluster)
# Every login, on TCP and on the socket, is scram-sha-256. Then `postgres` runs as PID 1's child
# (exec: it gets the signals) with the arguments given (default: postgres).
set -euo pipefail
say() { printf '[writ-postgres] %s\n' "$*" >&2; }
die() { say "FAILED: $*"; exit 1; }

PGDATA=${PGDATA:-/var/lib/postgresql/data}
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
[ "$(id -u)" != 0 ] || die "refusing to run as root: run as the image's user writ (10002) or any non-root uid that owns $PGDATA"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  [ -n "${POSTGRES_PASSWORD_FILE:-}" ] || die "PGDATA $PGDATA is empty and POSTGRES_PASSWORD_FILE is not set: the superuser needs a password (scram-sha-256 only)"
  [ -r "$POSTGRES_PASSWORD_FILE" ] || die "POSTGRES_PASSWORD_FILE=$POSTGRES_PASSWORD_FILE is not readable by uid $(id -u)"
  [ -s "$POSTGRES_PASSWORD_FILE" ] || die "POSTGRES_PASSWORD_FILE=$POSTGRES_PASSWORD_FILE is empty"
  mkdir -p "$PGDATA" 2>/dev/null || true
  [ -w "$PGDATA" ] || die "$PGDATA is not writable by uid $(id -u) (a volume owned by root? set its owner, or fsGroup in Kubernetes)"
  if [ -n "$(ls -A "$PGDATA" 2>/dev/null | grep -v '^lost+found$' || true)" ]; then
    die "$PGDATA is not empty and holds no cluster (no PG_VERSION): not initialising over it"
  fi
  chmod 700 "$PGDATA"
  say "initialising $PGDATA (superuser $user, scram-sha-256)"
  # shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a list of arguments
  initdb -D "$PGDATA" --username="$user" --pwfile="$POSTGRES_PASSWORD_FILE" \
    --auth-local=scram-sha-256 --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 \
    ${POSTGRES_INITDB_ARGS:-} >/dev/null
  # Reachable from the other containers / pods, still only with a scram-sha-256 password.
  printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
  printf "listen_addresses = '*'\npassword_encryption = 'scram-sha-256'\n" >>"$PGDATA/postgresql.conf"
  if [ "$db" != postgres ]; then
    say "creating database $db"
    printf 'CREATE DATABASE "%s";\n' "${db//\"/\"\"}" | postgres --single -D "$PGDATA" postgres >/dev/null
  fi
  say "initialised"
fi

if [ "${1:-postgres}" = postgres ]; then
  shift || true
  # The socket in /tmp: /run is root's and empty in a container; clients here connect over TCP.
  exec postgres -D "$PGDATA" -k "${POSTGRES_SOCKET_DIR:-/tmp}" "$@"
fi
exec "$@"
