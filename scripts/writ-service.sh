#!/usr/bin/env bash
# Runs one Writ service and restarts it when it dies, the way a process supervisor
# (systemd Restart=on-failure, docker-compose restart: unless-stopped, a Kubernetes
# Deployment) does in production: scripts/writ-up.sh starts every service through it.
# A crash, a SIGKILL or a start that gave up (e.g. Writ's NATS restarting for longer than
# WRIT_BUS_START_TIMEOUT_MS) is followed by a new start after a pause that doubles from
# 1 s to 30 s, and resets once a run lasted WRIT_SERVICE_HEALTHY_RUN_S (10 s: longer than a start takes, so
# a service that fails at start backs off, while one killed after it ran comes back within a second). SIGTERM / SIGINT stop the service
# (it drains) and then the supervisor; nothing is restarted after that.
#
#   scripts/writ-service.sh <service>     (environment as the service reads it; cwd the repository)
#   scripts/writ-service.sh serve         every service in one process (apps/serve; scripts/writ-up.sh --single-process)
#
# Files: var/run/<service>.pid (the service process), var/run/<service>.supervisor.pid,
# var/log/<service>.log (the service's output and each restart).
set -uo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: scripts/writ-service.sh <service>}
main="services/$name/dist/main.js"
[ "$name" = serve ] && main=apps/serve/dist/main.js
[ -f "$main" ] || { echo "[writ-service] $main is not built" >&2; exit 1; }
mkdir -p var/run var/log
log="var/log/$name.log"
echo $$ >"var/run/$name.supervisor.pid"
child=
stopping=0
stop() {
  stopping=1
  [ -n "$child" ] && kill -TERM "$child" 2>/dev/null
}
trap stop TERM INT
pause=1
while :; do
  started=$(date +%s)
  node "$main" >>"$log" 2>&1 &
  child=$!
  echo "$child" >"var/run/$name.pid"
  # `wait` returns early when a trapped signal arrives: wait again until the service is gone.
  while :; do
    wait "$child"; status=$?
    kill -0 "$child" 2>/dev/null || break
  done
  if [ "$stopping" = 1 ]; then break; fi
  ran=$(( $(date +%s) - started ))
  [ "$ran" -ge "${WRIT_SERVICE_HEALTHY_RUN_S:-10}" ] && pause=1
  printf '{"level":40,"time":"%s","name":"writ-service","service":"%s","exit_status":%d,"ran_s":%d,"restart_in_s":%d,"msg":"service exited; restarting"}\n' "$(date -u +%FT%T.000Z)" "$name" "$status" "$ran" "$pause" >>"$log"
  sleep "$pause" & wait $! 2>/dev/null
  [ "$stopping" = 1 ] && break
  pause=$(( pause * 2 > 30 ? 30 : pause * 2 ))
done
rm -f "var/run/$name.pid" "var/run/$name.supervisor.pid"
