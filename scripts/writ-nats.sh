#!/usr/bin/env bash
# Writ's own nats-server, with auth: runs `writ init` (idempotent: keys,
# credentials and the server's config under WRIT_HOME, default ./var/writ)
# and starts nats-server on that config (port 4223 unless `writ init --port`
# chose another) if this checkout's server is not already running.
#
#   scripts/writ-nats.sh          # init + start (prints each step)
#   scripts/writ-nats.sh --down   # stop this checkout's server
#
#   WRIT_NATS_NODES=3 scripts/writ-nats.sh   # a 3-node JetStream cluster on loopback instead
#     (scripts/nats-cluster/cluster.mjs: ports 4223-4225, each node in its own network namespace
#     when run as root; then . $WRIT_HOME/nats/cluster/cluster.env for the URLs and R3)
#
# The machine's own unauthenticated NATS on 4222 is not Writ's and is not used.
# Needs the built CLI (npm ci && npx nx run @writ/cli:build; npm test and
# scripts/writ-up.sh build it first) and nats-server (scripts/stack-up.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[writ-nats] %s\n' "$*"; }
home=${WRIT_HOME:-$PWD/var/writ}
pidfile="$home/nats/nats-server.pid"
logfile="$PWD/var/log/nats-writ.log"
running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

nodes=${WRIT_NATS_NODES:-1}
cluster_state="$home/nats/cluster/state.json"
node=node_modules/.bin/node
[ -x "$node" ] || node=node

if [ "${1:-}" = --down ]; then
  if [ -f "$cluster_state" ]; then WRIT_HOME="$home" "$node" scripts/nats-cluster/cluster.mjs down; fi
  if running; then
    pid=$(cat "$pidfile")
    say "stopping nats-server (pid $pid)"
    kill "$pid"
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  else
    say "not running"
  fi
  exit 0
fi

command -v nats-server >/dev/null || { say "nats-server is not installed: run scripts/stack-up.sh (it installs Debian's nats-server)"; exit 1; }
[ -f apps/cli/dist/main.js ] || { say "the CLI is not built: run npm ci && npx nx run @writ/cli:build"; exit 1; }

say "writ init --home $home"
"$node" apps/cli/bin/writ.mjs init --home "$home" | sed 's/^/[writ-nats]   /'
conf="$home/nats/nats-server.conf"
port=$(sed -n 's/^port: \([0-9]*\)$/\1/p' "$conf")
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }

if [ "$nodes" != 1 ]; then
  if running; then say "FAILED: the single server of $home is running (pid $(cat "$pidfile")): scripts/writ-nats.sh --down first"; exit 1; fi
  say "a $nodes-node cluster (scripts/nats-cluster/cluster.mjs)"
  WRIT_HOME="$home" "$node" scripts/nats-cluster/cluster.mjs up --nodes "$nodes" 2>&1 | sed 's/^/[writ-nats]   /'
  exit "${PIPESTATUS[0]}"
fi
if [ -f "$cluster_state" ]; then
  say "FAILED: the cluster of $home is running (state $cluster_state): scripts/writ-nats.sh --down first, or WRIT_NATS_NODES=<its size>"
  exit 1
fi
if running; then
  say "already running (pid $(cat "$pidfile")) on 127.0.0.1:$port"
  exit 0
fi
if port_open; then
  say "FAILED: port $port is taken by another process, not this checkout's nats-server ($pidfile)."
  say "Stop it (another checkout's: its scripts/writ-nats.sh --down), or run writ init --port <free port> in a new WRIT_HOME."
  exit 1
fi
mkdir -p "$(dirname "$logfile")"
say "starting nats-server -c $conf (log $logfile)"
setsid nohup nats-server -c "$conf" -P "$pidfile" -l "$logfile" >/dev/null 2>&1 < /dev/null &
for _ in $(seq 1 80); do port_open && break; sleep 0.25; done
port_open || { say "FAILED: nats-server did not listen on $port within 20 s; last log lines:"; tail -n 20 "$logfile" >&2 || true; exit 1; }
say "up on 127.0.0.1:$port (operator credential: $home/creds/operator.creds; . $home/writ.env)"
