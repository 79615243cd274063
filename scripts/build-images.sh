#!/usr/bin/env bash
# Builds Writ's container images offline: no registry, no `FROM` of anything pulled.
# Each image is a Debian bookworm root file system made by mmdebstrap from Debian's
# packages (the host's apt sources, the .debs cached), plus Writ's own files, imported
# with `docker import`:
#
#   writ/service:<version>    the seven services and the CLI, one image (SERVICE=<name> picks
#                             the service): Node 24 (the binary of the `node` npm package the
#                             repository pins), the built projects and their production
#                             dependencies under /app, tini as PID 1; user writ (10002), except
#                             where a deployment runs the executor as root (it drives Docker and
#                             the host firewall); a HEALTHCHECK on /healthz of WRIT_HTTP_PORT
#   writ/nats:<version>       Debian's nats-server (no config baked in: Writ's comes from
#                             `writ init`); user writ (10002); a HEALTHCHECK on the monitor port
#   writ/postgres:<version>   Debian's PostgreSQL 15 with an entrypoint that initialises an empty
#                             PGDATA as the official image does (POSTGRES_PASSWORD_FILE,
#                             POSTGRES_DB, scram-sha-256 only); user writ (10002); pg_isready HEALTHCHECK
#   writ/cell:latest          the cells' image (scripts/build-cell-image.sh)
#
# Reproducible: SOURCE_DATE_EPOCH is fixed (WRIT_IMAGE_EPOCH), so mmdebstrap writes the same
# tar for the same packages, and Writ's files go in with that mtime, owner 0 and sorted names:
# the same inputs give the same layer digest (`docker inspect -f '{{.RootFS.Layers}}'`). Each
# image is tagged by the hash of its inputs as well (writ/service:in-<16 hex>); when that tag
# exists the build is skipped and only <version> is moved to it.
#
#   scripts/build-images.sh [service] [nats] [postgres] [cell]     (default: all four)
#
# Environment:
#   WRIT_IMAGE_DEB_CACHE   where the .debs are kept (default /var/cache/writ/image-debs): a second
#                          build, or a machine sharing the cache, downloads nothing
#   WRIT_IMAGE_APT_SOURCES the apt sources to build from (default the host's
#                          /etc/apt/sources.list.d/debian.sources, else /etc/apt/sources.list)
#   WRIT_IMAGE_EPOCH       the timestamp of every file in the images (default 1747699200,
#                          2025-05-20, the Debian snapshot the machines are pinned to)
#   WRIT_IMAGE_SKIP_BUILD  1: use the projects' dist/ as they are (default: nx build first)
# Needs root (mmdebstrap's root mode), a reachable Docker Engine, and the npm registry for the
# production dependencies on the first build (the npm cache serves the next ones).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
say() { printf '[build-images] %s\n' "$*"; }
die() { printf '[build-images] FAILED: %s\n' "$*" >&2; exit 1; }

WRIT_UID=10002
EPOCH=${WRIT_IMAGE_EPOCH:-1747699200}
DEB_CACHE=${WRIT_IMAGE_DEB_CACHE:-/var/cache/writ/image-debs}
VERSION=$(node -p 'require("./package.json").version' 2>/dev/null) || die "cannot read the version from package.json (is node on the PATH?)"
export PATH="$root/node_modules/.bin:$PATH"

wanted=("$@")
[ "${#wanted[@]}" -eq 0 ] && wanted=(service nats postgres cell)
for image in "${wanted[@]}"; do
  case "$image" in service|nats|postgres|cell) ;; *) die "unknown image '$image' (service, nats, postgres, cell)";; esac
done

[ "$(id -u)" = 0 ] || die "mmdebstrap builds the root file systems in root mode: run as root"
command -v docker >/dev/null || die "the docker CLI is not installed (scripts/stack-up.sh installs and starts it)"
docker version --format '{{.Server.Version}}' >/dev/null 2>&1 || die "cannot reach the Docker Engine (scripts/stack-up.sh starts it)"
if ! command -v mmdebstrap >/dev/null; then
  say "mmdebstrap is not installed: apt-get install -y mmdebstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null 2>&1 \
    || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null; } \
    || die "apt-get install mmdebstrap failed (is Debian's mirror reachable?)"
fi
sources=${WRIT_IMAGE_APT_SOURCES:-}
if [ -z "$sources" ]; then
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then sources=/etc/apt/sources.list.d/debian.sources
  elif [ -s /etc/apt/sources.list ]; then sources=/etc/apt/sources.list
  else die "no apt sources found: set WRIT_IMAGE_APT_SOURCES to a sources.list or .sources file"; fi
fi
[ -f "$sources" ] || die "WRIT_IMAGE_APT_SOURCES=$sources is not a file"
mkdir -p "$DEB_CACHE" || die "cannot create $DEB_CACHE (set WRIT_IMAGE_DEB_CACHE)"

# One build at a time on this host (the deb cache and the tags are shared).
exec 9>"${TMPDIR:-/tmp}/writ-build-images.lock" && flock 9 || die "cannot lock ${TMPDIR:-/tmp}/writ-build-images.lock"
work=$(mktemp -d "${TMPDIR:-/tmp}/writ-images.XXXXXX")
trap 'rm -rf "$work"' EXIT

# candidates <package>...: the versions apt would install now (part of an image's inputs: a moved
# mirror builds a new image rather than reusing the tag of the old packages).
candidates() { apt-cache policy "$@" 2>/dev/null | grep -E '^[^ ]|Candidate' | tr -d ' '; }

# hash_of <file|dir>...: one sha256 over the names and contents (directories walked in name order).
hash_of() {
  local path
  for path in "$@"; do
    if [ -d "$path" ]; then
      (cd "$path" && find . \( -type f -o -type l \) -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum; \
        find . -type l -print0 | LC_ALL=C sort -z | xargs -0 -r -I{} sh -c 'printf "%s -> %s\n" "$1" "$(readlink "$1")"' _ {})
    else
      sha256sum <"$path"
    fi
  done | sha256sum | cut -c1-16
}

# rootfs <out.tar> <packages,comma,separated> [mmdebstrap hook options...]: a Debian bookworm root
# file system of the essential packages plus <packages>, with the .debs kept in DEB_CACHE.
rootfs() {
  local out=$1 include=$2; shift 2
  SOURCE_DATE_EPOCH=$EPOCH mmdebstrap --quiet --variant=essential --include="$include" \
    --skip=essential/unlink \
    --setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
    --setup-hook="sync-in $DEB_CACHE /var/cache/apt/archives/" \
    "$@" \
    --customize-hook="sync-out /var/cache/apt/archives $DEB_CACHE" \
    --customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb "$1"/var/cache/apt/archives/partial/* "$1"/var/lib/apt/lists/* 2>/dev/null || true' \
    bookworm "$out" "$sources" >"$work/mmdebstrap.log" 2>&1 \
    || { tail -n 30 "$work/mmdebstrap.log" >&2; die "mmdebstrap ($include) failed (log above)"; }
}

# import <tar> <repo> <tag> <input hash> <Dockerfile of metadata only> [docker import --change ...]:
# imports the root file system, then adds what `docker import` cannot (HEALTHCHECK, LABEL) with a
# build that adds no layer, and tags <repo>:<tag> and <repo>:in-<hash>.
import_image() {
  local tar=$1 repo=$2 tag=$3 hash=$4 dockerfile=$5; shift 5
  docker import "$@" "$tar" "$repo:rootfs-$hash" >/dev/null || die "docker import of $repo failed"
  mkdir -p "$work/meta-$hash"
  sed "s|@BASE@|$repo:rootfs-$hash|" "$dockerfile" >"$work/meta-$hash/Dockerfile"
  DOCKER_BUILDKIT=0 docker build -q --pull=false -t "$repo:in-$hash" \
    --label "org.opencontainers.image.version=$tag" --label "io.writ.inputs=$hash" \
    "$work/meta-$hash" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; die "docker build of $repo's metadata failed"; }
  docker rmi "$repo:rootfs-$hash" >/dev/null 2>&1 || true
  docker tag "$repo:in-$hash" "$repo:$tag"
  say "$repo:$tag = $repo:in-$hash ($(docker image inspect -f '{{.Id}}' "$repo:$tag" | cut -c1-19), layer $(docker image inspect -f '{{index .RootFS.Layers 0}}' "$repo:$tag" | cut -c1-19), $(( $(docker image inspect -f '{{.Size}}' "$repo:$tag") / 1048576 )) MiB)"
}

# present <repo> <hash> <tag>: true (and <tag> moved) when the image of these inputs exists.
present() {
  if docker image inspect "$1:in-$2" >/dev/null 2>&1; then
    docker tag "$1:in-$2" "$1:$3"; say "$1:$3: up to date ($1:in-$2)"; return 0
  fi
  return 1
}

# The user every Writ image runs as (essential has no useradd: the two lines groupadd/useradd would write).
user_hook() { printf '%s' "--customize-hook=printf 'writ:x:$WRIT_UID:\\n' >>\"\$1\"/etc/group && printf 'writ:x:$WRIT_UID:$WRIT_UID:Writ:$1:/usr/sbin/nologin\\n' >>\"\$1\"/etc/passwd"; }

# --- writ/service ------------------------------------------------------------------------------
build_service() {
  local repo=writ/service node_bin app hash
  node_bin=$(readlink -f node_modules/node/bin/node 2>/dev/null || true)
  [ -x "$node_bin" ] || die "node_modules/node/bin/node is missing: run npm ci (the node@24 devDependency is the image's runtime)"
  case "$("$node_bin" --version)" in v24.*) ;; *) die "$node_bin is $("$node_bin" --version), not Node 24";; esac
  if [ "${WRIT_IMAGE_SKIP_BUILD:-0}" != 1 ]; then
    say "building every project (nx run-many -t build)"
    mkdir -p var/log
    NX_NO_CLOUD=true NX_DAEMON=false nx run-many -t build --output-style=static >var/log/build.log 2>&1 \
      || { tail -n 40 var/log/build.log >&2; die "build failed (var/log/build.log)"; }
  fi
  # /app: package.json and lock, each project's package.json and dist (apps/cli's bin too),
  # then the production dependencies as npm ci installs them (workspaces linked, no dev ones).
  app="$work/app"
  mkdir -p "$app"
  cp package.json package-lock.json "$app/"
  local project
  for project in libs/* services/* apps/*; do
    [ -f "$project/package.json" ] || continue
    mkdir -p "$app/$project"
    cp "$project/package.json" "$app/$project/"
    [ -d "$project/dist" ] || die "$project/dist is missing: build it (nx run-many -t build) or unset WRIT_IMAGE_SKIP_BUILD"
    cp -a "$project/dist" "$app/$project/"
    [ -d "$project/bin" ] && cp -a "$project/bin" "$app/$project/"
  done
  find "$app" -name '*.tsbuildinfo' -delete
  hash=$(hash_of "$0" deploy/images/service.Dockerfile "$node_bin" "$app" "$sources" <(candidates libstdc++6 ca-certificates tini iptables mount e2fsprogs libc6) <(printf '%s %s %s' "$EPOCH" "$VERSION" "$WRIT_UID"))
  present "$repo" "$hash" "$VERSION" && return 0
  say "$repo: production dependencies (npm ci --omit=dev)"
  (cd "$app" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >"$work/npm.log" 2>&1) \
    || { tail -n 30 "$work/npm.log" >&2; die "npm ci --omit=dev failed (is the npm registry reachable?)"; }
  rm -rf "$app/node_modules/.package-lock.json" "$app/node_modules/.cache"
  mkdir -p "$work/bin" && cp "$node_bin" "$work/bin/node"
  find "$app" "$work/bin" -exec touch -h -d "@$EPOCH" {} +
  say "$repo: root file system (mmdebstrap: essential + libstdc++6 ca-certificates tini iptables mount e2fsprogs)"
  rootfs "$work/service.tar" libstdc++6,ca-certificates,tini,iptables,mount,e2fsprogs \
    --customize-hook="copy-in $work/bin/node /usr/local/bin" \
    --customize-hook='mkdir -p "$1"/app' --customize-hook="sync-in $app /app" \
    "$(user_hook /var/lib/writ)" \
    --customize-hook='mkdir -p "$1"/var/lib/writ/keys && chown 10002:10002 "$1"/var/lib/writ "$1"/var/lib/writ/keys && chmod 700 "$1"/var/lib/writ "$1"/var/lib/writ/keys' \
    --customize-hook='chown -R 0:0 "$1"/app "$1"/usr/local/bin/node && chmod 755 "$1"/usr/local/bin/node'
  import_image "$work/service.tar" "$repo" "$VERSION" "$hash" deploy/images/service.Dockerfile \
    --change 'USER 10002' --change 'WORKDIR /app' --change 'ENV NODE_ENV=production HOME=/var/lib/writ' \
    --change 'ENTRYPOINT ["/usr/bin/tini", "--"]' --change 'CMD ["sh", "-c", "exec node services/$SERVICE/dist/main.js"]'
}

# --- writ/nats ---------------------------------------------------------------------------------
build_nats() {
  local repo=writ/nats hash version
  hash=$(hash_of "$0" deploy/images/nats.Dockerfile "$sources" <(candidates nats-server libc6) <(printf '%s %s' "$EPOCH" "$WRIT_UID"))
  version=$(apt-cache policy nats-server 2>/dev/null | sed -n 's/^  Candidate: \([0-9.]*\).*/\1/p')
  [ -n "$version" ] || die "apt-cache knows no nats-server candidate (apt-get update?)"
  present "$repo" "$hash" "$version" && return 0
  say "$repo: root file system (mmdebstrap: essential + nats-server $version)"
  rootfs "$work/nats.tar" nats-server \
    "$(user_hook /data)" \
    --customize-hook='mkdir -p "$1"/data && chown 10002:10002 "$1"/data'
  import_image "$work/nats.tar" "$repo" "$version" "$hash" deploy/images/nats.Dockerfile \
    --change 'USER 10002' --change 'WORKDIR /data' --change 'ENTRYPOINT ["/usr/sbin/nats-server"]'
}

# --- writ/postgres -----------------------------------------------------------------------------
build_postgres() {
  local repo=writ/postgres hash
  hash=$(hash_of "$0" deploy/images/postgres.Dockerfile deploy/postgres/entrypoint.sh "$sources" <(candidates postgresql-15 postgresql-client-15 libc6) <(printf '%s' "$EPOCH"))
  present "$repo" "$hash" 15 && return 0
  say "$repo: root file system (mmdebstrap: essential + postgresql-15)"
  # postgresql-common's postinst makes a cluster (15/main) and a config under /etc: Writ's entrypoint
  # initialises PGDATA itself, so they go. The server runs as writ (10002) like every Writ image, so
  # one owner reads the files `writ init` wrote (0600) whichever container they are mounted in.
  rootfs "$work/postgres.tar" postgresql-15,postgresql-client-15 \
    --customize-hook='rm -rf "$1"/var/lib/postgresql/15 "$1"/etc/postgresql/15' \
    --customize-hook="copy-in deploy/postgres/entrypoint.sh /usr/local/bin" \
    --customize-hook='chmod 755 "$1"/usr/local/bin/entrypoint.sh && touch -h -d @'"$EPOCH"' "$1"/usr/local/bin/entrypoint.sh' \
    "$(user_hook /var/lib/postgresql)" \
    --customize-hook='mkdir -p "$1"/var/lib/postgresql/data && chown 10002:10002 "$1"/var/lib/postgresql/data && chmod 700 "$1"/var/lib/postgresql/data'
  import_image "$work/postgres.tar" "$repo" 15 "$hash" deploy/images/postgres.Dockerfile \
    --change 'USER 10002' --change 'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin PGDATA=/var/lib/postgresql/data' \
    --change 'ENTRYPOINT ["/usr/local/bin/entrypoint.sh"]' --change 'CMD ["postgres"]'
}

for image in "${wanted[@]}"; do
  case "$image" in
    service) build_service ;;
    nats) build_nats ;;
    postgres) build_postgres ;;
    cell) scripts/build-cell-image.sh ;;
  esac
done
say "done: ${wanted[*]}"
