#!/usr/bin/env bash
# Runs the outside conformance agent (../shared/conformance/agent-smoke.mjs) against the
# stack scripts/writ-up.sh started, as a real agent: the operator registers it once
# (`writ principal add`, signed with the operator's key) and the agent then talks to the
# bus with its OWN credential, which may publish writ.ingress.action.<its id> and nothing else.
#
#   scripts/conformance.sh [path/to/agent-smoke.mjs]
#
# Needs the stack up (scripts/writ-up.sh) and the operator's WRIT_HOME (default ./var/writ).
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '[conformance] %s\n' "$*"; }
smoke=${1:-../shared/conformance/agent-smoke.mjs}
[ -f "$smoke" ] || { say "no conformance agent at $smoke"; exit 1; }
home=${WRIT_HOME:-$PWD/var/writ}
[ -f "$home/writ.env" ] || { say "no $home/writ.env: start the stack first (scripts/writ-up.sh)"; exit 1; }
set -a; . "$home/writ.env"; set +a
export PATH="$PWD/node_modules/.bin:$PATH"

agent=${WRIT_CONFORMANCE_AGENT:-conformance-agent}
dir="$home/agents/$agent"
mkdir -p "$dir"; chmod 700 "$dir"
if [ ! -f "$dir/agent.jwk.json" ]; then
  say "generating $agent's key ($dir/agent.jwk.json, 0600)"
  writ principal keygen --kid "$agent-k1" --out "$dir/agent.jwk.json" >"$dir/agent.pub.json"
fi
say "registering $agent (signed by operator $WRIT_OPERATOR_ID; its bus credential: $dir/agent.creds)"
writ principal add --id "$agent" --type agent --role executor --jwk "$dir/agent.pub.json" --creds-out "$dir/agent.creds" >/dev/null

# Its HTTP credential: a bearer token signed by its own key (it reads its own actions and receipts only),
# living 10 minutes: the smoke's run (a minute or two) fits well inside it.
say "minting $agent's HTTP token (writ http token --ttl 10m)"
http_auth=$(writ http token --principal "$agent" --key "$dir/agent.jwk.json" --ttl 10m)

say "node $smoke (as $agent, with its own credentials)"
WRIT_NATS_CREDS="$dir/agent.creds" WRIT_AGENT_ID="$agent" WRIT_AGENT_KEY="$dir/agent.jwk.json" WRIT_HTTP_AUTHORIZATION="$http_auth" \
  WRIT_OPERATOR_ID='' WRIT_OPERATOR_KEY='' node "$smoke"
