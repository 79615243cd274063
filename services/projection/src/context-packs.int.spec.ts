import { EventDraft, type EventEnvelope } from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import { compileContextPack, contextInputsFromLog, contextPackDecider, foldContextPack } from '@writ/kernel';
import { NatsArtifactStore } from '@writ/runtime';
import { deleteStreams, uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionRequest, at, storyIds, taskOpening, type StoryEvent, type StoryIds } from '../test/governed-path.fixture.js';
import { createRig, http, type Rig } from '../test/projection-rig.js';
import { readerToken, registerReader, type Reader } from '../test/readers.js';
import { rebuildIntoFreshSchema, type ProjectionApp } from './bootstrap.js';

/**
 * `GET /v1/attempts/<id>/context` against the real NATS (log and artifact bucket) and
 * Postgres (issue 17): the attempts view records which pack (`context.pack_compiled`), the
 * bytes come from the content-addressed store and are served only when they hash to the
 * record and are that attempt's pack; the scope is the attempt's; a rebuild from the log
 * yields the same rows (the store is not read to fold).
 */

const MiB = 1024 ** 2;
const CODEC = { canonicalJson, sha256Hex };

describe('context packs: reference rows, verified reads, scope, rebuild', () => {
  let rig: Rig;
  let app: ProjectionApp;
  let bucket: NatsArtifactStore;
  let owner: Reader;
  let stranger: Reader;
  let ids: StoryIds;
  let stored: { sha256: string; bytes: string };
  const artifacts = uniqueName('ART');

  /** The pack of the story's attempt, compiled from the log as the orchestrator compiles it, stored, and its event drafted (sha256 and attempt overridable to forge). */
  async function packEvent(of: StoryIds, forged: { attempt?: string; sha256?: string } = {}): Promise<{ event: StoryEvent; sha256: string; bytes: string }> {
    const log = (await rig.store.read(of.task)).map((entry) => entry.event as EventEnvelope);
    const inputs = contextInputsFromLog(log, of.attempt);
    if (inputs === undefined) throw new Error('no inputs');
    const compiled = compileContextPack(inputs.input, CODEC);
    const put = await bucket.put(new TextEncoder().encode(compiled.bytes));
    const attemptId = forged.attempt ?? of.attempt;
    const [decided] = contextPackDecider.decide(
      { type: 'record-context-pack', data: { attempt_id: of.attempt, through_task_seq: inputs.through_task_seq, compiled, uri: put.uri }, metadata: { now: at(50) } },
      foldContextPack(log, of.attempt),
    );
    const payload = { ...decided!.data, attempt_id: attemptId, ...(forged.sha256 === undefined ? {} : { sha256: forged.sha256 }) };
    const draft = EventDraft.parse({
      event_id: uniqueName('ctx'),
      schema_version: 1,
      event_type: 'context.pack_compiled',
      entity_type: 'attempt',
      entity_id: attemptId,
      attempt_id: attemptId,
      occurred_at: at(50),
      actor_type: 'service',
      actor_id: 'writ-orchestrator',
      payload,
      causation_id: null,
      correlation_id: of.task,
      idempotency_key: `context-pack:${attemptId}:${uniqueName('k')}`,
    });
    return { event: { aggregate: 'task', aggregateId: of.task, draft }, sha256: put.sha256, bytes: compiled.bytes };
  }

  beforeAll(async () => {
    rig = await createRig({ WRIT_ARTIFACTS_BUCKET: artifacts });
    bucket = await NatsArtifactStore.open(rig.nc, { bucket: artifacts, maxBytes: 16 * MiB, replicas: 1, failure: (message) => new Error(message) });
    app = await rig.start();
    ids = storyIds(uniqueName('cp'));
    owner = await registerReader(rig, ids.principal, 'agent', ['executor']);
    stranger = await registerReader(rig, uniqueName('agent'), 'agent', ['executor']);
    await rig.append(taskOpening(ids, actionRequest(ids)));
    const pack = await packEvent(ids);
    stored = pack;
    await rig.caughtUp(await rig.append([pack.event]));
  });

  afterAll(async () => {
    await rig?.dispose();
    if (rig !== undefined) await deleteStreams(rig.nc, `OBJ_${artifacts}`).catch(() => undefined);
  });

  it('given a recorded pack, then the attempt row names it and GET /v1/attempts/<id>/context serves the stored bytes verbatim, verified against the sha256', async () => {
    const attempt = await http(app, `/v1/attempts/${ids.attempt}`);
    expect(attempt.body).toMatchObject({ attempt_id: ids.attempt, context_pack_sha256: stored.sha256, context_pack_byte_size: Buffer.byteLength(stored.bytes) });
    const response = await fetch(`${app.url}/v1/attempts/${ids.attempt}/context`, { headers: { authorization: `Bearer ${await readerToken(rig, owner)}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('writ-content-sha256')).toBe(stored.sha256);
    const body = await response.text();
    expect(body).toBe(stored.bytes);
    expect(sha256Hex(body)).toBe(stored.sha256);
    expect(JSON.parse(body)).toMatchObject({ kind: 'context.pack', task_id: ids.task, attempt_id: ids.attempt, secrets: 'excluded' });
  });

  it('given another agent, a forged or unknown attempt id, or an attempt without a pack, then a typed 404 (the same answer as a missing one), never the pack', async () => {
    const asStranger = { authorization: `Bearer ${await readerToken(rig, stranger)}` };
    expect(await http(app, `/v1/attempts/${ids.attempt}/context`, { headers: asStranger })).toMatchObject({ status: 404, body: { code: 'PROJECTION_NOT_FOUND' } });
    expect(await http(app, `/v1/attempts/attempt-${uniqueName('nope')}/context`)).toMatchObject({ status: 404, body: { code: 'PROJECTION_NOT_FOUND' } });
    expect(await http(app, '/v1/attempts/..%2F..%2Fetc/context')).toMatchObject({ status: 400, body: { code: 'PROJECTION_REQUEST_INVALID' } });
    const bare = storyIds(uniqueName('bare'));
    await rig.caughtUp(await rig.append(taskOpening(bare, actionRequest(bare))));
    expect(await http(app, `/v1/attempts/${bare.attempt}/context`)).toMatchObject({ status: 404, body: { code: 'PROJECTION_NOT_FOUND' } });
  });

  it('given a record whose bytes the store lacks, or whose bytes are another attempt\'s pack, then 503 PROJECTION_CONTEXT_PACK_UNAVAILABLE and 502 PROJECTION_CONTEXT_PACK_CORRUPT, never the bytes', async () => {
    const missing = storyIds(uniqueName('miss'));
    await rig.append(taskOpening(missing, actionRequest(missing)));
    const lacking = await packEvent(missing, { sha256: 'e'.repeat(64) });
    const other = storyIds(uniqueName('other'));
    await rig.append(taskOpening(other, actionRequest(other)));
    // The other attempt's record names the first attempt's pack: real bytes, the right hash, the wrong attempt.
    const borrowed = await packEvent(other, { sha256: stored.sha256 });
    await rig.caughtUp(await rig.append([lacking.event, borrowed.event]));
    expect(await http(app, `/v1/attempts/${missing.attempt}/context`)).toMatchObject({ status: 503, body: { code: 'PROJECTION_CONTEXT_PACK_UNAVAILABLE' } });
    const corrupt = await http(app, `/v1/attempts/${other.attempt}/context`);
    expect(corrupt).toMatchObject({ status: 502, body: { code: 'PROJECTION_CONTEXT_PACK_CORRUPT' } });
    expect(JSON.stringify(corrupt.body)).not.toContain('"items"');
  });

  it('given the packs recorded, when the projection is rebuilt from the log alone, then the attempts view is identical (invariant 2)', async () => {
    const report = await rebuildIntoFreshSchema(rig.config);
    expect(report.views.filter((v) => !v.match)).toEqual([]);
    expect(report.identical).toBe(true);
  });
});
