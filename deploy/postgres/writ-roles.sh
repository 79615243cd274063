#!/bin/sh
# Writ's Postgres roles for a Postgres Writ runs itself (docker-compose's pg-roles, Kubernetes'
# writ-pg-roles Job): runs in the writ/postgres image, idempotently, on every start.
#   - writ_services: NOLOGIN group; every Writ service role is a member.
#   - writ_projection: LOGIN, scram-sha-256 password from the projection's secret, no superuser /
#     CREATEDB / CREATEROLE / REPLICATION / BYPASSRLS; CONNECT and CREATE (its rebuild's sibling
#     schemas) on the database; owner of the schema WRIT_PG_SCHEMA (default writ).
#   - when WRIT_PG_SECRETS_OUT is set, a copy of the projection's password there, 0400, owned by
#     WRIT_PG_SECRETS_UID (10002, the Writ images' user), for a container that cannot read the original.
# Re-running it with a new secret rotates the password (docs/security.md, "Postgres").
# Environment: PGHOST (postgres), PGDATABASE (writ), WRIT_PG_SCHEMA (writ),
#   WRIT_PG_ADMIN_PASSWORD_FILE, WRIT_PG_PROJECTION_PASSWORD_FILE, WRIT_PG_SECRETS_OUT (unset), WRIT_PG_SECRETS_UID (10002).
set -eu
: "${PGHOST:=postgres}" "${PGDATABASE:=writ}" "${WRIT_PG_SCHEMA:=writ}"
: "${WRIT_PG_ADMIN_PASSWORD_FILE:=/run/secrets/writ_pg_admin}" "${WRIT_PG_PROJECTION_PASSWORD_FILE:=/run/secrets/writ_pg_projection}"
export PGHOST PGDATABASE PGUSER=postgres

# The admin password through a 0600 passfile, never an argument or a variable other processes see.
umask 077
PGPASSFILE=$(mktemp)
export PGPASSFILE
trap 'rm -f "$PGPASSFILE"' EXIT
printf '*:*:*:postgres:%s\n' "$(head -n 1 "$WRIT_PG_ADMIN_PASSWORD_FILE" | sed 's/[\\:]/\\&/g')" >"$PGPASSFILE"

for _ in $(seq 1 60); do pg_isready -q && break; sleep 1; done

# psql reads the projection's password itself (\set with a backtick command): it is in no argument.
export WRIT_PG_PROJECTION_PASSWORD_FILE
psql -v ON_ERROR_STOP=1 -q -v schema="$WRIT_PG_SCHEMA" -v db="$PGDATABASE" <<'SQL'
\set pw `head -n 1 "$WRIT_PG_PROJECTION_PASSWORD_FILE"`
SET password_encryption = 'scram-sha-256';
SET client_min_messages = warning;
SELECT 'CREATE ROLE writ_services NOLOGIN' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'writ_services')\gexec
SELECT 'CREATE ROLE writ_projection LOGIN' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'writ_projection')\gexec
ALTER ROLE writ_projection LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'pw';
GRANT writ_services TO writ_projection;
GRANT CONNECT, CREATE ON DATABASE :"db" TO writ_projection;
CREATE SCHEMA IF NOT EXISTS :"schema" AUTHORIZATION writ_projection;
ALTER SCHEMA :"schema" OWNER TO writ_projection;
SQL

# A copy of the projection's password for a container that cannot read the original (optional; the
# Compose file mounts the file `writ init` wrote, owned by the images' user, directly).
if [ -n "${WRIT_PG_SECRETS_OUT:-}" ]; then
  mkdir -p "$WRIT_PG_SECRETS_OUT"
  install -m 0400 -o "${WRIT_PG_SECRETS_UID:-10002}" -g "${WRIT_PG_SECRETS_UID:-10002}" "$WRIT_PG_PROJECTION_PASSWORD_FILE" "$WRIT_PG_SECRETS_OUT/projection.password"
fi
echo "writ-roles: writ_projection (scram-sha-256) owns schema $WRIT_PG_SCHEMA in $PGDATABASE"
