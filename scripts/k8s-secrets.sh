#!/usr/bin/env bash
# Turns a deployment's directory (`writ init --home <dir> --host 0.0.0.0 --port 4222`) into the
# Secrets and the one ConfigMap the manifests under deploy/k8s name, as YAML on stdout, for
# `kubectl apply -f -`. Nothing is written into the repository: the output is refused when stdout
# is a file inside it, and the Secrets never leave this pipe unless you redirect them yourself.
#
#   scripts/k8s-secrets.sh --home /secure/writ-prod --namespace writ | kubectl apply -f -
#   scripts/k8s-secrets.sh --home <dir> --namespace <ns> --only postgres   # one group (rotation)
#
# Groups (--only, repeatable; default all): nats, services, trust, operator, postgres, deployment.
# The first run also makes the sealing keys of ingress, orchestrator, policy and executor
# (<home>/k8s/<principal>.seal.jwk.json, 0600; Ed25519 private JWKs) and keeps them: replicas and
# every executor node share one key per service, and a later run reuses it. Back up <home>.
# Needs kubectl (client only, no cluster: --dry-run=client) and node. deploy/k8s/README.md has
# what each Secret holds, who mounts it, and how to rotate it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
say() { printf '[k8s-secrets] %s\n' "$*" >&2; }
die() { say "FAILED: $*"; exit 1; }

home="" namespace="" only=()
while [ $# -gt 0 ]; do
  case "$1" in
    --home) home=${2:?--home needs a directory}; shift 2 ;;
    --namespace | -n) namespace=${2:?--namespace needs a name}; shift 2 ;;
    --only) only+=("${2:?--only needs a group}"); shift 2 ;;
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
[ -n "$home" ] || die "--home <dir> is required: the directory writ init wrote"
home=$(cd "$home" && pwd) || die "$home is not a directory"
command -v kubectl >/dev/null || die "kubectl is not on PATH (only its client is used)"
command -v node >/dev/null || die "node is not on PATH (it makes the sealing keys)"

# Secrets redirected into a file of the working tree end up committed sooner or later.
out=$(readlink -f /proc/$$/fd/1 2>/dev/null || true)
case "$out" in "$root"/*) [ -f "$out" ] && die "stdout is $out, inside the repository: write Secrets outside it (or pipe them to kubectl apply -f -)" ;; esac

want() { [ ${#only[@]} -eq 0 ] && return 0; local g; for g in "${only[@]}"; do [ "$g" = "$1" ] && return 0; done; return 1; }
need() { [ -s "$1" ] || die "$1 is missing or empty: run writ init --home $home --host 0.0.0.0 --port 4222 (re-runs create only what is missing)"; }

# The seven services: name, principal id (DEFAULT_SERVICE_PRINCIPALS in libs/runtime), sealing key of its own
# (approval and receipt seal with their rotating signing keys, which live on their key volumes instead).
services=(ingress:ingress:seal orchestrator:writ-orchestrator:seal policy:writ-policy:seal approval:writ-approval:- executor:writ-executor:seal receipt:writ-receipt:- projection:writ-projection:-)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 700 "$tmp"
ns_args=()
[ -n "$namespace" ] && ns_args=(--namespace "$namespace")
first=1
emit() {
  # One object: kubectl's client-side rendering, labelled as Writ's, without the null creationTimestamp.
  local kind=$1 name=$2; shift 2
  [ $first -eq 1 ] || echo '---'
  first=0
  kubectl create "$kind" "$name" "${ns_args[@]}" "$@" --dry-run=client -o yaml | sed '/^  creationTimestamp: null$/d'
}
# A password file's first line only: writ init writes it with a newline, and an env value taken from
# the Secret (PGPASSWORD of the role setup) must not carry one.
first_line() { local file=$1 copy=$tmp/$2; head -n 1 "$file" | tr -d '\r\n' >"$copy"; [ -s "$copy" ] || die "$file is empty"; echo "$copy"; }

if want nats; then
  conf=$home/nats/nats-server.conf
  need "$conf"; need "$home/nats/operator.jwt"
  # The server config is Kubernetes' own (base/nats/nats.conf); from writ init's it takes only what names
  # this deployment's accounts: the system account and the preloaded account JWTs.
  awk '/^system_account:/ { print; next } /^resolver_preload \{/ { on = 1 } on { print } on && /^\}/ { on = 0 }' "$conf" >"$tmp/accounts.conf"
  grep -q '^system_account:' "$tmp/accounts.conf" && grep -q '^resolver_preload {' "$tmp/accounts.conf" || die "$conf holds no system_account / resolver_preload block: was it written by writ init?"
  emit secret generic writ-nats-auth --from-file=operator.jwt="$home/nats/operator.jwt" --from-file=accounts.conf="$tmp/accounts.conf"
fi

if want services; then
  mkdir -p "$home/k8s"
  chmod 700 "$home/k8s"
  for entry in "${services[@]}"; do
    IFS=: read -r name principal seal <<<"$entry"
    need "$home/creds/$name.creds"; need "$home/services/$principal.enrollment.jws"
    files=(--from-file=bus.creds="$home/creds/$name.creds" --from-file=enrollment.jws="$home/services/$principal.enrollment.jws")
    # The credential its consumers pull with, beside bus.creds (a home from before this release has none: run writ init on it).
    if [ -f "$home/creds/$name.consumer.creds" ]; then files+=(--from-file=bus.consumer.creds="$home/creds/$name.consumer.creds"); fi
    if [ "$seal" = seal ]; then
      key=$home/k8s/$principal.seal.jwk.json
      if [ ! -s "$key" ]; then
        # The format the services write themselves (libs/runtime service-key.ts): a private Ed25519 JWK with a kid.
        (umask 077 && node -e '
          const { generateKeyPairSync, randomUUID } = require("node:crypto");
          const [principal, file] = process.argv.slice(1);
          const jwk = generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" });
          require("node:fs").writeFileSync(file, JSON.stringify({ ...jwk, kid: `${principal}-seal-${randomUUID().slice(0, 8)}` }), { mode: 0o600, flag: "wx" });
        ' "$principal" "$key")
        say "made the sealing key of $principal ($key)"
      fi
      files+=(--from-file="$principal.seal.jwk.json=$key")
    fi
    if [ "$name" = projection ]; then
      need "$home/pg/projection.password"
      files+=(--from-file=pg-password="$(first_line "$home/pg/projection.password" projection.password)")
    fi
    emit secret generic "writ-$name" "${files[@]}"
  done
fi

if want trust; then
  need "$home/trust-anchor.json"
  emit secret generic writ-trust-anchor --from-file=trust-anchor.json="$home/trust-anchor.json"
fi

if want operator; then
  # Only the writ-streams Job mounts it (streams are the operator's to create and reconfigure).
  need "$home/creds/operator.creds"
  emit secret generic writ-operator-bus --from-file=operator.creds="$home/creds/operator.creds"
fi

if want postgres; then
  need "$home/pg/admin.password"; need "$home/pg/projection.password"
  emit secret generic writ-postgres-admin --from-file=password="$(first_line "$home/pg/admin.password" admin.password)"
fi

if want deployment; then
  need "$home/writ.env"
  schema=$(sed -n 's/^WRIT_PG_SCHEMA=\([a-z_][a-z0-9_]*\)$/\1/p' "$home/writ.env")
  [ -n "$schema" ] || die "$home/writ.env names no WRIT_PG_SCHEMA: it was written by an older writ init"
  # What writ pg setup reads from a deployment's writ.env (the schema), and nothing of its paths.
  printf 'WRIT_PG_SCHEMA=%s\n' "$schema" >"$tmp/writ.env"
  emit configmap writ-deployment --from-literal=WRIT_PG_SCHEMA="$schema" --from-literal=WRIT_PG_ROLE="${schema}_projection" --from-file=writ.env="$tmp/writ.env"
fi
say "done${namespace:+ (namespace $namespace)}: apply with kubectl apply -f -, then restart what mounts a changed Secret (deploy/k8s/README.md, Rotation)"
