#!/usr/bin/env bash
# Brings Writ up on this machine from a fresh clone: the stack (PostgreSQL,
# Docker, nats-server installed), Node 24 and the toolchain, every project built,
# Writ's own NATS with auth (writ init, port 4223: scripts/writ-nats.sh), the
# projection's own Postgres role (writ pg setup: scram-sha-256, its password under
# WRIT_HOME/pg), the cell image built offline, the first operator registered, and the seven services
# started in the background, each with its own least-privilege bus credential,
# listening on loopback. Idempotent: a service already answering /healthz is left
# running. Prints where everything is.
#
#   scripts/writ-up.sh            start (then runs the example agent; WRIT_SKIP_EXAMPLE=1 skips it)
#   scripts/writ-up.sh --down     stop the services it started, and Writ's NATS
#   scripts/writ-up.sh --single-process   (or WRIT_SINGLE_PROCESS=1) the seven services in ONE Node process (apps/serve,
#                                 supervised the same way: var/log/serve.log, var/run/serve.pid), each still with its own
#                                 bus credential, HTTP port and configuration; the default stays one process per service
#   WRIT_NATS_NODES=3 scripts/writ-up.sh   the same on a 3-node JetStream cluster on loopback (R3 streams;
#                                 scripts/nats-cluster/cluster.mjs, each node in its own network namespace as root)
#   WRIT_HOME (default ./var/writ) the deployment: its keys, credentials, NATS data, Postgres schema and cells root
#                                 (WRIT_HOME/cells, or WRIT_CELLS_ROOT); a new one
#                                 is a new, empty deployment (a cluster's log is not the single server's)
#
# Logs: var/log/<service>.log   PIDs: var/run/<service>.pid (and .supervisor.pid: each service runs under
# scripts/writ-service.sh, which restarts it when it dies)   (var/ is not committed)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
say() { printf '[writ-up] %s\n' "$*"; }

# name:port — the HTTP port of each service (health and readiness; projection serves the API):
# WRIT_HTTP_PORT_BASE (8080) for the projection, the next ones for the others (a second stack on one machine).
base=${WRIT_HTTP_PORT_BASE:-8080}
services=()
index=0
for name in projection ingress orchestrator policy approval executor receipt; do services+=("$name:$((base + index))"); index=$((index + 1)); done
mkdir -p var/log var/run
single=${WRIT_SINGLE_PROCESS:-0}
[ "${1:-}" = --single-process ] && single=1

stop_all() {
  # `serve`: the one process of --single-process (apps/serve), supervised like a service.
  for entry in "${services[@]}" serve:; do
    name=${entry%%:*}; pidfile="var/run/$name.pid"; supervisor="var/run/$name.supervisor.pid"
    # The supervisor (scripts/writ-service.sh) stops the service, lets it drain, and restarts nothing after.
    if [ -f "$supervisor" ] && kill -0 "$(cat "$supervisor")" 2>/dev/null; then
      say "stopping $name (supervisor pid $(cat "$supervisor"))"; kill -TERM "$(cat "$supervisor")" || true
      for _ in $(seq 1 60); do kill -0 "$(cat "$supervisor" 2>/dev/null || echo 0)" 2>/dev/null || break; sleep 0.25; done
    elif [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
      say "stopping $name (pid $(cat "$pidfile"))"; kill -TERM "$(cat "$pidfile")" || true
    fi
    rm -f "$pidfile" "$supervisor"
  done
}
if [ "${1:-}" = "--down" ]; then stop_all; scripts/writ-nats.sh --down; exit 0; fi

scripts/stack-up.sh
if [ ! -x node_modules/.bin/node ]; then say "installing dependencies (npm ci)"; npm ci --no-audit --no-fund; fi
export PATH="$root/node_modules/.bin:$PATH"
say "node $(node --version)"
say "building every project"
NX_NO_CLOUD=true NX_DAEMON=false nx run-many -t build --output-style=static >var/log/build.log 2>&1 || { tail -n 40 var/log/build.log; say "FAILED: build (var/log/build.log)"; exit 1; }
scripts/build-cell-image.sh
scripts/writ-nats.sh
# The operator's environment (writ init): its NATS URL and credential, principal, key, trust anchor.
set -a; . "${WRIT_HOME:-$root/var/writ}/writ.env"; set +a
if [ "$base" != 8080 ]; then export WRIT_HTTP_PORT_BASE="$base" WRIT_URL="http://127.0.0.1:$base"; fi
# A cluster (WRIT_NATS_NODES=3): every node's URL, and R3 for the log, the bus streams and the buckets.
if [ "${WRIT_NATS_NODES:-1}" != 1 ]; then set -a; . "$WRIT_HOME/nats/cluster/cluster.env"; set +a; say "NATS: $WRIT_NATS_NODES-node cluster $WRIT_NATS_URL, streams R$WRIT_STREAM_REPLICAS"; fi
# Each service reports it on /healthz; writ doctor flags services of different releases.
export WRIT_COMMIT=${WRIT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || true)}
# Postgres: the projection logs in as its own role with the password writ init generated
# (scram-sha-256, checked: scripts/stack-up.sh's pg_hba.conf rule); writ pg setup creates or updates
# the role over the admin connection (WRIT_PG_ADMIN_URL, default the machine's postgres superuser).
pg_json=$(writ pg setup --json) || { say "FAILED: writ pg setup (above)"; exit 1; }
pg_url=$(printf '%s' "$pg_json" | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).projectionUrl))')
pg_password_file="$WRIT_HOME/pg/projection.password"
say "postgres: projection role ${WRIT_PG_SCHEMA}_projection (scram-sha-256; password file $pg_password_file, 0600)"
# Streams are the operator's to create and reconfigure (a service's credential may only create a missing one).
say "streams: $(writ streams ensure)"

cells_root=${WRIT_CELLS_ROOT:-$WRIT_HOME/cells}
mkdir -p "$cells_root"
say "cells: $cells_root (the executor's workspaces; WRIT_CELLS_ROOT overrides)"

probe() { node -e "fetch('http://127.0.0.1:$1/$2').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"; }
healthy() { probe "$1" healthz; }
ready() { probe "$1" readyz; }
if [ "$single" = 1 ]; then
  if [ -f var/run/serve.supervisor.pid ] && kill -0 "$(cat var/run/serve.supervisor.pid)" 2>/dev/null; then
    say "services: already up in one process (supervisor pid $(cat var/run/serve.supervisor.pid))"
  else
    for entry in "${services[@]}"; do
      if healthy "${entry##*:}"; then say "FAILED: ${entry%%:*} already answers on :${entry##*:} (separate processes?): stop them first (scripts/writ-up.sh --down)"; exit 1; fi
    done
    say "services: starting all seven in one process on 127.0.0.1:$base-$((base + ${#services[@]} - 1)) (log var/log/serve.log; each with its own bus credential $WRIT_HOME/creds/<service>.creds)"
    # apps/serve gives each service its own share of this environment: its credential ($WRIT_HOME/creds/<name>.creds),
    # its port (WRIT_HTTP_PORT_BASE + its index, in the order above), and the variables named WRIT_SERVE_<SERVICE>__*.
    env WRIT_AUTHORSHIP=enforce WRIT_HTTP_PORT_BASE="$base" \
      WRIT_SERVE_PROJECTION__WRIT_PG_URL="$pg_url" WRIT_SERVE_PROJECTION__WRIT_PG_PASSWORD_FILE="$pg_password_file" \
      WRIT_SERVE_EXECUTOR__WRIT_CELLS_ROOT="$cells_root" \
      setsid nohup scripts/writ-service.sh serve >/dev/null 2>&1 </dev/null &
  fi
fi
for entry in "${services[@]}"; do
  [ "$single" = 1 ] && break
  name=${entry%%:*}; port=${entry##*:}
  if healthy "$port"; then say "$name: already up on :$port"; continue; fi
  say "$name: starting on 127.0.0.1:$port (log var/log/$name.log, bus credential $WRIT_HOME/creds/$name.creds)"
  service_env=()
  [ "$name" = projection ] && service_env=(WRIT_PG_URL="$pg_url" WRIT_PG_PASSWORD_FILE="$pg_password_file")
  # The deployment's own cells root: its executor's host id derives from it, so another deployment on this Docker
  # engine (a second WRIT_HOME, docker-compose's /var/lib/writ/cells) never takes these cells for its own, nor these its.
  [ "$name" = executor ] && service_env=(WRIT_CELLS_ROOT="$cells_root")
  # Supervised: a service that dies (a crash, a kill, a start that gave up) is started again (scripts/writ-service.sh).
  # WRIT_AUTHORSHIP=enforce: every read checks each event's seal against who may write it (docs/security.md, "Authorship").
  env WRIT_AUTHORSHIP=enforce WRIT_HTTP_PORT="$port" WRIT_NATS_CREDS="$WRIT_HOME/creds/$name.creds" "${service_env[@]}" setsid nohup scripts/writ-service.sh "$name" >/dev/null 2>&1 </dev/null &
done
for entry in "${services[@]}"; do
  name=${entry%%:*}; port=${entry##*:}
  for _ in $(seq 1 120); do ready "$port" && break; sleep 0.5; done
  log="var/log/$name.log"; [ "$single" = 1 ] && log=var/log/serve.log
  if ready "$port"; then say "$name: ready"; else tail -n 30 "$log"; say "FAILED: $name is not ready ($log)"; exit 1; fi
done
# Idempotent: the operator signs its own registration with the trust anchor's key (ingress checks it).
writ principal add --id "$WRIT_OPERATOR_ID" --type user --role operator --jwk "$WRIT_HOME/operator/$WRIT_OPERATOR_ID.pub.json" --no-creds >/dev/null
say "operator $WRIT_OPERATOR_ID registered (key $WRIT_OPERATOR_KEY)"
# The dashboards' HTTP identity (writ init made its key): an observer, it reads the whole API and changes nothing.
if [ -f "$WRIT_HOME/dashboard/dashboard.pub.json" ]; then
  writ principal add --id dashboard --type system --role observer --jwk "$WRIT_HOME/dashboard/dashboard.pub.json" --no-creds >/dev/null
  say "dashboard registered (observer; its HTTP token: writ http token --principal dashboard --key $WRIT_HOME/dashboard/dashboard.jwk.json)"
fi
if [ "${WRIT_SKIP_EXAMPLE:-0}" != 1 ] && [ -f examples/agent/agent.mjs ]; then
  say "running the example agent (examples/agent/agent.mjs)"
  node examples/agent/agent.mjs || say "the example agent reported a failure (see above)"
fi
writ doctor || { say "FAILED: writ doctor found a problem (above, with its next step)"; exit 1; }
say "Writ is up: API http://127.0.0.1:$base (GET /v1/keys, POST /v1/actions), NATS $WRIT_NATS_URL (auth on: credentials in $WRIT_HOME/creds)"
say "read the API: curl -H \"Authorization: \$(writ http token)\" http://127.0.0.1:$base/v1/approvals?status=pending  (a token lives 5 min, at most 15)"
say "act as the operator: . $WRIT_HOME/writ.env   register an agent: writ principal add --id <id> --type agent --role executor --jwk <public JWK> (writes <id>.creds)"
say "stop it with: scripts/writ-up.sh --down"
