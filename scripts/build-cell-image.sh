#!/usr/bin/env bash
# Builds Writ's cell base image offline, from local files only (no registry, no pull):
#   a rootfs of busybox-static (/bin/busybox plus one symlink per applet),
#   /etc/passwd and /etc/group with the non-root user `cell` (uid/gid 10001),
#   /workspace and /home/cell owned by 10001, /tmp (1777), empty /proc /sys /dev,
#   git (for vcs_mutation actions) with the shared libraries it needs, and curl (the
#   verifying TLS client of https network actions) with its full runtime closure plus the
#   public CA bundle of Debian's ca-certificates at /etc/ssl/certs/ca-certificates.crt,
#   all unpacked with `dpkg -x` from Debian packages fetched by `apt-get download` (the
#   .debs are cached, so a rebuild or a second machine sharing the cache needs no network;
#   no maintainer script runs: the CA bundle is made here as update-ca-certificates would,
#   every .crt under /usr/share/ca-certificates concatenated in name order),
# imported with `docker import` as
#   writ/cell:<inputs-hash>   (sha256 of busybox version + binary + every .deb + this script, 16 hex)
#   writ/cell:latest          (moved to the image just built or found)
#
# Extra trust roots (an internal CA) are not baked in: the executor reads
# WRIT_EXECUTOR_EXTRA_CA_FILE at start and hands the bundle to curl in the cell per action.
#
# Idempotent: when writ/cell:<inputs-hash> exists it only makes sure :latest points at it.
# Prints what it does; exits non-zero with a clear message on any failure.
# Needs a reachable Docker Engine; installs busybox-static with apt-get when missing
# (that part needs root). Concurrent runs are serialised with flock.
#
# Environment:
#   WRIT_CELL_IMAGE_REPO   repository name (default: writ/cell)
#   WRIT_CELL_BUSYBOX      path of a statically linked busybox to use instead of the
#                          busybox-static package's binary
#   WRIT_CELL_GIT          1 (default): include git; 0: leave it out (vcs_mutation then
#                          fails in the cell with exit 127)
#   WRIT_CELL_TLS          1 (default): include curl and the CA bundle; 0: leave them out
#                          (https network actions then end EXECUTOR_TLS_UNAVAILABLE)
#   WRIT_CELL_DEB_CACHE    where the .debs are kept (default /var/cache/writ/cell-debs)
set -euo pipefail

REPO=${WRIT_CELL_IMAGE_REPO:-writ/cell}
CELL_UID=10001
CELL_GID=10001
SCRIPT_PATH=$(readlink -f "${BASH_SOURCE[0]}")

say() { printf '[build-cell-image] %s\n' "$*"; }
die() { printf '[build-cell-image] FAILED: %s\n' "$*" >&2; exit 1; }

command -v docker >/dev/null || die "the docker CLI is not installed (apt-get install -y docker.io, then start dockerd)"
docker version --format '{{.Server.Version}}' >/dev/null 2>&1 \
  || die "cannot reach the Docker Engine (is dockerd running, and may $(id -un) use ${DOCKER_HOST:-/var/run/docker.sock}?)"
for tool in tar sha256sum flock; do
  command -v "$tool" >/dev/null || die "'$tool' is required (Debian: tar, coreutils, util-linux)"
done

# One build at a time on this host: parallel test files all call this script.
lock="${TMPDIR:-/tmp}/writ-build-cell-image.lock"
exec 9>"$lock" || die "cannot open the lock file $lock"
flock 9 || die "cannot lock $lock"

# --- busybox-static ----------------------------------------------------------
if [ -n "${WRIT_CELL_BUSYBOX:-}" ]; then
  busybox=$WRIT_CELL_BUSYBOX
  [ -x "$busybox" ] || die "WRIT_CELL_BUSYBOX=$busybox is not an executable file"
  say "busybox: using $busybox (WRIT_CELL_BUSYBOX)"
else
  if ! dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'install ok installed'; then
    [ "$(id -u)" = 0 ] || die "busybox-static is not installed and installing it needs root: run 'apt-get install -y busybox-static' as root, or set WRIT_CELL_BUSYBOX"
    command -v apt-get >/dev/null || die "busybox-static is missing and apt-get is not available: set WRIT_CELL_BUSYBOX to a static busybox"
    say "busybox-static is not installed: apt-get update && apt-get install -y busybox-static"
    apt-get update -qq || die "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends busybox-static >/dev/null \
      || die "apt-get install busybox-static failed"
  fi
  busybox=$(dpkg-query -L busybox-static | grep -E '/s?bin/busybox$' | head -n 1 || true)
  [ -n "$busybox" ] && [ -x "$busybox" ] || die "busybox-static is installed but its /bin/busybox was not found"
  say "busybox: $busybox from busybox-static $(dpkg-query -W -f='${Version}' busybox-static)"
fi
busybox_version=$("$busybox" 2>&1 | head -n 1 || true)
case "$busybox_version" in BusyBox*) ;; *) die "$busybox does not look like busybox (got: $busybox_version)";; esac

# --- git and curl (Debian packages, unpacked; no maintainer scripts run) ----------
# git itself needs only libc, libpcre2 and zlib; its http/ssh remotes (libcurl, ssh) are left
# out on purpose: a cell has no credentials and reaches the network only through its egress proxy.
WITH_GIT=${WRIT_CELL_GIT:-1}
GIT_DEBS=(git libc6 libpcre2-8-0 zlib1g)
# curl's runtime closure on Debian 12, from
#   apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
#     --no-replaces --no-enhances curl | grep -v '^[ <]' | sort -u
# minus gcc-12-base (documentation only). The smoke test below runs curl in the cell, so a
# library missing from this list fails the build instead of an action.
WITH_TLS=${WRIT_CELL_TLS:-1}
TLS_DEBS=(curl libcurl4 libc6 zlib1g libbrotli1 libcom-err2 libdb5.3 libffi8 libgcc-s1 libgmp10
  libgnutls30 libgssapi-krb5-2 libhogweed6 libidn2-0 libk5crypto3 libkeyutils1 libkrb5-3
  libkrb5support0 libldap-2.5-0 libnettle8 libnghttp2-14 libp11-kit0 libpsl5 librtmp1 libsasl2-2
  libsasl2-modules-db libssh2-1 libssl3 libtasn1-6 libunistring2 libzstd1 ca-certificates)
case "$WITH_GIT" in 0|1) ;; *) die "WRIT_CELL_GIT must be 0 or 1 (got '$WITH_GIT')";; esac
case "$WITH_TLS" in 0|1) ;; *) die "WRIT_CELL_TLS must be 0 or 1 (got '$WITH_TLS')";; esac
DEB_CACHE=${WRIT_CELL_DEB_CACHE:-/var/cache/writ/cell-debs}
wanted=()
[ "$WITH_GIT" = 1 ] && wanted+=("${GIT_DEBS[@]}")
[ "$WITH_TLS" = 1 ] && wanted+=("${TLS_DEBS[@]}")
# Each package once, in a stable order (the order feeds the inputs hash).
mapfile -t wanted < <(printf '%s\n' "${wanted[@]}" | LC_ALL=C sort -u | sed '/^$/d')
debs=()
if [ "${#wanted[@]}" -gt 0 ]; then
  command -v dpkg >/dev/null || die "dpkg is required to unpack ${wanted[*]} (or set WRIT_CELL_GIT=0 WRIT_CELL_TLS=0)"
  mkdir -p "$DEB_CACHE" || die "cannot create $DEB_CACHE (set WRIT_CELL_DEB_CACHE)"
  missing=()
  for pkg in "${wanted[@]}"; do
    compgen -G "$DEB_CACHE/${pkg}_*.deb" >/dev/null || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    command -v apt-get >/dev/null || die "apt-get is needed to fetch ${missing[*]} (or put their .debs in $DEB_CACHE, or set WRIT_CELL_GIT=0 / WRIT_CELL_TLS=0)"
    say "fetching ${missing[*]} into $DEB_CACHE (apt-get download)"
    if ! (cd "$DEB_CACHE" && apt-get download -qq "${missing[@]}" >/dev/null 2>&1); then
      say "apt-get download failed: apt-get update, then again"
      apt-get update -qq || die "apt-get update failed (run as root, or put the .debs in $DEB_CACHE)"
      (cd "$DEB_CACHE" && apt-get download -qq "${missing[@]}" >/dev/null 2>&1) || die "apt-get download ${missing[*]} failed (is Debian's mirror reachable?)"
    fi
  fi
  for pkg in "${wanted[@]}"; do
    # The newest cached version of each package (sorted by dpkg's own version order).
    deb=$(for f in "$DEB_CACHE/${pkg}"_*.deb; do printf '%s %s\n' "$(dpkg-deb -f "$f" Version)" "$f"; done \
      | sort -k1,1 -V | tail -n 1 | cut -d' ' -f2-)
    [ -n "$deb" ] && [ -f "$deb" ] || die "no .deb of $pkg in $DEB_CACHE"
    debs+=("$deb")
  done
  say "deb layer (git=$WITH_GIT, tls=$WITH_TLS): ${#debs[@]} packages: $(for deb in "${debs[@]}"; do printf '%s=%s ' "$(dpkg-deb -f "$deb" Package)" "$(dpkg-deb -f "$deb" Version)"; done)"
else
  say "deb layer: skipped (WRIT_CELL_GIT=0, WRIT_CELL_TLS=0)"
fi

# --- the tag: a hash of every input ------------------------------------------
inputs_hash=$( {
  printf '%s\n' "$busybox_version"
  sha256sum <"$busybox"
  for deb in "${debs[@]}"; do sha256sum <"$deb"; done
  sha256sum <"$SCRIPT_PATH"
} | sha256sum | cut -c1-16)
image="$REPO:$inputs_hash"
say "inputs: $busybox_version; binary $(sha256sum <"$busybox" | cut -c1-12); script $(sha256sum <"$SCRIPT_PATH" | cut -c1-12) -> $image"

# Runs the image the way a cell does (no network, read-only, no capabilities). A busybox
# that is not static fails here: the rootfs has no dynamic loader.
smoke_test() {
  local got want="$CELL_UID:$CELL_GID:/workspace:2"
  if ! got=$(docker run --rm --network none --read-only --cap-drop ALL --security-opt no-new-privileges \
    --log-driver none --entrypoint /bin/sh "$1" -c 'echo "$(id -u):$(id -g):$(pwd):$(ls -d /workspace /tmp | wc -l)"' 2>&1); then
    printf '[build-cell-image] FAILED: smoke test of %s: %s\n' "$1" "$got" >&2
    return 1
  fi
  if [ "$got" != "$want" ]; then
    printf "[build-cell-image] FAILED: smoke test of %s: expected '%s', got '%s'\n" "$1" "$want" "$got" >&2
    return 1
  fi
  say "smoke test: $1 runs busybox as $CELL_UID:$CELL_GID in /workspace"
  [ "$WITH_GIT" = 1 ] || return 0
  if ! got=$(docker run --rm --network none --read-only --cap-drop ALL --security-opt no-new-privileges --tmpfs /tmp:exec \
    --log-driver none --entrypoint /bin/sh "$1" -c 'cd /tmp && HOME=/tmp git init -q r && cd r && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m smoke && git rev-parse --is-inside-work-tree' 2>&1); then
    printf '[build-cell-image] FAILED: git smoke test of %s: %s\n' "$1" "$got" >&2
    return 1
  fi
  [ "$got" = true ] || { printf "[build-cell-image] FAILED: git smoke test of %s: got '%s'\n" "$1" "$got" >&2; return 1; }
  say "smoke test: git $(docker run --rm --network none --log-driver none --entrypoint /usr/bin/git "$1" --version | cut -d' ' -f3) inits and commits in the cell"
}

# curl as an https action runs it: the cell's hardening, the bundle as --cacert. `curl --version`
# loads every library curl links (a missing one fails here); the bundle must hold certificates.
smoke_test_tls() {
  local got
  if ! got=$(docker run --rm --network none --read-only --cap-drop ALL --security-opt no-new-privileges --tmpfs /tmp:noexec \
    --log-driver none --entrypoint /bin/sh "$1" -c 'curl -q --version | head -n 1 && grep -c "BEGIN CERTIFICATE" /etc/ssl/certs/ca-certificates.crt' 2>&1); then
    printf '[build-cell-image] FAILED: curl smoke test of %s: %s\n' "$1" "$got" >&2
    return 1
  fi
  case "$got" in
    curl\ *) ;;
    *) printf "[build-cell-image] FAILED: curl smoke test of %s: got '%s'\n" "$1" "$got" >&2; return 1 ;;
  esac
  local certs=${got##*$'\n'}
  if ! [ "$certs" -gt 50 ] 2>/dev/null; then
    printf "[build-cell-image] FAILED: curl smoke test of %s: the CA bundle holds '%s' certificates\n" "$1" "$certs" >&2
    return 1
  fi
  say "smoke test: $(printf '%s' "$got" | head -n 1 | cut -d' ' -f1-2) runs in the cell; the CA bundle holds $certs certificates"
}

point_latest() {
  local id latest_id
  id=$(docker image inspect --format '{{.Id}}' "$image")
  latest_id=$(docker image inspect --format '{{.Id}}' "$REPO:latest" 2>/dev/null || true)
  if [ "$latest_id" = "$id" ]; then
    say "$REPO:latest already points at $image ($id)"
  else
    docker tag "$image" "$REPO:latest" || die "docker tag $image $REPO:latest failed"
    say "tagged $REPO:latest -> $image ($id)"
  fi
}

if docker image inspect "$image" >/dev/null 2>&1; then
  say "$image already exists: nothing to build"
  point_latest
  exit 0
fi

# --- the rootfs --------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/writ-cell-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
say "assembling the rootfs in $rootfs"
mkdir -p "$rootfs"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,workspace,home/cell}
cp "$busybox" "$rootfs/bin/busybox"
chmod 0755 "$rootfs/bin/busybox"
# Explicit links (not `busybox --install`, which would link to the host path of the binary).
applets=0
while IFS= read -r applet; do
  [ -n "$applet" ] && [ "$applet" != "bin/busybox" ] || continue
  mkdir -p "$rootfs/$(dirname "$applet")"
  ln -sf /bin/busybox "$rootfs/$applet"
  applets=$((applets + 1))
done < <("$busybox" --list-full)
[ "$applets" -gt 100 ] || die "busybox --list-full listed only $applets applets"
say "linked $applets applets to /bin/busybox"

if [ "${#debs[@]}" -gt 0 ]; then
  unpacked="$work/debs"
  mkdir -p "$unpacked"
  for deb in "${debs[@]}"; do dpkg-deb -x "$deb" "$unpacked" || die "dpkg-deb -x $deb failed"; done
  # Only what the programs run with: the loader and libraries, then each program's own files
  # (git: its helpers and init templates; curl: the binary). No docs, no maintainer scripts.
  paths=(./lib ./lib64 ./usr/lib/x86_64-linux-gnu)
  [ "$WITH_GIT" = 1 ] && paths+=(./usr/lib/git-core ./usr/share/git-core/templates ./usr/bin/git)
  [ "$WITH_TLS" = 1 ] && paths+=(./usr/bin/curl)
  (cd "$unpacked" && tar --exclude=./usr/lib/x86_64-linux-gnu/gconv -cf - "${paths[@]}") \
    | tar -C "$rootfs" -xf - || die "copying ${paths[*]} into the rootfs failed"
  [ "$WITH_GIT" = 1 ] && say "git layer: $(du -sh "$rootfs/usr/lib/git-core" | cut -f1) of git-core"
  if [ "$WITH_TLS" = 1 ]; then
    # What update-ca-certificates would write with Debian's default selection (every CA the
    # package ships), made here because no maintainer script runs.
    mkdir -p "$rootfs/etc/ssl/certs"
    bundle="$rootfs/etc/ssl/certs/ca-certificates.crt"
    : >"$bundle"
    while IFS= read -r crt; do
      sed -e '$a\' "$crt" >>"$bundle" || die "appending $crt to the CA bundle failed"
    done < <(find "$unpacked/usr/share/ca-certificates" -type f -name '*.crt' | LC_ALL=C sort)
    chmod 0644 "$bundle"
    certs=$(grep -c 'BEGIN CERTIFICATE' "$bundle" || true)
    [ "${certs:-0}" -gt 50 ] || die "the CA bundle made from ca-certificates holds only ${certs:-0} certificates"
    say "tls layer: curl $(dpkg-deb -f "$(printf '%s\n' "${debs[@]}" | grep '/curl_')" Version), CA bundle of $certs certificates at /etc/ssl/certs/ca-certificates.crt"
  fi
  say "deb layer: $(find "$rootfs/lib" "$rootfs/usr/lib/x86_64-linux-gnu" -name '*.so*' | wc -l) shared objects"
fi

cat >"$rootfs/etc/passwd" <<EOF
root:x:0:0:root:/root:/bin/sh
cell:x:$CELL_UID:$CELL_GID:writ cell:/home/cell:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
cat >"$rootfs/etc/group" <<EOF
root:x:0:
cell:x:$CELL_GID:
nogroup:x:65534:
EOF
chmod 0644 "$rootfs/etc/passwd" "$rootfs/etc/group"
chmod 1777 "$rootfs/tmp"
chmod 0755 "$rootfs/workspace" "$rootfs/home/cell"

# --- the image ---------------------------------------------------------------
# Ownership is set in the archive, not on disk, so the result does not depend on who
# runs this: everything root:root, then /workspace and /home/cell appended as 10001.
archive="$work/rootfs.tar"
tar_common=(--numeric-owner --sort=name --mtime=@0 -C "$rootfs")
tar "${tar_common[@]}" --owner=0 --group=0 --exclude=./workspace --exclude=./home/cell -cf "$archive" . \
  || die "tar of the rootfs failed"
tar "${tar_common[@]}" --owner="$CELL_UID" --group="$CELL_GID" -rf "$archive" ./workspace ./home/cell \
  || die "appending /workspace and /home/cell to the archive failed"

say "docker import -> $image"
docker import \
  --change "USER $CELL_UID:$CELL_GID" \
  --change 'WORKDIR /workspace' \
  --change 'ENV PATH=/bin:/usr/bin' \
  --change 'CMD ["/bin/sh"]' \
  --change "LABEL org.opencontainers.image.title=writ-cell writ.cell.inputs=$inputs_hash" \
  --message "writ cell base: $busybox_version" \
  - "$image" <"$archive" >/dev/null \
  || die "docker import of $image failed"

if ! smoke_test "$image" || { [ "$WITH_TLS" = 1 ] && ! smoke_test_tls "$image"; }; then
  docker image rm "$image" >/dev/null 2>&1 || true
  die "removed $image again: it does not run as a cell"
fi
point_latest
say "done: $image ($(docker image inspect --format '{{.Id}}' "$image"))"
