import { BusClient } from '@writ/bus';
import { hasErrorCode, type EventDraft, type EventEnvelope } from '@writ/contracts';
import { ResolutionAuthority, principalHistory } from '@writ/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { append, createRig, disposeRig, ensureBusStreams, events, storedCommands, type Rig } from '../../test/rig.js';
import { commandRequest, grantIssuedDraft, ingressDrafts, policyEvaluatedDraft, taskIds } from '../../test/task-fixtures.js';
import { BusCommandPublisher } from '../outbound/bus.command-publisher.js';
import { EventStoreTaskLog } from '../outbound/event-store.task-log.js';
import { sha256Hex } from '@writ/crypto';
import type { ContextPackStore, StoredPack, TaskLog } from './ports.js';
import { TaskEventHandler } from './task-event.handler.js';

/**
 * The handler against the real log and bus, without a consumer in the way:
 * what a redelivery or a second orchestrator instance does to one event.
 */

let rig: Rig;
let bus: BusClient;

beforeAll(async () => {
  rig = await createRig('handler');
  await ensureBusStreams(rig);
  bus = new BusClient(rig.nc);
});

afterAll(async () => {
  await bus.close();
  await disposeRig(rig);
});

/** A task log that lets something else happen between the handler's read and its append. */
class RacingLog implements TaskLog {
  #raced = false;
  constructor(
    private readonly inner: TaskLog,
    private readonly meanwhile: () => Promise<void>,
  ) {}

  read(taskId: string) {
    return this.inner.read(taskId);
  }

  readThrough(taskId: string, streamSeq: number, hash: string) {
    return this.inner.readThrough(taskId, streamSeq, hash);
  }

  async append(taskId: string, drafts: readonly EventDraft[], expectedSeq: number) {
    if (!this.#raced) {
      this.#raced = true;
      await this.meanwhile();
    }
    return this.inner.append(taskId, drafts, expectedSeq);
  }
}

/** A content-addressed store in memory that fails while `down`: the bucket as seen through an outage. */
class FlakyPackStore implements ContextPackStore {
  down = true;
  readonly blobs = new Map<string, Uint8Array>();

  async put(bytes: Uint8Array): Promise<StoredPack> {
    if (this.down) throw new Error('the artifact bucket is unreachable');
    const sha256 = sha256Hex(bytes);
    this.blobs.set(sha256, bytes);
    return { sha256, uri: `nats-obj://TEST/sha256-${sha256}`, byte_size: bytes.byteLength };
  }
}

function handler(log: TaskLog = new EventStoreTaskLog(rig.store), packs?: ContextPackStore): TaskEventHandler {
  return new TaskEventHandler({
    ...(packs === undefined ? {} : { packs }),
    log,
    commands: new BusCommandPublisher(bus, rig.config.subjects),
    clock: () => new Date(),
    // The principals' histories read from the rig's log, as the registry reads them.
    authority: new ResolutionAuthority({ history: async (id) => principalHistory(id, (await rig.store.readEntity('principal', id)).map(({ event }) => event)) }),
    actorId: 'writ-orchestrator',
    executorPrincipalId: 'writ-executor',
  });
}

async function stored(taskId: string, type: string): Promise<EventEnvelope> {
  const found = (await events(rig, taskId)).find((e) => e.event_type === type);
  if (found === undefined) throw new Error(`no ${type} in ${taskId}`);
  return found;
}

describe('TaskEventHandler against the real log', () => {
  it('given an event handled once, when it is delivered again, then nothing new is appended and the command is only a duplicate', async () => {
    const ids = taskIds(`redeliver-${Date.now()}`);
    const request = commandRequest(ids, ['sh', '-c', 'echo hello > out.txt']);
    await append(rig, ids.task_id, ...ingressDrafts(ids, request), policyEvaluatedDraft(ids, request, 'local_edit_allowed'));
    const trigger = await stored(ids.task_id, 'policy.evaluated');

    const first = await handler().handle(trigger);
    const second = await handler().handle(trigger);

    expect(first.appended).toEqual(['attempt.authorized']);
    expect(second.appended).toEqual([]);
    const authorized = await stored(ids.task_id, 'attempt.authorized');
    const once = await handler().handle(authorized);
    const twice = await handler().handle(authorized);
    expect(once.published).toEqual([{ command: 'approvalIssueGrant', msgId: `${ids.attempt_id}:cmd:approval.issue-grant:1`, duplicate: false }]);
    expect(twice.published).toEqual([{ command: 'approvalIssueGrant', msgId: `${ids.attempt_id}:cmd:approval.issue-grant:1`, duplicate: true }]);
    expect((await storedCommands(rig, rig.config.subjects.approvalIssueGrant)).filter((c) => c['attempt_id'] === ids.attempt_id)).toHaveLength(1);
  });

  it('given a second instance finishes the same work between our read and our append, then our append is absorbed and the log holds it once', async () => {
    const ids = taskIds(`race-same-${Date.now()}`);
    const request = commandRequest(ids, ['sh', '-c', 'echo hello > out.txt']);
    await append(rig, ids.task_id, ...ingressDrafts(ids, request), policyEvaluatedDraft(ids, request, 'local_edit_allowed'));
    const trigger = await stored(ids.task_id, 'policy.evaluated');
    const other = handler();

    const outcome = await handler(new RacingLog(new EventStoreTaskLog(rig.store), async () => void (await other.handle(trigger)))).handle(trigger);

    expect(outcome.appended).toEqual(['attempt.authorized']);
    expect((await events(rig, ids.task_id)).filter((e) => e.event_type === 'attempt.authorized')).toHaveLength(1);
  });

  it('given another writer appends between our read and our append, then we lose with EVENTSTORE_CONFLICT, and the retry re-reads and decides on the new log', async () => {
    const ids = taskIds(`race-other-${Date.now()}`);
    const request = commandRequest(ids, ['sh', '-c', 'echo hello > out.txt']);
    await append(rig, ids.task_id, ...ingressDrafts(ids, request), policyEvaluatedDraft(ids, request, 'local_edit_allowed'));
    const trigger = await stored(ids.task_id, 'policy.evaluated');
    const racing = handler(new RacingLog(new EventStoreTaskLog(rig.store), () => append(rig, ids.task_id, grantIssuedDraft(ids, request))));

    let error: unknown;
    try {
      await racing.handle(trigger);
    } catch (caught) {
      error = caught;
    }
    expect(hasErrorCode(error, 'EVENTSTORE_CONFLICT')).toBe(true);

    const retried = await racing.handle(trigger);
    expect(retried.appended).toEqual(['attempt.authorized', 'attempt.grant_attached']);
    const log = (await events(rig, ids.task_id)).map((e) => e.event_type);
    expect(log.filter((t) => t === 'attempt.authorized')).toHaveLength(1);
  });

  it('given the artifact bucket down, when an attempt\'s request is handled, then the policy command still goes out and the handling fails ORCHESTRATOR_CONTEXT_PACK_STORE_FAILED with no pack recorded; redelivered with the bucket back, the pack is stored then recorded once', async () => {
    // given
    const ids = taskIds(`pack-outage-${Date.now()}`);
    await append(rig, ids.task_id, ...ingressDrafts(ids, commandRequest(ids, ['true'])));
    const trigger = await stored(ids.task_id, 'attempt.awaiting_policy');
    const store = new FlakyPackStore();
    // when the bucket is down
    let error: unknown;
    try {
      await handler(undefined, store).handle(trigger);
    } catch (caught) {
      error = caught;
    }
    // then the governed path went on, and nothing claims a pack that is not stored
    expect(hasErrorCode(error, 'ORCHESTRATOR_CONTEXT_PACK_STORE_FAILED')).toBe(true);
    expect((await storedCommands(rig, rig.config.subjects.policyEvaluate)).filter((c) => c['attempt_id'] === ids.attempt_id)).toHaveLength(1);
    expect((await events(rig, ids.task_id)).filter((e) => e.event_type.startsWith('context.'))).toEqual([]);
    // when redelivered with the bucket back, then stored first and recorded once; a further delivery appends nothing
    store.down = false;
    const retried = await handler(undefined, store).handle(trigger);
    expect(retried.appended).toEqual(['context.pack_compiled']);
    const again = await handler(undefined, store).handle(trigger);
    expect(again.appended).toEqual([]);
    const recorded = (await events(rig, ids.task_id)).filter((e) => e.event_type.startsWith('context.'));
    expect(recorded).toHaveLength(1);
    expect(store.blobs.has(String(recorded[0]?.payload['sha256']))).toBe(true);
    expect(recorded[0]).toMatchObject({ entity_type: 'attempt', entity_id: ids.attempt_id, attempt_id: ids.attempt_id, idempotency_key: `context-pack:${ids.attempt_id}` });
  });
});
