#!/usr/bin/env bash
# Brings Writ up on this host with docker-compose, every image built here (no registry):
# Docker and docker-compose (scripts/stack-up.sh), the images (scripts/build-images.sh: service,
# nats, postgres, cell), the deployment's trust material once (`writ init`, run in the service
# image as its user 10002 so the services can read what it writes), `docker-compose up -d`, a wait
# until every service is ready, then the operator's and the dashboard's registrations and
# `writ doctor`. Idempotent: a second run changes nothing that is up.
#
#   scripts/compose-up.sh           start
#   scripts/compose-up.sh --down    stop and remove the containers (the deployment directory and the
#                                   volumes stay: the next start is the same deployment)
#   scripts/compose-up.sh --purge   --down, then remove the volumes and the deployment directory too
#
#   WRIT_COMPOSE_HOME  the deployment's directory (default ./var/compose; owned by uid 10002, 0700)
#   WRIT_NATS_PORT     NATS on the host's loopback (default 4223; chosen at `writ init`, kept after)
#   WRIT_COMPOSE_PG_PORT  the Compose PostgreSQL on the host's loopback (default 5433)
#
# It publishes on 127.0.0.1 the ports scripts/writ-up.sh uses (NATS, 8080-8086): run one of the two.
# Then: `. <home>/writ.env` acts as the operator (as root: the files are the images' user's);
# scripts/conformance.sh runs the outside agent (WRIT_HOME=<home>).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
say() { printf '[compose-up] %s\n' "$*"; }
die() { printf '[compose-up] FAILED: %s\n' "$*" >&2; exit 1; }

home=${WRIT_COMPOSE_HOME:-$root/var/compose}
case "$home" in /*) ;; *) home="$root/$home";; esac
export WRIT_VERSION
WRIT_VERSION=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' package.json | head -n 1)
# One Compose project per deployment: its volumes (the database, the services' keys) belong to the
# trust material of this directory, never to another deployment's (a second home is a new, empty one).
project="writ-$(printf '%s' "$home" | sha256sum | cut -c1-8)"
compose() { docker-compose -p "$project" -f "$root/docker-compose.yml" "$@"; }
load_env() {
  set -a; . "$home/writ.env"; set +a
  WRIT_NATS_PORT=${WRIT_NATS_URL##*:}
  export WRIT_NATS_PORT WRIT_NATS_MONITOR_PORT
  WRIT_NATS_MONITOR_PORT=$(sed -n 's/^http: ".*:\([0-9]*\)"$/\1/p' "$home/nats/nats-server.conf" | head -n 1)
}

if [ "${1:-}" = --down ] || [ "${1:-}" = --purge ]; then
  [ -f "$home/writ.env" ] || die "no deployment at $home (WRIT_COMPOSE_HOME)"
  load_env
  if [ "$1" = --purge ]; then
    compose down --volumes --remove-orphans
    # The executor's warm cells (its pool under /var/lib/writ/cells); a task's cell is removed when it closes.
    docker ps -aq --filter label=writ.cell.pool.root=/var/lib/writ/cells | xargs -r docker rm -f >/dev/null
    rm -rf "$home"; say "removed the containers, the volumes and $home"
  else
    compose down --remove-orphans; say "stopped (the deployment $home and the volumes stay)"
  fi
  exit 0
fi

[ "$(id -u)" = 0 ] || die "run as root: it installs and starts Docker, builds the images (mmdebstrap) and owns $home for uid 10002"
scripts/stack-up.sh
command -v docker-compose >/dev/null || die "docker-compose is not installed (apt-get install -y docker-compose)"
if [ ! -x node_modules/.bin/node ]; then say "installing dependencies (npm ci)"; npm ci --no-audit --no-fund; fi
export PATH="$root/node_modules/.bin:$PATH"
scripts/build-images.sh service nats postgres cell

# writ init on every start: it changes nothing that is current, and issues what this release adds or
# grants differently (a credential the Compose file mounts, e.g. each service's <service>.consumer.creds).
if [ -f "$home/writ.env" ]; then
  port=$(sed -n 's/^WRIT_NATS_URL=.*:\([0-9]*\)$/\1/p' "$home/writ.env" | head -n 1)
else
  port=${WRIT_NATS_PORT:-4223}
  mkdir -p "$home" && chown 10002:10002 "$home" && chmod 700 "$home"
fi
say "writ init --home $home --host 0.0.0.0 --port $port (in writ/service:$WRIT_VERSION, as uid 10002)"
docker run --rm --user 10002:10002 --network none -v "$home:$home" "writ/service:$WRIT_VERSION" \
  node apps/cli/bin/writ.mjs init --home "$home" --host 0.0.0.0 --port "$port" --monitor-port $((port + 4000)) >/dev/null \
  || die "writ init failed (above)"
load_env
export WRIT_COMMIT=${WRIT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || true)}
# The executor's cells live here on the host, at the same path inside the executor's container.
mkdir -p /var/lib/writ/cells

running=$(compose ps -q 2>/dev/null || true)
if [ -z "$running" ]; then
  for port in "$WRIT_NATS_PORT" 8080 8081 8082 8083 8084 8085 8086; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      die "127.0.0.1:$port is in use and this Compose project is not running (scripts/writ-up.sh's stack? stop it: scripts/writ-up.sh --down)"
    fi
  done
fi

say "docker-compose up -d (project $project, deployment $home, NATS 127.0.0.1:$WRIT_NATS_PORT)"
compose up -d --no-build

ready() { node -e "fetch('http://127.0.0.1:$1/readyz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"; }
index=0
for name in projection ingress orchestrator policy approval executor receipt; do
  port=$((8080 + index)); index=$((index + 1))
  for _ in $(seq 1 240); do ready "$port" && break; sleep 0.5; done
  if ready "$port"; then say "$name: ready (:$port)"; else compose logs --tail 40 "$name" >&2; die "$name is not ready on :$port (docker-compose -p $project logs $name)"; fi
done

# Idempotent: the operator signs its own registration with the trust anchor's key (ingress checks it);
# the dashboards' HTTP identity is an observer (reads the whole API, changes nothing).
writ principal add --id "$WRIT_OPERATOR_ID" --type user --role operator --jwk "$home/operator/$WRIT_OPERATOR_ID.pub.json" --no-creds >/dev/null
say "operator $WRIT_OPERATOR_ID registered (key $WRIT_OPERATOR_KEY)"
writ principal add --id dashboard --type system --role observer --jwk "$home/dashboard/dashboard.pub.json" --no-creds >/dev/null
say "dashboard registered (observer)"
# The projection's role at the Compose PostgreSQL (published on loopback), not the machine's.
WRIT_PG_URL="postgres://writ_projection@127.0.0.1:${WRIT_COMPOSE_PG_PORT:-5433}/writ" writ doctor || die "writ doctor found a problem (above, with its next step)"
say "Writ is up under docker-compose: API http://127.0.0.1:8080, NATS $WRIT_NATS_URL (auth on)"
say "act as the operator (root): . $home/writ.env    the outside agent: WRIT_HOME=$home scripts/conformance.sh"
say "logs: docker-compose -p $project logs <service>    stop: scripts/compose-up.sh --down"
