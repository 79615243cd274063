import type { HeartbeatAnomalyCode, ParticipantEvent, SeedVerdict } from '@writ/contracts';
import type { ParticipantState } from './participant.decider.js';

/**
 * The answer to a seed verification, from what the decider appended and the
 * state it led to: no event → `duplicate` (the log already holds this very
 * document's outcome); a refusal event → `refused` with its code; else
 * `accepted` (a heartbeat's anomalies listed; a participant it failed carries
 * the failure code).
 */
export function seedVerdict(seedId: string, events: readonly ParticipantEvent[], after: ParticipantState): SeedVerdict {
  const status = after.status;
  const hashes = after.status === 'none' ? {} : { manifest_hash: after.manifest_hash, ...(after.last_will === null ? {} : { last_will_hash: after.last_will.last_will_hash }) };
  const types = events.map((event) => event.type);
  if (events.length === 0) return { seed_id: seedId, outcome: 'duplicate', status, ...hashes, events: [] };
  for (const event of events) {
    if (event.type === 'participant.spawn_refused' || event.type === 'participant.heartbeat_refused' || event.type === 'participant.retire_refused' || event.type === 'participant.crash_refused') {
      return { seed_id: seedId, outcome: 'refused', status, code: event.data.code, message: event.data.message, ...hashes, events: types };
    }
  }
  const anomalies = events.flatMap((event): HeartbeatAnomalyCode[] => (event.type === 'participant.heartbeat_anomaly' ? [event.data.code] : []));
  const failed = events.find((event) => event.type === 'participant.failed');
  return {
    seed_id: seedId,
    outcome: 'accepted',
    status,
    ...(failed?.type === 'participant.failed' ? { code: failed.data.code, message: failed.data.message } : {}),
    ...(anomalies.length > 0 ? { anomalies } : {}),
    ...hashes,
    events: types,
  };
}
