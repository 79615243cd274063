#!/usr/bin/env bash
# What a failed run leaves to explain it, printed where CI keeps it (stdout): each service's
# readiness, its processes, and the warnings and errors of its log (var/log/<service>.log) with the
# supervisor's restarts. Read-only; never fails. Used by .ci/run after a failed chaos run, and by
# hand: scripts/stack-diagnostics.sh [lines per service, default 25].
set -uo pipefail
cd "$(dirname "$0")/.."

lines=${1:-25}
base=${WRIT_HTTP_PORT_BASE:-8080}
services=(projection ingress orchestrator policy approval executor receipt)

say() { printf '[diagnostics] %s\n' "$*"; }

say "load: $(cut -d' ' -f1-3 /proc/loadavg); memory available: $(awk '/MemAvailable/ {printf "%d MiB", $2/1024}' /proc/meminfo)"
for i in "${!services[@]}"; do
  name=${services[$i]}
  port=$((base + i))
  readiness=$(curl -s -m 3 "http://127.0.0.1:$port/readyz" 2>&1 | head -c 600)
  say "$name :$port /readyz: ${readiness:-no answer}"
  pids=$(pgrep -f "services/$name/dist/main.js" | tr '\n' ' ')
  say "$name processes: ${pids:-none}"
  log="var/log/$name.log"
  [ -f "$log" ] || { say "$name: no log at $log"; continue; }
  say "$name: restarts by the supervisor: $(grep -c '"msg":"service exited; restarting"' "$log")"
  say "$name: last $lines warnings and errors of $log (each cut at 400 characters)"
  grep -E '"level":(40|50|60)' "$log" | tail -n "$lines" | cut -c1-400
  say "$name: last 5 lines of $log"
  tail -n 5 "$log" | cut -c1-400
done
if [ -f var/log/nats-writ.log ]; then
  say "nats-server: last $lines lines of var/log/nats-writ.log"
  tail -n "$lines" var/log/nats-writ.log | cut -c1-300
fi
exit 0
