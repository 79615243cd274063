import type { BeliefAssertion, BeliefRequestReply, BeliefRequestSubmission, EventEnvelope, WorkingStateEntry, WorkingStateRevisionReply } from '@writ/contracts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateEd25519Key } from '@writ/crypto';
import { EventStore, eventSealer, isEventStoreError } from '@writ/eventstore';
import { SIGNED_REQUESTS, registerServicePrincipal, serviceAuthorship, signRequest } from '@writ/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerPrincipal, type TestPrincipal } from '../test/claims-rig.js';
import { append, createRig, disposeRig, events, startApp, waitForIdle, type Rig } from '../test/rig.js';
import { AGENT, commandRequest, ingressDrafts, taskIds, type TaskIds } from '../test/task-fixtures.js';

/**
 * Working state revisions and belief changes against the running
 * orchestrator (issue 17): signed requests over NATS request/reply, verified
 * like claims, decided by the kernel's deciders and appended to the task
 * stream; every refusal is a code, and nothing is appended for it.
 */

let rig: Rig;
let agent: TestPrincipal;
let intruder: TestPrincipal;
let director: TestPrincipal;
const name = (suffix: string) => `${suffix}-${Math.random().toString(16).slice(2, 8)}`;

beforeAll(async () => {
  rig = await createRig('knowledge');
  agent = await registerPrincipal(rig, AGENT);
  intruder = await registerPrincipal(rig, 'intruder-1');
  director = await registerPrincipal(rig, 'director-k', 'user', ['director']);
  await startApp(rig);
});

afterAll(async () => {
  await disposeRig(rig);
});

/** A task owned by AGENT, opened as ingress opens it; the orchestrator has handled its opening. */
async function openTask(suffix: string): Promise<TaskIds> {
  const ids = taskIds(name(suffix));
  await append(rig, ids.task_id, ...ingressDrafts(ids, commandRequest(ids, ['true'])));
  await waitForIdle(rig);
  return ids;
}

type Answer<R> = { reply?: R; code?: string; message?: string };

async function ask<R>(subject: string, body: unknown): Promise<Answer<R>> {
  const msg = await rig.nc.request(subject, JSON.stringify(body), { timeout: 15_000 });
  const code = msg.headers?.get('Writ-Error-Code');
  const json = msg.json<Record<string, unknown>>();
  if (code !== undefined && code !== '') return { code, message: String(json['message']) };
  return { reply: json as R };
}

const entry = (key: string, value: unknown, kind: WorkingStateEntry['kind'] = 'objective'): WorkingStateEntry => ({ key, kind, value: value as WorkingStateEntry['value'] });

async function signRevision(
  ids: TaskIds,
  by: TestPrincipal,
  fields: { request_id: string; expected_revision: number; set?: WorkingStateEntry[]; remove?: string[]; compact?: { references: string[] } },
): Promise<string> {
  const signed = await signRequest(
    SIGNED_REQUESTS.workingStateRevision,
    {
      task_id: ids.task_id,
      request_id: fields.request_id,
      expected_revision: fields.expected_revision,
      set: fields.set ?? [],
      remove: fields.remove ?? [],
      ...(fields.compact === undefined ? {} : { compact: fields.compact }),
    },
    { principalId: by.id, key: by.key, now: new Date() },
  );
  return signed.jws;
}

async function signBelief(ids: TaskIds, by: TestPrincipal, requestId: string, change: BeliefRequestSubmission['change']): Promise<string> {
  return (await signRequest(SIGNED_REQUESTS.beliefRequest, { task_id: ids.task_id, request_id: requestId, change }, { principalId: by.id, key: by.key, now: new Date() })).jws;
}

const revise = (ids: TaskIds, jws: string) => ask<WorkingStateRevisionReply>(rig.config.subjects.reviseWorkingState, { task_id: ids.task_id, request_jws: jws });
const changeBelief = (ids: TaskIds, jws: string) => ask<BeliefRequestReply>(rig.config.subjects.changeBelief, { task_id: ids.task_id, request_jws: jws });

const knowledgeEvents = async (ids: TaskIds): Promise<EventEnvelope[]> =>
  (await events(rig, ids.task_id)).filter((event) => event.event_type.startsWith('working_state.') || event.event_type.startsWith('belief.'));

const observed = (beliefId: string, claim: string, extra: Partial<BeliefAssertion> = {}): BeliefAssertion => ({
  belief_id: beliefId,
  claim,
  scope: 'repo:writ',
  evidence_refs: [{ kind: 'artifact', id: 'art-1' }],
  confidence: 0.7,
  trust_tier: 'observed',
  ...extra,
});

describe('working state revisions against the running orchestrator', () => {
  it('given a revision signed by the task agent, when sent twice, then it is appended once (opened, revised) by the orchestrator and the resend answers duplicate', async () => {
    // given
    const ids = await openTask('ws-once');
    const jws = await signRevision(ids, agent, { request_id: 'req-1', expected_revision: 0, set: [entry('objective.main', 'greet the user'), entry('plan.current', { step: 1 }, 'plan_pointer')] });
    // when
    const first = await revise(ids, jws);
    const again = await revise(ids, jws);
    // then
    expect(first.reply).toMatchObject({ task_id: ids.task_id, request_id: 'req-1', status: 'accepted', revision: 1, duplicate: false });
    expect(again.reply).toMatchObject({ request_id: 'req-1', revision: 1, duplicate: true });
    const appended = await knowledgeEvents(ids);
    expect(appended.map((event) => event.event_type)).toEqual(['working_state.opened', 'working_state.revised']);
    expect(appended.every((event) => event.actor_id === rig.config.env.WRIT_ORCHESTRATOR_PRINCIPAL_ID)).toBe(true);
    expect(appended[1]?.payload).toMatchObject({ revision: 1, request_id: 'req-1', revised_by: AGENT, removed: [] });
    // and the orchestrator's own consumer plans nothing from them (no task state moves on a knowledge event)
    const before = (await events(rig, ids.task_id)).length;
    await waitForIdle(rig);
    expect((await events(rig, ids.task_id)).length).toBe(before);
  });

  it('given an accepted revision, when its request_id comes again signed anew, then the same change is a duplicate and another change, or another signer, is ORCHESTRATOR_KNOWLEDGE_REQUEST_REUSED with nothing appended', async () => {
    // given
    const ids = await openTask('ws-reuse');
    const set = [entry('objective.main', 'ship the fix')];
    expect((await revise(ids, await signRevision(ids, agent, { request_id: 'req-r', expected_revision: 0, set }))).reply).toMatchObject({ revision: 1, duplicate: false });
    // when / then: the same change, signed again later (a client's retry), answers what the first did
    expect((await revise(ids, await signRevision(ids, agent, { request_id: 'req-r', expected_revision: 0, set }))).reply).toMatchObject({ revision: 1, duplicate: true });
    // another change under the same id is never answered as the first one
    const other = await revise(ids, await signRevision(ids, agent, { request_id: 'req-r', expected_revision: 1, set: [entry('objective.main', 'delete the branch')] }));
    expect(other.code).toBe('ORCHESTRATOR_KNOWLEDGE_REQUEST_REUSED');
    expect(other.message).toContain('req-r');
    const removal = await revise(ids, await signRevision(ids, agent, { request_id: 'req-r', expected_revision: 1, remove: ['objective.main'] }));
    expect(removal.code).toBe('ORCHESTRATOR_KNOWLEDGE_REQUEST_REUSED');
    // nor is the same change signed by someone else
    expect((await revise(ids, await signRevision(ids, director, { request_id: 'req-r', expected_revision: 0, set }))).code).toBe('ORCHESTRATOR_KNOWLEDGE_REQUEST_REUSED');
    expect((await knowledgeEvents(ids)).map((event) => event.event_type)).toEqual(['working_state.opened', 'working_state.revised']);
  });

  it('given a revision signed by another agent, then ORCHESTRATOR_KNOWLEDGE_SIGNER_NOT_ALLOWED and nothing is appended; a director may revise', async () => {
    const ids = await openTask('ws-stranger');
    const stranger = await revise(ids, await signRevision(ids, intruder, { request_id: 'req-x', expected_revision: 0, set: [entry('objective.main', 'take over')] }));
    expect(stranger.code).toBe('ORCHESTRATOR_KNOWLEDGE_SIGNER_NOT_ALLOWED');
    expect(await knowledgeEvents(ids)).toEqual([]);
    const byDirector = await revise(ids, await signRevision(ids, director, { request_id: 'req-d', expected_revision: 0, set: [entry('constraint.budget', 'no network', 'constraint')] }));
    expect(byDirector.reply).toMatchObject({ revision: 1, duplicate: false });
  });

  it('given a revision past the entry size limit, then KNOWLEDGE_WORKING_STATE_TOO_LARGE and nothing is appended; a stale expected_revision is KNOWLEDGE_WORKING_STATE_REVISION_CONFLICT', async () => {
    const ids = await openTask('ws-large');
    // the default limit is 4,096 bytes per entry: this one is over it
    const large = await revise(ids, await signRevision(ids, agent, { request_id: 'req-big', expected_revision: 0, set: [entry('cache.page', 'x'.repeat(5_000), 'cache')] }));
    expect(large.code).toBe('KNOWLEDGE_WORKING_STATE_TOO_LARGE');
    expect(await knowledgeEvents(ids)).toEqual([]);
    expect((await revise(ids, await signRevision(ids, agent, { request_id: 'req-ok', expected_revision: 0, set: [entry('objective.main', 'small')] }))).reply?.revision).toBe(1);
    const stale = await revise(ids, await signRevision(ids, agent, { request_id: 'req-stale', expected_revision: 0, set: [entry('objective.main', 'again')] }));
    expect(stale.code).toBe('KNOWLEDGE_WORKING_STATE_REVISION_CONFLICT');
    expect((await knowledgeEvents(ids)).map((event) => event.event_type)).toEqual(['working_state.opened', 'working_state.revised']);
  });

  it('given a working state at its total size limit, when the same entry is sent with compact, then the unreferenced cache goes, the entry fits, and one compaction and one revision are appended', async () => {
    // given: the default total limit is 65,536 bytes; sixteen cache pages of ~4,000 bytes fill it
    const ids = await openTask('ws-compact');
    const pages = Array.from({ length: 16 }, (_, n) => entry(`cache.page_${n}`, 'x'.repeat(3_950), 'cache'));
    expect((await revise(ids, await signRevision(ids, agent, { request_id: 'req-fill', expected_revision: 0, set: [...pages, entry('objective.main', 'ship it'), entry('plan.current', 'step 2', 'plan_pointer')] }))).reply?.revision).toBe(1);
    const note = entry('uncertainty.db', 'y'.repeat(3_900), 'uncertainty');
    expect((await revise(ids, await signRevision(ids, agent, { request_id: 'req-full', expected_revision: 1, set: [note] }))).code).toBe('KNOWLEDGE_WORKING_STATE_TOO_LARGE');
    // when: sent again with compact, keeping the current plan
    const compacted = await revise(ids, await signRevision(ids, agent, { request_id: 'req-room', expected_revision: 1, set: [note], compact: { references: ['plan.current'] } }));
    // then
    expect(compacted.reply).toMatchObject({ revision: 3, duplicate: false });
    const appended = (await knowledgeEvents(ids)).slice(2);
    expect(appended.map((event) => event.event_type)).toEqual(['working_state.compacted', 'working_state.revised']);
    expect(appended[0]?.payload).toMatchObject({ revision: 2, compaction_id: 'req-room', compacted_by: AGENT, kept: ['objective.main', 'plan.current'], references: ['plan.current'] });
    expect((appended[0]?.payload['removed'] as string[]).length).toBe(16);
  });

  it('given a tampered revision, a belief request sent as a revision and a revision for another task, then each is refused with its code', async () => {
    const ids = await openTask('ws-forged');
    const jws = await signRevision(ids, agent, { request_id: 'req-t', expected_revision: 0, set: [entry('objective.main', 'honest')] });
    const [header, payload, signature] = jws.split('.') as [string, string, string];
    const signed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...signed, set: [entry('objective.main', 'forged')] })).toString('base64url')}.${signature}`;
    expect((await revise(ids, tampered)).code).toBe('ORCHESTRATOR_KNOWLEDGE_SIGNATURE_INVALID');
    // a JWS of one kind never passes for another (typ): a belief request's signature on the revision subject
    const belief = await signBelief(ids, agent, 'req-b', { op: 'assert', belief: observed('bel-1', 'the build is green') });
    expect((await revise(ids, belief)).code).toBe('CONTRACT_INVALID');
    expect((await ask(rig.config.subjects.reviseWorkingState, { task_id: 'tsk-elsewhere', request_jws: jws })).code).toBe('ORCHESTRATOR_KNOWLEDGE_MISMATCH');
    expect(await knowledgeEvents(ids)).toEqual([]);
  });
});

/** Every message the events stream holds, raw: its subject, headers and payload bytes as text. */
async function rawEventsStream(): Promise<string[]> {
  const stream = rig.config.env.WRIT_EVENTS_STREAM;
  const { state } = await rig.jsm.streams.info(stream);
  const out: string[] = [];
  for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
    const msg = await rig.jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (msg === null) continue;
    out.push(`${msg.subject}\n${msg.header?.toString() ?? ''}\n${Buffer.from(msg.data).toString('utf8')}`);
  }
  return out;
}

describe('a secret is recorded by reference, never by value (invariant 6)', () => {
  it('given entries and a belief marked secret holding a canary that does not look like a secret, then KNOWLEDGE_SECRET_BY_VALUE naming the key, and the canary is in no message of the events stream; by reference they are recorded', async () => {
    // given
    const ids = await openTask('secret-by-value');
    const canary = name('CANARY-ctx');
    const secretEntry = (value: unknown): WorkingStateEntry => ({ key: 'handle.db', kind: 'resource_handle', value: value as WorkingStateEntry['value'], sensitivity: 'secret' });
    // when: the agent sends the secret itself, as a plain value and inside an object
    const byValue = await revise(ids, await signRevision(ids, agent, { request_id: 'req-sv', expected_revision: 0, set: [entry('objective.main', 'migrate the db'), secretEntry(canary)] }));
    const nested = await revise(ids, await signRevision(ids, agent, { request_id: 'req-sv2', expected_revision: 0, set: [secretEntry({ user: 'app', value: canary })] }));
    const belief = await changeBelief(ids, await signBelief(ids, agent, 'req-sb', { op: 'assert', belief: observed('bel-s', 'the db credential', { structured_assertion: { value: canary }, sensitivity: 'secret' }) }));
    // then
    for (const refused of [byValue, nested, belief]) expect(refused.code).toBe('KNOWLEDGE_SECRET_BY_VALUE');
    expect(byValue.message).toContain('handle.db');
    expect(byValue.message).toContain('secret_ref');
    expect(`${byValue.message}${nested.message}${belief.message}`).not.toContain(canary);
    expect(await knowledgeEvents(ids)).toEqual([]);
    // and by reference (a name of where the secret lives) they are recorded, the reference kept as sent
    const reference = { secret_ref: 'vault:db/password' };
    expect((await revise(ids, await signRevision(ids, agent, { request_id: 'req-sr', expected_revision: 0, set: [secretEntry(reference)] }))).reply).toMatchObject({ revision: 1, duplicate: false });
    expect((await changeBelief(ids, await signBelief(ids, agent, 'req-sbr', { op: 'assert', belief: observed('bel-s', 'the db credential', { structured_assertion: reference, sensitivity: 'secret' }) }))).reply).toMatchObject({
      belief_status: 'active',
    });
    const appended = await knowledgeEvents(ids);
    expect(appended.map((event) => event.event_type)).toEqual(['working_state.opened', 'working_state.revised', 'belief.asserted']);
    expect(appended[1]?.payload['set']).toEqual([secretEntry(reference)]);
    expect(appended[2]?.payload['belief']).toMatchObject({ structured_assertion: reference, sensitivity: 'secret' });
    // every message of the stream, read raw: the task's events are there, the canary in none of them
    const raw = await rawEventsStream();
    expect(raw.filter((message) => message.includes(ids.task_id) && message.includes('vault:db/password'))).toHaveLength(2);
    expect(raw.filter((message) => message.includes(canary))).toEqual([]);
  });
});

describe('secret-looking values in knowledge requests', () => {
  it('given an entry and a claim carrying secret-looking values, when accepted, then the log holds them redacted, never the values', async () => {
    const ids = await openTask('canary');
    const canary = `sk-ant-${'Q7x'.repeat(12)}`;
    await revise(ids, await signRevision(ids, agent, { request_id: 'req-c', expected_revision: 0, set: [entry('resource.api', { header: `Bearer ${canary}` }, 'resource_handle')] }));
    await changeBelief(ids, await signBelief(ids, agent, 'req-cb', { op: 'assert', belief: observed('bel-c', `the deploy key is ${canary}`) }));
    const logged = JSON.stringify(await knowledgeEvents(ids));
    expect(logged).toContain('[REDACTED]');
    expect(logged).not.toContain(canary);
    expect((await knowledgeEvents(ids)).map((event) => event.event_type)).toEqual(['working_state.opened', 'working_state.revised', 'belief.asserted']);
  });
});

describe('belief changes against the running orchestrator', () => {
  it('given an asserted belief, when its request_id comes again, then the same assertion signed anew is a duplicate and another claim or a revocation is ORCHESTRATOR_KNOWLEDGE_REQUEST_REUSED', async () => {
    // given
    const ids = await openTask('bel-reuse');
    const belief = observed('bel-r', 'the migration is reversible');
    expect((await changeBelief(ids, await signBelief(ids, agent, 'req-br', { op: 'assert', belief }))).reply).toMatchObject({ belief_id: 'bel-r', duplicate: false });
    // when / then
    expect((await changeBelief(ids, await signBelief(ids, agent, 'req-br', { op: 'assert', belief }))).reply).toMatchObject({ belief_id: 'bel-r', duplicate: true });
    const otherClaim = await changeBelief(ids, await signBelief(ids, agent, 'req-br', { op: 'assert', belief: { ...belief, claim: 'the migration is irreversible' } }));
    expect(otherClaim.code).toBe('ORCHESTRATOR_KNOWLEDGE_REQUEST_REUSED');
    const revocation = await changeBelief(ids, await signBelief(ids, agent, 'req-br', { op: 'revoke', belief_id: 'bel-r', reason: 'checked again' }));
    expect(revocation.code).toBe('ORCHESTRATOR_KNOWLEDGE_REQUEST_REUSED');
    expect((await knowledgeEvents(ids)).map((event) => event.event_type)).toEqual(['belief.asserted']);
  });

  it('given an observed belief with evidence, when asserted, superseded and revoked, then each is appended once with its status; a resend is duplicate', async () => {
    const ids = await openTask('bel-life');
    const assertJws = await signBelief(ids, agent, 'req-a1', { op: 'assert', belief: observed('bel-1', 'the tests pass on main') });
    const asserted = await changeBelief(ids, assertJws);
    expect(asserted.reply).toMatchObject({ op: 'assert', belief_id: 'bel-1', belief_status: 'active', version: 1, events: ['belief.asserted'], duplicate: false });
    expect((await changeBelief(ids, assertJws)).reply).toMatchObject({ belief_id: 'bel-1', duplicate: true, events: ['belief.asserted'] });
    const superseding = await changeBelief(ids, await signBelief(ids, agent, 'req-a2', { op: 'assert', belief: observed('bel-2', 'the tests pass on main and on the branch', { supersedes: 'bel-1' }) }));
    expect(superseding.reply).toMatchObject({ belief_id: 'bel-2', belief_status: 'active', events: ['belief.asserted', 'belief.superseded'] });
    const revoked = await changeBelief(ids, await signBelief(ids, agent, 'req-r', { op: 'revoke', belief_id: 'bel-2', reason: 'the branch test was flaky' }));
    expect(revoked.reply).toMatchObject({ op: 'revoke', belief_id: 'bel-2', belief_status: 'revoked', version: 2 });
    // revoking it again: the kernel's code, nothing appended
    const before = (await knowledgeEvents(ids)).length;
    expect((await changeBelief(ids, await signBelief(ids, agent, 'req-r2', { op: 'revoke', belief_id: 'bel-2', reason: 'again' }))).code).toBe('KNOWLEDGE_BELIEF_NOT_ACTIVE');
    expect((await knowledgeEvents(ids)).map((event) => event.event_type)).toEqual(['belief.asserted', 'belief.asserted', 'belief.superseded', 'belief.revoked']);
    expect(before).toBe(4);
    const stored = (await knowledgeEvents(ids))[0];
    expect(stored?.payload).toMatchObject({ belief: { belief_id: 'bel-1', task_id: ids.task_id, asserted_by: AGENT, status: 'active', version: 1 }, asserter_type: 'agent' });
  });

  it('given a verified belief without a receipt ref, then KNOWLEDGE_TRUST_TIER_UNSUPPORTED and nothing is appended; with a receipt it is accepted', async () => {
    const ids = await openTask('bel-verified');
    const unsupported = await changeBelief(ids, await signBelief(ids, agent, 'req-v1', { op: 'assert', belief: observed('bel-v', 'the deploy succeeded', { trust_tier: 'verified' }) }));
    expect(unsupported.code).toBe('KNOWLEDGE_TRUST_TIER_UNSUPPORTED');
    expect(await knowledgeEvents(ids)).toEqual([]);
    const receipted = observed('bel-v', 'the deploy succeeded', { trust_tier: 'verified', evidence_refs: [{ kind: 'receipt', id: 'rct-1' }] });
    expect((await changeBelief(ids, await signBelief(ids, agent, 'req-v2', { op: 'assert', belief: receipted }))).reply).toMatchObject({ belief_status: 'active' });
  });

  it('given user_asserted, then an agent is refused KNOWLEDGE_TRUST_TIER_UNSUPPORTED while a human director may assert it; a stranger may not touch the beliefs', async () => {
    const ids = await openTask('bel-user');
    const word = observed('bel-u', 'ship on Friday', { trust_tier: 'user_asserted', evidence_refs: [] });
    expect((await changeBelief(ids, await signBelief(ids, agent, 'req-u1', { op: 'assert', belief: word }))).code).toBe('KNOWLEDGE_TRUST_TIER_UNSUPPORTED');
    expect((await changeBelief(ids, await signBelief(ids, director, 'req-u2', { op: 'assert', belief: word }))).reply).toMatchObject({ belief_status: 'active' });
    expect((await changeBelief(ids, await signBelief(ids, intruder, 'req-u3', { op: 'revoke', belief_id: 'bel-u', reason: 'mine now' }))).code).toBe('ORCHESTRATOR_KNOWLEDGE_SIGNER_NOT_ALLOWED');
    expect((await knowledgeEvents(ids)).map((event) => event.event_type)).toEqual(['belief.asserted']);
  });
});

describe('knowledge requests with authorship enforced: a forged knowledge event in the task stream is ignored by the orchestrator', () => {
  let enforced: Rig;
  let owner: TestPrincipal;
  let keyDir: string;
  const env = { authorship: process.env['WRIT_AUTHORSHIP'], keyDir: process.env['WRIT_SEAL_KEY_DIR'] };

  /** A store on the rig's log sealing as the Writ service `principalId`, its key registered on its own subject; it checks nothing it appends. */
  async function sealedAs(store: EventStore, principalId: string): Promise<EventStore> {
    const key = await generateEd25519Key({ kid: `${principalId}-${name('k')}` });
    store.sealWith(eventSealer(principalId, key));
    await registerServicePrincipal(store, { principalId, displayName: principalId, key });
    return store;
  }

  beforeAll(async () => {
    // The orchestrator reads its log as in a deployment (scripts/writ-up.sh), its sealing key in a directory of this test's own.
    keyDir = await mkdtemp(path.join(tmpdir(), 'writ-orc-seal-'));
    process.env['WRIT_AUTHORSHIP'] = 'enforce';
    process.env['WRIT_SEAL_KEY_DIR'] = keyDir;
    enforced = await createRig('knowledge-enforced');
    // the test plays ingress: registrations and task openings sealed by the ingress service, as in a deployment
    await sealedAs(enforced.store, 'ingress');
    owner = await registerPrincipal(enforced, AGENT);
    await startApp(enforced);
  });

  afterAll(async () => {
    await disposeRig(enforced);
    await rm(keyDir, { recursive: true, force: true });
    for (const [variable, value] of [['WRIT_AUTHORSHIP', env.authorship], ['WRIT_SEAL_KEY_DIR', env.keyDir]] as const) {
      if (value === undefined) delete process.env[variable];
      else process.env[variable] = value;
    }
  });

  it('given a revision and a belief appended by the policy service, then the orchestrator decides as if they were not there', async () => {
    // given a task and its first revision, accepted
    const ids = taskIds(name('forged'));
    await append(enforced, ids.task_id, ...ingressDrafts(ids, commandRequest(ids, ['true'])));
    const ask = <R>(subject: string, jws: string) => enforced.nc.request(subject, JSON.stringify({ task_id: ids.task_id, request_jws: jws }), { timeout: 15_000 }).then((msg) => ({ code: msg.headers?.get('Writ-Error-Code') ?? '', body: msg.json<R>() }));
    const first = await ask<WorkingStateRevisionReply>(enforced.config.subjects.reviseWorkingState, await signRevision(ids, owner, { request_id: 'req-1', expected_revision: 0, set: [entry('objective.main', 'honest')] }));
    expect(first.body, JSON.stringify(first.body)).toMatchObject({ revision: 1 });
    // when the policy service (a stolen credential in a client that checks nothing) appends a revision 2 and a belief to the task
    const forger = await sealedAs(await EventStore.open(enforced.nc, { stream: enforced.config.env.WRIT_EVENTS_STREAM, subjectPrefix: enforced.config.subjects.events, maxBytes: 64 * 1024 ** 2 }), 'writ-policy');
    const at = new Date().toISOString();
    const forged = (type: string, payload: Record<string, unknown>) => ({
      event_id: name('forged'),
      schema_version: 1,
      event_type: type,
      entity_type: 'task' as const,
      entity_id: ids.task_id,
      occurred_at: at,
      actor_type: 'service' as const,
      actor_id: 'writ-orchestrator',
      payload,
      causation_id: null,
      correlation_id: ids.task_id,
    });
    // The running orchestrator appends to the task meanwhile (its context packs): the forger appends at the head it finds, again after a lost race.
    const appendAtHead = async (draft: ReturnType<typeof forged>) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await forger.append(ids.task_id, [draft], (await forger.head(ids.task_id)).taskSeq);
        } catch (error) {
          if (!isEventStoreError(error, 'EVENTSTORE_CONFLICT') || attempt >= 20) throw error;
        }
      }
    };
    await appendAtHead(forged('working_state.revised', { revision: 2, request_id: 'req-forged', revised_by: AGENT, set: [entry('objective.main', 'forged')], removed: [], at }));
    const belief = { ...observed('bel-forged', 'all checks passed'), task_id: ids.task_id, status: 'active', version: 1, created_at: at, asserted_by: AGENT };
    await appendAtHead(forged('belief.asserted', { belief, asserter_type: 'agent', at }));
    // then the next revision made against revision 1 is accepted as revision 2: the forged one does not count
    const second = await ask<WorkingStateRevisionReply>(enforced.config.subjects.reviseWorkingState, await signRevision(ids, owner, { request_id: 'req-2', expected_revision: 1, set: [entry('objective.main', 'still honest')] }));
    expect(second).toMatchObject({ code: '', body: { revision: 2, duplicate: false } });
    // and the forged belief is not one the task holds
    const revoke = await ask<BeliefRequestReply>(enforced.config.subjects.changeBelief, await signBelief(ids, owner, 'req-r', { op: 'revoke', belief_id: 'bel-forged', reason: 'forged' }));
    expect(revoke.code).toBe('KNOWLEDGE_BELIEF_NOT_FOUND');
    // and, read as every service reads it (authorship checked), the log holds the orchestrator's two revisions, chained past the forgeries
    const checked = await EventStore.open(enforced.nc, { stream: enforced.config.env.WRIT_EVENTS_STREAM, subjectPrefix: enforced.config.subjects.events, maxBytes: 64 * 1024 ** 2 }, { authorship: serviceAuthorship().store! });
    const knowledge = (await checked.read(ids.task_id)).map((stored) => stored.event).filter((event) => event.event_type.startsWith('working_state.') || event.event_type.startsWith('belief.'));
    expect(knowledge.map((event) => [event.event_type, event.payload['request_id'] ?? null])).toEqual([
      ['working_state.opened', null],
      ['working_state.revised', 'req-1'],
      ['working_state.revised', 'req-2'],
    ]);
  });
});
