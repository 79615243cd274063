import { ContextPack, ContextSection, type EventEnvelope, type KnowledgeLimits, type WorkingStateEntry } from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import { compileContextPack, contextInputsFromLog } from '@writ/kernel';
import { SIGNED_REQUESTS, signRequest, type NatsArtifactStore } from '@writ/runtime';
import { waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerPrincipal, type TestPrincipal } from '../test/claims-rig.js';
import { append, createRig, disposeRig, events, rigBucket, startApp, stopApp, waitForEvents, waitForIdle, type Rig } from '../test/rig.js';
import { AGENT, commandRequest, followUpRequest, ingressDrafts, policyEvaluatedDraft, taskIds, type TaskIds } from '../test/task-fixtures.js';

/**
 * Context packs against the running orchestrator and the real NATS (issue 17, exit
 * criterion 5): each attempt's pack is compiled from its task's log once its request is
 * in it, stored content-addressed in the artifact bucket, and recorded by
 * `context.pack_compiled`; the stored bytes are what anyone compiling the same log gets.
 */

const CANARY = 'CANARY-orc-ctx-93b1f7';
let rig: Rig;
let agent: TestPrincipal;
let bucket: NatsArtifactStore;
const name = (suffix: string) => `${suffix}-${Math.random().toString(16).slice(2, 8)}`;

beforeAll(async () => {
  rig = await createRig('context');
  agent = await registerPrincipal(rig, AGENT);
  bucket = await rigBucket(rig);
  await startApp(rig);
});

afterAll(async () => {
  await disposeRig(rig);
});

const packEvents = async (taskId: string): Promise<EventEnvelope[]> => (await events(rig, taskId)).filter((event) => event.event_type.startsWith('context.'));

async function packOf(taskId: string, attemptId: string): Promise<{ event: EventEnvelope; bytes: string; pack: ContextPack }> {
  const event = await waitFor(async () => (await packEvents(taskId)).find((candidate) => candidate.attempt_id === attemptId), { what: `the pack of ${attemptId}`, timeoutMs: 20_000, intervalMs: 25 });
  const stored = await bucket.get(String(event.payload['sha256']));
  if (stored === null) throw new Error(`the bucket holds no sha256-${String(event.payload['sha256'])}`);
  const bytes = new TextDecoder().decode(stored);
  return { event, bytes, pack: ContextPack.parse(JSON.parse(bytes)) };
}

/** Sends a revision and expects its answer: accepted, or refused with `refusal`. */
async function revise(ids: TaskIds, requestId: string, expected: number, set: WorkingStateEntry[], refusal = ''): Promise<void> {
  const jws = (await signRequest(SIGNED_REQUESTS.workingStateRevision, { task_id: ids.task_id, request_id: requestId, expected_revision: expected, set, remove: [] }, { principalId: agent.id, key: agent.key, now: new Date() })).jws;
  const reply = await rig.nc.request(rig.config.subjects.reviseWorkingState, JSON.stringify({ task_id: ids.task_id, request_jws: jws }), { timeout: 15_000 });
  expect(reply.headers?.get('Writ-Error-Code') ?? '').toBe(refusal);
}

async function assertBelief(ids: TaskIds, requestId: string, belief: Record<string, unknown>, refusal = ''): Promise<void> {
  const change = { op: 'assert', belief: { scope: 'repo:writ', evidence_refs: [{ kind: 'artifact', id: 'art-1' }], confidence: 0.7, trust_tier: 'observed', ...belief } };
  const jws = (await signRequest(SIGNED_REQUESTS.beliefRequest, { task_id: ids.task_id, request_id: requestId, change } as never, { principalId: agent.id, key: agent.key, now: new Date() })).jws;
  const reply = await rig.nc.request(rig.config.subjects.changeBelief, JSON.stringify({ task_id: ids.task_id, request_jws: jws }), { timeout: 15_000 });
  expect(reply.headers?.get('Writ-Error-Code') ?? '').toBe(refusal);
}

/** The second attempt of the task (a follow-up request, as ingress appends it on an existing task). */
function secondAttempt(first: TaskIds, suffix: string): { ids: TaskIds; drafts: ReturnType<typeof ingressDrafts> } {
  const ids = { task_id: first.task_id, step_id: `stp-${suffix}`, attempt_id: `att-${suffix}` };
  return { ids, drafts: ingressDrafts(ids, followUpRequest(first.task_id, commandRequest(first, ['true']), `ar-${suffix}`), { existingTask: true }) };
}

describe('context packs compiled by the running orchestrator', () => {
  it('given a task with working state and beliefs (one secret), when its next attempt is submitted, then its pack is stored under its sha256, in 15.7 order, each item naming its source, the canary nowhere, and a recompile from the log is the same bytes', async () => {
    // given: the task (attempt 1, whose pack holds the contracts only), then knowledge
    const first = taskIds(name('ctx'));
    await append(rig, first.task_id, ...ingressDrafts(first, commandRequest(first, ['true'])));
    const one = await packOf(first.task_id, first.attempt_id);
    expect(one.pack.items.map((item) => item.section)).toEqual(['task_contract', 'step_contract', 'policy_constraints']);
    const handle = (value: unknown): WorkingStateEntry => ({ key: 'handle.token', kind: 'resource_handle', value: value as WorkingStateEntry['value'], sensitivity: 'secret' });
    const objective: WorkingStateEntry = { key: 'objective.main', kind: 'objective', value: 'make the build green' };
    // the agent tries to record the secret itself: refused, nothing recorded; by reference it is
    await revise(first, 'req-ws-0', 0, [objective, handle(CANARY)], 'KNOWLEDGE_SECRET_BY_VALUE');
    await revise(first, 'req-ws-1', 0, [objective, handle({ secret_ref: 'vault:deploy/token' })]);
    await assertBelief(first, 'req-b-1', { belief_id: 'b-tests', claim: 'the tests fail on main' });
    await assertBelief(first, 'req-b-0', { belief_id: 'b-secret', claim: 'the deploy token', structured_assertion: { token: CANARY }, sensitivity: 'secret' }, 'KNOWLEDGE_SECRET_BY_VALUE');
    await assertBelief(first, 'req-b-2', { belief_id: 'b-secret', claim: 'the deploy token is in the vault', structured_assertion: { secret_ref: 'vault:deploy/token' }, sensitivity: 'secret' });
    // when
    const { ids, drafts } = secondAttempt(first, name('two'));
    await append(rig, ids.task_id, ...drafts);
    const two = await packOf(ids.task_id, ids.attempt_id);
    // then: stored by content, as the event says
    expect(sha256Hex(two.bytes)).toBe(two.event.payload['sha256']);
    expect(two.event.payload).toMatchObject({ attempt_id: ids.attempt_id, byte_size: Buffer.byteLength(two.bytes), items: two.pack.items.length, omitted: two.pack.omitted.length, secrets: 'excluded' });
    expect(two.event.payload['uri']).toBe(`nats-obj://${rig.config.env.WRIT_ARTIFACTS_BUCKET}/sha256-${String(two.event.payload['sha256'])}`);
    expect(two.event.actor_id).toBe(rig.config.env.WRIT_ORCHESTRATOR_PRINCIPAL_ID);
    // in the 15.7 precedence, every item traced to its source
    const order = two.pack.items.map((item) => ContextSection.options.indexOf(item.section));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(two.pack.items.map((item) => `${item.section}:${item.source.id}`)).toEqual([
      `task_contract:action_request:${commandRequest(first, ['true']).action_request_id}`,
      `step_contract:${String(drafts.find((d) => d.event_type === 'step.planned')?.payload['contract_ref'])}`,
      'policy_constraints:policy:local_edit_allowed',
      'working_state:objective.main',
      'beliefs:b-tests',
    ]);
    expect(two.pack.omitted.map((o) => `${o.source.id}:${o.reason}`)).toEqual(['handle.token:SECRET_EXCLUDED', 'b-secret:SECRET_EXCLUDED']);
    // no secret in the pack nor in its event, nor its reference (the profile excludes secrets); the refused canary in no event of the task
    expect(two.bytes).not.toContain(CANARY);
    expect(two.bytes).not.toContain('vault:deploy/token');
    expect(JSON.stringify(await packEvents(ids.task_id))).not.toContain(CANARY);
    expect(JSON.stringify(await events(rig, ids.task_id))).not.toContain(CANARY);
    // as of the attempt's submission (a log time), and the log alone compiles the same bytes
    const log = await events(rig, ids.task_id);
    const opening = log.find((event) => event.event_type === 'attempt.awaiting_policy' && event.attempt_id === ids.attempt_id);
    expect(two.pack.as_of).toBe(opening?.occurred_at);
    expect(two.event.payload['through_task_seq']).toBe(opening?.task_seq);
    const inputs = contextInputsFromLog(log, ids.attempt_id);
    expect(inputs && compileContextPack(inputs.input, { canonicalJson, sha256Hex }).bytes).toBe(two.bytes);
    // and the first attempt's pack did not change with what came after it
    expect((await packEvents(first.task_id)).filter((event) => event.attempt_id === first.attempt_id)).toHaveLength(1);
  });

  it('given a verdict recording a profile with small knowledge limits, when the agent revises past them, then KNOWLEDGE_WORKING_STATE_TOO_LARGE under the limits opened with, a later profile refuses nothing retroactively, and the next pack keeps to the budget', async () => {
    // given: the task, and policy's verdict on its first attempt under a profile with small limits
    const small: KnowledgeLimits = { working_state: { max_entries: 2, max_entry_bytes: 256, max_total_bytes: 512 }, context_pack: { max_items: 4, max_bytes: 4_096, allow_secret_references: false } };
    const first = taskIds(name('lim'));
    const request = commandRequest(first, ['true']);
    await append(rig, first.task_id, ...ingressDrafts(first, request));
    await packOf(first.task_id, first.attempt_id);
    await append(rig, first.task_id, policyEvaluatedDraft(first, request, 'local_edit_allowed', { knowledge: small }));
    const entry = (key: string): WorkingStateEntry => ({ key, kind: 'pending_question', value: `what about ${key}?` });
    // when: within the limits, then past them
    await revise(first, 'req-lim-1', 0, [entry('q.one'), entry('q.two')]);
    await revise(first, 'req-lim-2', 1, [entry('q.three')], 'KNOWLEDGE_WORKING_STATE_TOO_LARGE');
    await revise(first, 'req-lim-3', 1, [{ key: 'q.big', kind: 'pending_question', value: 'x'.repeat(300) }], 'KNOWLEDGE_WORKING_STATE_TOO_LARGE');
    // then: the working state was opened with the profile's limits, and the refusals appended nothing
    const opened = (await events(rig, first.task_id)).filter((event) => event.event_type === 'working_state.opened');
    expect(opened.map((event) => event.payload['limits'])).toEqual([small.working_state]);
    expect((await events(rig, first.task_id)).filter((event) => event.event_type === 'working_state.revised')).toHaveLength(1);
    // when: a later verdict records a profile with large limits (applied since), and the agent asserts beliefs
    const { ids, drafts } = secondAttempt(first, name('lim2'));
    const large: KnowledgeLimits = { working_state: { max_entries: 100, max_entry_bytes: 4_096, max_total_bytes: 65_536 }, context_pack: small.context_pack };
    await assertBelief(first, 'req-lim-b1', { belief_id: 'b-lim-1', claim: 'one' });
    await assertBelief(first, 'req-lim-b2', { belief_id: 'b-lim-2', claim: 'two' });
    await append(rig, first.task_id, ...drafts);
    // then: the pack of the next attempt keeps to the small budget recorded before it (the contracts, the policy and its decision), and says what it left out
    const two = await packOf(ids.task_id, ids.attempt_id);
    expect(two.pack.budget).toMatchObject({ max_items: 4, max_bytes: 4_096, used_items: 4 });
    expect(two.pack.omitted.map((o) => `${o.source.id}:${o.reason}`)).toEqual(['q.one:BUDGET_EXCEEDED', 'q.two:BUDGET_EXCEEDED', 'b-lim-1:BUDGET_EXCEEDED', 'b-lim-2:BUDGET_EXCEEDED']);
    // and a verdict of the larger profile leaves the opened limits in force: the working state is not re-sized after the fact
    await append(rig, first.task_id, policyEvaluatedDraft(ids, followUpRequest(first.task_id, request, `ar-${ids.attempt_id}`), 'local_edit_allowed', { knowledge: large }));
    await revise(first, 'req-lim-4', 1, [entry('q.three')], 'KNOWLEDGE_WORKING_STATE_TOO_LARGE');
  });

  it('given the pack already stored and the orchestrator down before it appended (a crash between store and append), when it comes back, then it appends context.pack_compiled once, for those bytes', async () => {
    // given: the attempt in the log while no orchestrator runs, and its pack's bytes already in the bucket (the orphan of the crash)
    const [app] = rig.apps;
    if (app === undefined) throw new Error('no app');
    await waitForIdle(rig);
    await stopApp(rig, app);
    const ids = taskIds(name('crash'));
    await append(rig, ids.task_id, ...ingressDrafts(ids, commandRequest(ids, ['true'])));
    const inputs = contextInputsFromLog(await events(rig, ids.task_id), ids.attempt_id);
    if (inputs === undefined) throw new Error('no inputs');
    const compiled = compileContextPack(inputs.input, { canonicalJson, sha256Hex });
    const orphan = await bucket.put(new TextEncoder().encode(compiled.bytes));
    // when: it comes back and handles every event of the task (each a chance to record the pack again), twice over
    await startApp(rig);
    await startApp(rig);
    await waitForEvents(rig, ids.task_id, 'context.pack_compiled');
    await waitForIdle(rig);
    // then
    const recorded = await packEvents(ids.task_id);
    expect(recorded.map((event) => [event.event_type, event.payload['sha256']])).toEqual([['context.pack_compiled', orphan.sha256]]);
    expect(`sha256:${orphan.sha256}`).toBe(compiled.content_hash);
  });
});
