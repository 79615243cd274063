import type { ParticipantState } from '@writ/kernel';

/**
 * A participant as `GET /v1/seeds/<seed_id>` and `writ participant show` print
 * it: the state folded from `writ.evt.participant.<seed_id>`, without the
 * child's public key material beyond its fingerprint.
 */
export function participantView(state: ParticipantState): Record<string, unknown> {
  if (state.status === 'none') return { seed_id: state.seed_id, status: 'none', refusals: state.refusals };
  return {
    seed_id: state.seed_id,
    status: state.status,
    kind: state.kind,
    role: state.manifest.role,
    mission_id: state.manifest.mission_id,
    actor_id: state.manifest.actor_id,
    parent: state.parent,
    child_key_fingerprint: state.child_key.fingerprint,
    manifest_hash: state.manifest_hash,
    spawned_at: state.spawned_at,
    expires_at: state.expires_at,
    capabilities: state.manifest.capabilities,
    resource_limits: state.manifest.resource_limits,
    constraints: state.manifest.constraints,
    heartbeat: state.heartbeat,
    paused: state.paused,
    ended: state.ended,
    last_will: state.last_will,
    forensic_of: state.forensic_of,
    reconstituted_from: state.reconstituted_from,
    refusals: state.refusals,
    calls: state.calls,
    anomalies: state.anomalies.length,
  };
}
