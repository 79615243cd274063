import { EventDraft, httpAudience, type PrincipalRole, type PrincipalType } from '@writ/contracts';
import { PUBLISHED_VIEWS, type PublishedView } from '@writ/contracts/projection-rows';
import { generateEd25519Key, type Ed25519SigningKey } from '@writ/crypto';
import { mintHttpToken } from '@writ/runtime';
import { uniqueName } from '@writ/testing';
import type { StoryEvent } from './governed-path.fixture.js';
import type { Rig } from './projection-rig.js';

/** A principal registered in the test's log, with the key its bearer tokens are signed by. */
export interface Reader {
  readonly id: string;
  readonly key: Ed25519SigningKey;
}

function registered(id: string, type: PrincipalType, roles: PrincipalRole[], key: Ed25519SigningKey): StoryEvent {
  const draft = EventDraft.parse({
    event_id: uniqueName('evt'),
    schema_version: 1,
    event_type: 'principal.registered',
    entity_type: 'principal',
    entity_id: id,
    occurred_at: new Date().toISOString(),
    actor_type: 'service',
    actor_id: 'writ-ingress',
    payload: { principal_id: id, principal_type: type, display_name: id, roles, keys: [key.publicJwk], registered_by: 'test-operator', at: new Date().toISOString() },
    causation_id: null,
    correlation_id: id,
  });
  return { aggregate: 'principal', aggregateId: id, draft };
}

/** Registers `id` (as ingress would append it) with a fresh key. */
export async function registerReader(rig: Rig, id: string, type: PrincipalType, roles: PrincipalRole[]): Promise<Reader> {
  const key = await generateEd25519Key({ kid: `${id}-k1` });
  await rig.append([registered(id, type, roles, key)]);
  return { id, key };
}

/** A bearer token of `reader` for the rig's API (`ttlSeconds` default 300). */
export async function readerToken(rig: Rig, reader: Reader, ttlSeconds?: number): Promise<string> {
  return mintHttpToken({ principalId: reader.id, key: reader.key, audience: httpAudience(rig.root), now: new Date(), ...(ttlSeconds === undefined ? {} : { ttlSeconds }) });
}

/** The live rows of the published views as the database holds them: `<view>/<id>` → row_version. */
export async function liveVersions(rig: Rig, views: readonly PublishedView[] = PUBLISHED_VIEWS): Promise<Map<string, number>> {
  const topicColumn: Record<PublishedView, string> = {
    actions: 'action_request_id',
    tasks: 'task_id',
    approvals: 'approval_id',
    grants: 'grant_id',
    receipts: 'receipt_id',
    principals: 'principal_id',
    steps: 'step_id',
    attempts: 'attempt_id',
    artifacts: 'artifact_id',
    decisions: 'decision_id',
    cells: 'cell_id',
    working_states: 'task_id',
    beliefs: 'belief_id',
    memory: 'memory_id',
  };
  const live = new Map<string, number>();
  for (const view of views) {
    const { rows } = await rig.db.query(`SELECT "${topicColumn[view]}" AS id, row_version FROM ${rig.table(view)}`);
    for (const row of rows as Array<{ id: string; row_version: string }>) live.set(`${view}/${row.id}`, Number(row.row_version));
  }
  return live;
}

