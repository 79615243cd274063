#!/usr/bin/env bash
# Brings Writ up on this machine from a fresh clone: the stack (NATS, PostgreSQL,
# Docker), Node 24 and the toolchain, every project built, the cell image built
# offline, and the seven services started in the background. Idempotent: a
# service already answering /healthz is left running. Prints where everything is.
#
#   scripts/writ-up.sh            start (then runs the example agent; WRIT_SKIP_EXAMPLE=1 skips it)
#   scripts/writ-up.sh --down     stop the services it started
#
# Logs: var/log/<service>.log   PIDs: var/run/<service>.pid   (var/ is not committed)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
say() { printf '[writ-up] %s\n' "$*"; }

# name:port — the HTTP port of each service (health and readiness; projection serves the API).
services=(projection:8080 ingress:8081 orchestrator:8082 policy:8083 approval:8084 executor:8085 receipt:8086)
mkdir -p var/log var/run

stop_all() {
  for entry in "${services[@]}"; do
    name=${entry%%:*}; pidfile="var/run/$name.pid"
    if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
      say "stopping $name (pid $(cat "$pidfile"))"; kill -TERM "$(cat "$pidfile")" || true
    fi
    rm -f "$pidfile"
  done
}
if [ "${1:-}" = "--down" ]; then stop_all; exit 0; fi

scripts/stack-up.sh
if [ ! -x node_modules/.bin/node ]; then say "installing dependencies (npm ci)"; npm ci --no-audit --no-fund; fi
export PATH="$root/node_modules/.bin:$PATH"
say "node $(node --version)"
say "building every project"
NX_NO_CLOUD=true NX_DAEMON=false nx run-many -t build --output-style=static >var/log/build.log 2>&1 || { tail -n 40 var/log/build.log; say "FAILED: build (var/log/build.log)"; exit 1; }
scripts/build-cell-image.sh

probe() { node -e "fetch('http://127.0.0.1:$1/$2').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"; }
healthy() { probe "$1" healthz; }
ready() { probe "$1" readyz; }
for entry in "${services[@]}"; do
  name=${entry%%:*}; port=${entry##*:}
  if healthy "$port"; then say "$name: already up on :$port"; continue; fi
  say "$name: starting on :$port (log var/log/$name.log)"
  WRIT_HTTP_PORT=$port nohup node "services/$name/dist/main.js" >>"var/log/$name.log" 2>&1 &
  echo $! >"var/run/$name.pid"
done
for entry in "${services[@]}"; do
  name=${entry%%:*}; port=${entry##*:}
  for _ in $(seq 1 120); do ready "$port" && break; sleep 0.5; done
  if ready "$port"; then say "$name: ready"; else tail -n 30 "var/log/$name.log"; say "FAILED: $name is not ready (var/log/$name.log)"; exit 1; fi
done
if [ "${WRIT_SKIP_EXAMPLE:-0}" != 1 ] && [ -f examples/agent/agent.mjs ]; then
  say "running the example agent (examples/agent/agent.mjs)"
  node examples/agent/agent.mjs || say "the example agent reported a failure (see above)"
fi
say "Writ is up: API http://127.0.0.1:8080 (GET /v1/keys, POST /v1/actions), NATS nats://127.0.0.1:4222"
say "stop it with: scripts/writ-up.sh --down"
