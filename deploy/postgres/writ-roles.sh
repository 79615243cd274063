#!/bin/sh
# Writ's Postgres roles for a Postgres Writ runs itself (docker-compose's pg-roles, Kubernetes'
# writ-pg-roles Job): runs as root in the postgres image, idempotently, on every start.
#   - writ_services: NOLOGIN group; every Writ service role is a member.
#   - writ_projection: LOGIN, scram-sha-256 password from the projection's secret, no superuser /
#     CREATEDB / CREATEROLE / REPLICATION / BYPASSRLS; CONNECT and CREATE (its rebuild's sibling
#     schemas) on the database; owner of the schema WRIT_PG_SCHEMA (default writ).
#   - a copy of the projection's password, 0400, owned by the projection image's user (uid 1000),
#     in $WRIT_PG_SECRETS_OUT: a bind-mounted secret keeps the host file's owner and 0600 mode,
#     which that user could not read.
# Re-running it with a new secret rotates the password (docs/security.md, "Postgres").
# Environment: PGHOST (postgres), PGDATABASE (writ), WRIT_PG_SCHEMA (writ),
#   WRIT_PG_ADMIN_PASSWORD_FILE, WRIT_PG_PROJECTION_PASSWORD_FILE, WRIT_PG_SECRETS_OUT (/writ-pg).
set -eu
: "${PGHOST:=postgres}" "${PGDATABASE:=writ}" "${WRIT_PG_SCHEMA:=writ}" "${WRIT_PG_SECRETS_OUT:=/writ-pg}"
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

mkdir -p "$WRIT_PG_SECRETS_OUT"
install -m 0400 -o 1000 -g 1000 "$WRIT_PG_PROJECTION_PASSWORD_FILE" "$WRIT_PG_SECRETS_OUT/projection.password"
echo "writ-roles: writ_projection (scram-sha-256) owns schema $WRIT_PG_SCHEMA in $PGDATABASE"
