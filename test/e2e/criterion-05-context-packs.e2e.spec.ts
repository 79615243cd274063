import { createHash } from 'node:crypto';
import { ContextSection, type EventEnvelope } from '@writ/contracts';
import { SIGNED_REQUESTS, signRequest } from '@writ/runtime';
import { uniqueName } from '@writ/testing';
import { beforeAll, expect, it } from 'vitest';
import { startStack, type Principal, type Stack } from './support/stack.mjs';
import { stopStackAfterAll } from './support/stack-lifecycle.js';

/**
 * Seed 004 exit criterion 5 ("context packs compiled from artifacts, working state,
 * beliefs and memory rather than raw transcript"), issue 17, end to end: the seven built
 * services on the real NATS, Postgres and Docker. An agent's task gets a working state
 * and beliefs (one secret, carrying a canary) through signed requests; its next action's
 * attempt is proposed under a context pack the orchestrator compiled from the log and
 * stored content-addressed. The agent fetches it over HTTP: its items in the precedence
 * of Hermit 15.7, each traced to an id the log holds, the canary nowhere; the pack
 * recompiled from the log (`writ context --verify`) and served again after a projection
 * rebuild is byte-identical; `writ explain` names it; another agent, or a forged attempt
 * id, gets a typed 404.
 */

const STEP_MS = 120_000;
const CANARY = `CANARY-ctx-${Math.random().toString(16).slice(2, 10)}`;
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ prefix: 'e2ec' });
}, 180_000);

stopStackAfterAll(() => stack);

/** The pack's raw body as the agent receives it (the bytes, not a re-serialization), with the hash header. */
async function fetchPack(attemptId: string, as: Principal): Promise<{ status: number; text: string; header: string | null }> {
  const response = await fetch(`${stack.apiUrl}/v1/attempts/${attemptId}/context`, { headers: { authorization: await stack.bearer(as) } });
  return { status: response.status, text: await response.text(), header: response.headers.get('writ-content-sha256') };
}

/** A signed knowledge request of the agent, posted as the agent posts it (the signed body is the credential). */
async function postKnowledge(agent: Principal, taskId: string, kind: 'working-state' | 'beliefs', payload: Record<string, unknown>, refused?: { status: number; code: string }): Promise<void> {
  const signer = { principalId: agent.id, key: agent.key, now: new Date() };
  const signed =
    kind === 'working-state'
      ? await signRequest(SIGNED_REQUESTS.workingStateRevision, { task_id: taskId, ...payload } as never, signer)
      : await signRequest(SIGNED_REQUESTS.beliefRequest, { task_id: taskId, ...payload } as never, signer);
  const answer = await stack.http(`/v1/tasks/${taskId}/${kind}`, { method: 'POST', headers: { authorization: '', 'content-type': 'application/json' }, body: JSON.stringify({ request_jws: signed.jws }) });
  if (refused !== undefined) {
    expect(answer, `${kind} ${JSON.stringify(answer.body)}`).toMatchObject({ status: refused.status, body: { code: refused.code } });
    expect(JSON.stringify(answer.body)).not.toContain(CANARY);
    return;
  }
  expect(answer, `${kind} ${JSON.stringify(answer.body)}`).toMatchObject({ status: 200, body: { duplicate: false } });
}

/** Every id the log holds for a source kind of a pack item: what "traceable" is checked against. */
function logIds(events: readonly EventEnvelope[]): Record<string, Set<string>> {
  const ids: Record<string, Set<string>> = { working_state_entry: new Set(), belief: new Set(), decision: new Set(), artifact: new Set() };
  type Listed = Array<{ key?: string; artifact_id?: string }>;
  for (const { event_type: type, payload } of events) {
    const p = payload as { set?: Listed; artifacts?: Listed; belief?: { belief_id?: string }; decision?: { decision_id?: string } };
    if (type === 'working_state.revised') for (const entry of p.set ?? []) ids['working_state_entry']!.add(String(entry.key));
    if (type === 'belief.asserted') ids['belief']!.add(String(p.belief?.belief_id));
    if (type === 'policy.evaluated' || type === 'decision.recorded') ids['decision']!.add(String(p.decision?.decision_id));
    if (type === 'execution.completed') for (const artifact of p.artifacts ?? []) ids['artifact']!.add(String(artifact.artifact_id));
  }
  return ids;
}

it(
  'exit criterion 5: an attempt is proposed under a context pack compiled from the log (15.7 order, every item traced to its id, bounded, secrets left out), fetched by its agent, byte-identical when recompiled or rebuilt, named by writ explain',
  async () => {
    // given: an agent's task, held open by an action awaiting approval, whose next action ran;
    // then its working state and beliefs: the agent tries to record a secret (the canary) by value in an entry and a belief
    // marked secret, is refused, and records them by reference instead
    const agent = await stack.registerPrincipal({ type: 'agent', roles: ['executor'] });
    const holder = stack.actionRequest(agent, { target_resources: ['scratch'], params: { argv: ['rm', '-rf', 'scratch'] }, reversibility_hint: 'irreversible', reason: 'clean up' });
    await stack.submit(agent, holder);
    const waiting = await stack.waitForAction(holder.action_request_id, { statuses: ['awaiting_approval'], timeoutMs: STEP_MS });
    const taskId = String(waiting.task_id);
    const first = stack.actionRequest(agent, { task_id: taskId });
    await stack.submit(agent, first);
    expect(await stack.waitForAction(first.action_request_id, { timeoutMs: STEP_MS })).toMatchObject({ status: 'succeeded' });
    const revision = (requestId: string, secret: unknown) => ({
      request_id: requestId,
      expected_revision: 0,
      set: [
        { key: 'objective.main', kind: 'objective', value: 'greet the user' },
        { key: 'handle.deploy', kind: 'resource_handle', value: secret, sensitivity: 'secret' },
      ],
      remove: [],
    });
    const bySecretValue = { status: 422, code: 'KNOWLEDGE_SECRET_BY_VALUE' };
    await postKnowledge(agent, taskId, 'working-state', revision('req-ws-0', CANARY), bySecretValue);
    await postKnowledge(agent, taskId, 'working-state', revision('req-ws-1', { secret_ref: 'vault:deploy/token' }));
    const belief = (belief_id: string, claim: string, extra: Record<string, unknown> = {}) => ({
      request_id: `req-${belief_id}`,
      change: { op: 'assert', belief: { belief_id, claim, scope: `task:${taskId}`, confidence: 0.8, trust_tier: 'observed', evidence_refs: [{ kind: 'observation', id: 'obs-1' }], ...extra } },
    });
    await postKnowledge(agent, taskId, 'beliefs', belief('bel-greeting', 'out.txt holds hello'));
    await postKnowledge(agent, taskId, 'beliefs', belief('bel-secret', 'the deploy token', { structured_assertion: { token: CANARY }, sensitivity: 'secret' }), bySecretValue);
    await postKnowledge(agent, taskId, 'beliefs', belief('bel-secret', 'the deploy token is in the vault', { structured_assertion: { secret_ref: 'vault:deploy/token' }, sensitivity: 'secret' }));

    // when: the agent proposes its next action in the task
    const second = stack.actionRequest(agent, { task_id: taskId, reason: 'follow up' });
    await stack.submit(agent, second);
    const two = await stack.waitForAction(second.action_request_id, { timeoutMs: STEP_MS });
    expect(two.status).toBe('succeeded');
    const attemptId = String(two.attempt_id);
    const attempt = await stack.waitForRoute(`/v1/attempts/${attemptId}`, (status, body) => status === 200 && typeof body['context_pack_sha256'] === 'string', { as: agent, timeoutMs: STEP_MS });
    const recorded = String(attempt.body['context_pack_sha256']);

    // then: the agent fetches the pack its attempt was proposed under: the stored bytes, which hash to what the log recorded
    const fetched = await fetchPack(attemptId, agent);
    expect(fetched.status).toBe(200);
    expect(sha256(fetched.text)).toBe(recorded);
    expect(fetched.header).toBe(recorded);
    const events = await stack.taskEvents(taskId);
    const compiled = events.filter((event) => event.event_type === 'context.pack_compiled' && event.attempt_id === attemptId);
    expect(compiled.map((event) => event.payload['sha256'])).toEqual([recorded]);
    expect(compiled[0]?.actor_id).toBe('writ-orchestrator');
    const pack = JSON.parse(fetched.text) as { task_id: string; attempt_id: string; as_of: string; secrets: string; budget: Record<string, number>; items: Array<{ section: string; source: { kind: string; id: string } }>; omitted: Array<{ source: { id: string }; reason: string }> };
    expect(pack).toMatchObject({ kind: 'context.pack', task_id: taskId, attempt_id: attemptId, secrets: 'excluded' });
    // as of the attempt's submission, a time the log holds (not the compiling process's clock)
    const opening = events.find((event) => event.event_type === 'attempt.awaiting_policy' && event.attempt_id === attemptId);
    expect(pack.as_of).toBe(opening?.occurred_at);

    // in the precedence of Hermit 15.7, compiled from the contracts, the earlier actions' decisions and artifacts, the working state and the beliefs
    const order = pack.items.map((item) => ContextSection.options.indexOf(item.section as never));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    const known = logIds(events.filter((event) => event.task_seq <= (opening?.task_seq ?? 0)));
    const withArtifacts = known['artifact']!.size > 0 ? ['artifacts'] : [];
    expect([...new Set(pack.items.map((item) => item.section))]).toEqual(['task_contract', 'step_contract', 'policy_constraints', 'decisions', 'working_state', 'beliefs', ...withArtifacts]);
    expect(pack.items.filter((item) => item.section === 'decisions').length).toBe(known['decision']!.size);
    // every item traced to an id the log holds (before the attempt was submitted)
    for (const item of pack.items) if (item.source.kind in known) expect(known[item.source.kind]!.has(item.source.id), `${item.source.kind}:${item.source.id}`).toBe(true);
    expect(pack.items.filter((item) => item.section === 'working_state' || item.section === 'beliefs').map((item) => item.source.id)).toEqual(['objective.main', 'bel-greeting']);
    // bounded: within its budget, and what was left out is listed with why (the secrets)
    expect(pack.budget['used_items']).toBe(pack.items.length);
    expect(pack.budget['used_bytes']).toBeLessThanOrEqual(pack.budget['max_bytes']!);
    expect(pack.omitted.map((o) => `${o.source.id}:${o.reason}`)).toEqual(['handle.deploy:SECRET_EXCLUDED', 'bel-secret:SECRET_EXCLUDED']);
    // the canary is in no pack, no attempt row, and no message of the task's stream, read raw: it matches no secret
    // pattern, so only the rule (a secret is recorded by reference, never by value) kept it out of the log
    expect(fetched.text).not.toContain(CANARY);
    expect(fetched.text).not.toContain('vault:deploy/token');
    expect(JSON.stringify(attempt.body)).not.toContain(CANARY);
    const raw = await stack.streamMessages(stack.streams.events, stack.subject(`evt.task.${taskId}`));
    expect(raw.length).toBeGreaterThanOrEqual(events.length);
    expect(raw.filter((message) => Buffer.from(message.data).toString('utf8').includes('vault:deploy/token'))).toHaveLength(2);
    expect(raw.filter((message) => Buffer.from(message.data).toString('utf8').includes(CANARY))).toEqual([]);

    // recompiled from the log (the CLI reads the task's stream, chain verified), the same bytes
    const shown = JSON.parse(await stack.cli(['context', attemptId, '--verify', '--json', '--url', stack.apiUrl])) as { sha256: string; recompiled_identical: boolean };
    expect(shown).toMatchObject({ sha256: recorded, recompiled_identical: true });
    // by task id: its latest attempt's pack
    expect(JSON.parse(await stack.cli(['context', taskId, '--json', '--url', stack.apiUrl]))).toMatchObject({ attempt_id: attemptId, sha256: recorded });
    // and writ explain names the pack the action was proposed under
    const explained = JSON.parse(await stack.cli(['explain', taskId, '--json'])) as { actions: Array<{ action_request_id: string; why: { context_pack: Record<string, unknown> | null } }> };
    expect(explained.actions.find((action) => action.action_request_id === second.action_request_id)?.why.context_pack).toMatchObject({ status: 'compiled', sha256: recorded, as_of: pack.as_of });

    // the projection rebuilt from the log alone: identical views, and the same bytes served again
    const job = JSON.parse(await stack.cli(['projections', 'rebuild', '--json'])) as { state: string; comparisons: Array<{ view: string; match: boolean }> };
    expect(job.comparisons.filter((comparison) => !comparison.match)).toEqual([]);
    const again = await fetchPack(attemptId, agent);
    expect(again).toEqual(fetched);

    // adversarial: another agent, a forged attempt id
    const stranger = await stack.registerPrincipal({ type: 'agent', roles: ['executor'] });
    expect(await stack.http(`/v1/attempts/${attemptId}/context`, { as: stranger })).toMatchObject({ status: 404, body: { code: 'PROJECTION_NOT_FOUND' } });
    expect(await stack.http(`/v1/attempts/att-${uniqueName('forged').replaceAll('_', '-')}/context`, { as: agent })).toMatchObject({ status: 404, body: { code: 'PROJECTION_NOT_FOUND' } });
  },
  6 * STEP_MS,
);
