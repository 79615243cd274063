import { Id, parseContract } from '@writ/contracts';
import { evolveParticipant, fold, initialParticipantState, type ParticipantState } from '@writ/kernel';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { attachEventLog, connectNats } from '../event-log.js';

/** The participant decider's fold alone (showing needs no verification, so no cryptography). */
const FOLD = { initialState: initialParticipantState, decide: () => [], evolve: evolveParticipant };

/**
 * `writ participant show <seed_id> [--json]`: the participant (a seed spawned
 * under seed 002) folded from `writ.evt.participant.<seed_id>`, read from the
 * log itself (never a projection).
 */
export async function participantShow(seedId: string, options: { json?: boolean }, conn: Connection, io: CliIo): Promise<ParticipantState> {
  const id = parseContract('seed id', Id, seedId);
  const nc = await connectNats(conn);
  let state: ParticipantState;
  let count = 0;
  try {
    const store = await attachEventLog(nc, conn);
    const events = (await store.headOfEntity('participant', id)).taskSeq === 0 ? [] : await store.readEntity('participant', id);
    count = events.length;
    state = fold(FOLD, events.map(({ event }) => ({ type: event.event_type, data: event.payload })));
  } finally {
    await nc.drain().catch(() => undefined);
  }
  if (count === 0) throw new CliError('CLI_PARTICIPANT_NOT_FOUND', `nothing was recorded for seed ${id}`);
  if (options.json === true) {
    io.stdout(JSON.stringify(state));
    return state;
  }
  if (state.status === 'none') {
    io.stdout(`${id}: never spawned (${state.refusals} refused document(s); see the log for their codes)`);
    return state;
  }
  io.stdout(`${state.seed_id} ${state.status} (${state.kind}, role ${state.manifest.role}, mission ${state.manifest.mission_id})`);
  io.stdout(`  parent: ${state.parent.kind} ${state.parent.id} (key ${state.parent.key_fingerprint})`);
  io.stdout(`  child key: ${state.child_key.fingerprint}`);
  io.stdout(`  manifest: ${state.manifest_hash}`);
  io.stdout(`  ttl: ${state.spawned_at} .. ${state.expires_at}`);
  io.stdout(`  heartbeats: last ${state.heartbeat.last_seq} at ${state.heartbeat.last_at ?? '-'}, ${state.heartbeat.anomalies} anomal${state.heartbeat.anomalies === 1 ? 'y' : 'ies'}`);
  const caps = state.manifest.capabilities;
  io.stdout(`  capabilities: fs [${caps.fs.join(', ')}] net [${caps.net.join(', ')}] shell [${caps.shell.join(', ')}] providers [${caps.providers.join(', ')}]`);
  if (state.forensic_of !== null) io.stdout(`  forensic of: ${state.forensic_of.seed_id} (manifest ${state.forensic_of.manifest_hash})`);
  if (state.reconstituted_from !== null) io.stdout(`  reconstituted from: ${state.reconstituted_from.seed_id} (Last Will ${state.reconstituted_from.last_will_hash})`);
  if (state.paused !== null) io.stdout(`  paused at ${state.paused.at}: ${state.paused.drift.map((d) => `${d.constraint} ${d.observed} (manifest ${d.expected})`).join('; ')}`);
  if (state.ended !== null) io.stdout(`  ended ${state.ended.status} at ${state.ended.at}${state.ended.code === null ? '' : ` (${state.ended.code})`}`);
  if (state.last_will !== null) io.stdout(`  Last Will ${state.last_will.last_will_hash}: ${state.last_will.will_status}, ${state.last_will.deltas_applied} delta(s) applied, ${state.last_will.artifacts.length} artifact(s)`);
  if (state.refusals > 0) io.stdout(`  refused documents: ${state.refusals}`);
  return state;
}
