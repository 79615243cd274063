#!/usr/bin/env bash
# Brings up what Writ needs on a Debian machine, and says what it does:
#   chromium installed (the console's browser tests), nats-server installed (Writ's own is started by scripts/writ-nats.sh, with auth,
#   on 127.0.0.1:4223), PostgreSQL on 127.0.0.1:5432 (Writ's service roles, group
#   writ_services, must log in with a scram-sha-256 password: a pg_hba.conf rule
#   placed before every other), Docker Engine on /var/run/docker.sock.
# Idempotent: anything already running is left as it is. Needs root for the
# installs (apt-get) and for dockerd.
#
# Environment:
#   WRIT_SKIP_DOCKER=1   do not install or start Docker Engine
#   WRIT_PG_DATABASES    databases to ensure exist (default: "writ writ_test")
set -euo pipefail

say() { printf '[stack-up] %s\n' "$*"; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_for() { # wait_for <seconds> <what> <command...>
  local seconds=$1 what=$2; shift 2
  for _ in $(seq 1 "$((seconds * 2))"); do "$@" && return 0; sleep 0.5; done
  say "FAILED: $what did not come up within ${seconds}s"; return 1
}

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then say "apt-get update"; apt-get update -qq; apt_updated=1; fi
  say "apt-get install -y $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# --- nats-server ---------------------------------------------------------------
# Writ runs its OWN nats-server with auth (scripts/writ-nats.sh: writ init, port
# 4223), started once the CLI is built; here it is only installed. A server the
# machine runs on 4222 without auth is not Writ's and is left alone.
if command -v nats-server >/dev/null; then
  say "nats-server: installed ($(nats-server --version 2>/dev/null || echo 'version unknown'))"
else
  apt_install nats-server
fi

# --- kubectl -------------------------------------------------------------------
# Client only, no cluster: npm test renders deploy/k8s with `kubectl kustomize` and validates it.
if command -v kubectl >/dev/null; then
  say "kubectl: installed ($(kubectl version --client 2>/dev/null | head -n 1 || echo 'version unknown'))"
else
  apt_install kubectl
fi

# --- chromium ------------------------------------------------------------------
# The console's browser tests (test/e2e/console.e2e.spec.ts) drive Debian's chromium with
# playwright-core (npm); nothing is downloaded at test time. WRIT_CHROMIUM names another binary.
if command -v chromium >/dev/null; then
  say "chromium: installed ($(chromium --version 2>/dev/null | head -n 1 || echo 'version unknown'))"
else
  apt_install chromium
fi

# --- PostgreSQL --------------------------------------------------------------
if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  say "PostgreSQL: already accepting connections on 127.0.0.1:5432"
else
  command -v pg_ctlcluster >/dev/null || apt_install postgresql postgresql-client
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  hba="/etc/postgresql/$version/main/pg_hba.conf"
  # A fresh Debian cluster asks for passwords on loopback; Writ's dev and CI
  # setup is trust on loopback only, as on the machines it is developed on.
  if ! grep -q '^host all all 127.0.0.1/32 trust' "$hba"; then
    say "PostgreSQL: trusting loopback connections in $hba"
    sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
  fi
  say "PostgreSQL: starting cluster $version/main"
  pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  wait_for 30 "PostgreSQL" pg_isready -q -h 127.0.0.1 -p 5432
  say "PostgreSQL: up"
fi
for db in ${WRIT_PG_DATABASES:-writ writ_test}; do
  if psql -h 127.0.0.1 -U postgres -tAc "select 1 from pg_database where datname = '$db'" | grep -q 1; then
    say "PostgreSQL: database $db exists"
  else
    say "PostgreSQL: creating database $db"
    psql -h 127.0.0.1 -U postgres -qc "create database \"$db\""
  fi
done

# Writ's services log in as their own roles (`writ pg setup`, the test harnesses), all members of
# writ_services, with a scram-sha-256 password that is really checked: these rules come before
# any other line (the first matching line decides), so the trust this machine gives loopback
# connections never reaches a Writ role. docs/security.md ("Postgres").
if ! psql -h 127.0.0.1 -U postgres -tAc "select 1 from pg_roles where rolname = 'writ_services'" | grep -q 1; then
  say "PostgreSQL: creating the group role writ_services (NOLOGIN; Writ's service roles are its members)"
  psql -h 127.0.0.1 -U postgres -qc 'create role writ_services nologin nosuperuser nocreatedb nocreaterole noreplication nobypassrls' 2>/dev/null \
    || psql -h 127.0.0.1 -U postgres -tAc "select 1 from pg_roles where rolname = 'writ_services'" | grep -q 1
fi
hba=$(psql -h 127.0.0.1 -U postgres -tAc 'show hba_file')
writ_rules=$(printf '%s\n' \
  'host  all +writ_services 127.0.0.1/32 scram-sha-256 # writ: service roles need their password' \
  'host  all +writ_services ::1/128      scram-sha-256 # writ: service roles need their password' \
  'local all +writ_services              scram-sha-256 # writ: service roles need their password')
if [ "$(grep -vE '^[[:space:]]*(#|$)' "$hba" | head -n 3)" = "$writ_rules" ]; then
  say "PostgreSQL: scram-sha-256 required of Writ's service roles (first rules of $hba)"
else
  say "PostgreSQL: requiring scram-sha-256 of Writ's service roles (+writ_services) before any other rule of $hba"
  sed -i '/# writ: service roles need their password$/d' "$hba"
  { printf '%s\n' "$writ_rules"; cat "$hba"; } >"$hba.writ" && cat "$hba.writ" >"$hba" && rm -f "$hba.writ"
  psql -h 127.0.0.1 -U postgres -qtAc 'select pg_reload_conf()' >/dev/null
  errors=$(psql -h 127.0.0.1 -U postgres -tAc 'select count(*) from pg_hba_file_rules where error is not null')
  [ "$errors" = 0 ] || { say "FAILED: $hba has $errors invalid line(s) after the change (select * from pg_hba_file_rules where error is not null)"; exit 1; }
fi

# --- Docker Engine -----------------------------------------------------------
if [ "${WRIT_SKIP_DOCKER:-0}" = 1 ]; then
  say "Docker: skipped (WRIT_SKIP_DOCKER=1)"
elif docker info >/dev/null 2>&1; then
  say "Docker: engine already running ($(docker version --format '{{.Server.Version}}' 2>/dev/null))"
else
  command -v dockerd >/dev/null || apt_install docker.io
  say "Docker: starting dockerd (log /var/log/dockerd.log)"
  nohup dockerd >/var/log/dockerd.log 2>&1 &
  wait_for 60 "Docker Engine" docker info
  say "Docker: up ($(docker version --format '{{.Server.Version}}'))"
fi

if [ "${WRIT_SKIP_DOCKER:-0}" != 1 ] && ! command -v docker-compose >/dev/null && ! docker compose version >/dev/null 2>&1; then
  # Only to validate docker-compose.yml in the tests (Debian ships Compose v1).
  apt_install docker-compose
fi

say "stack is up: nats-server installed (Writ's own starts with scripts/writ-nats.sh on 4223), PostgreSQL 127.0.0.1:5432$([ "${WRIT_SKIP_DOCKER:-0}" = 1 ] || echo ', Docker /var/run/docker.sock')"
