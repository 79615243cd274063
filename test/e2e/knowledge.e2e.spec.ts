import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { importEd25519PrivateJwk } from '@writ/crypto';
import { SIGNED_REQUESTS, signRequest } from '@writ/runtime';
import { uniqueName } from '@writ/testing';
import { beforeAll, expect, it } from 'vitest';
import { startStack, type Principal, type Stack } from './support/stack.mjs';
import { scratchFiles } from './support/scratch-files.js';
import { stopStackAfterAll } from './support/stack-lifecycle.js';

/**
 * Seed 004 exit criterion 10 ("durable memory writes require evidence and
 * trust metadata"), its belief and working state part (issue 17), end to end:
 * the seven built services on the real NATS, Postgres and Docker; the agent
 * writes its task's working state and beliefs only through the `writ` CLI
 * (signed requests the orchestrator verifies and decides with the kernel),
 * and reads them back from the projection. A `verified` belief without a
 * receipt is refused; with the receipt of the task's own action it is
 * accepted; an oversized revision is refused; nothing refused reaches the log.
 */

const STEP_MS = 120_000;

let stack: Stack;
const scratch = scratchFiles('writ-knowledge-e2e-');
const file = scratch.file;

beforeAll(async () => {
  stack = await startStack({ prefix: 'e2ek' });
}, 180_000);

stopStackAfterAll(() => stack);

it(
  'exit criterion 10 (beliefs and working state): a belief needs the evidence its trust tier claims, working state stays bounded, and both are read back from the projection',
  async () => {
    // given: an agent registered through the CLI, and a task of its own whose first action ran and was receipted
    const agentId = uniqueName('agent').replaceAll('_', '-');
    const privateJwk = path.join(scratch.dir(), `${agentId}.private.jwk.json`);
    const publicJwk = await stack.cli(['principal', 'keygen', '--kid', `${agentId}-k1`, '--out', privateJwk]);
    await stack.cli(['principal', 'add', '--id', agentId, '--type', 'agent', '--role', 'executor', '--jwk', await file(`${agentId}.public.jwk.json`, publicJwk.trim())]);
    const key = await importEd25519PrivateJwk(JSON.parse(await readFile(privateJwk, 'utf8')));
    const agent: Principal = { id: agentId, kid: `${agentId}-k1`, key, publicJwk: key.publicJwk };
    const request = stack.actionRequest(agent);
    await stack.submit(agent, request);
    const action = await stack.waitForAction(request.action_request_id, { timeoutMs: STEP_MS });
    expect(action.status).toBe('succeeded');
    const taskId = String(action.task_id);
    const receiptId = String(action.receipt_id);
    const keyArgs = ['--key', privateJwk, '--principal', agentId, '--json'];

    // when: the agent revises its working state, twice with the same request id
    const entries = [
      { key: 'objective.main', kind: 'objective', value: 'greet the user' },
      { key: 'plan.current', kind: 'plan_pointer', value: { step: 2 }, refs: ['objective.main'] },
    ];
    const revise = ['working-state', 'set', taskId, await file('entries.json', entries), '--request-id', 'req-ws-1', ...keyArgs];
    const revised = JSON.parse(await stack.cli(revise)) as { revision: number; duplicate: boolean };
    const again = JSON.parse(await stack.cli(revise)) as { revision: number; duplicate: boolean };
    // then: one revision, the resend a duplicate
    expect(revised).toMatchObject({ revision: 1, duplicate: false });
    expect(again).toMatchObject({ revision: 1, duplicate: true });

    // an entry past the 4,096-byte limit is refused with the kernel's code; nothing is appended
    const large = [{ key: 'cache.page', kind: 'cache', value: 'x'.repeat(5_000) }];
    await expect(stack.cli(['working-state', 'set', taskId, await file('large.json', large), ...keyArgs])).rejects.toThrow(/KNOWLEDGE_WORKING_STATE_TOO_LARGE/);

    // a verified belief needs a receipt among its evidence: without one it is refused
    const claim = { claim: 'out.txt holds hello', scope: `task:${taskId}`, confidence: 0.9, trust_tier: 'verified' };
    const unsupported = { ...claim, belief_id: 'bel-unsupported', evidence_refs: [{ kind: 'artifact', id: 'art-none' }] };
    await expect(stack.cli(['belief', 'assert', taskId, await file('unsupported.json', unsupported), ...keyArgs])).rejects.toThrow(/KNOWLEDGE_TRUST_TIER_UNSUPPORTED/);
    // citing the receipt of the action that wrote the file, it is accepted
    const receipted = { ...claim, belief_id: 'bel-verified', evidence_refs: [{ kind: 'receipt', id: receiptId }] };
    const asserted = JSON.parse(await stack.cli(['belief', 'assert', taskId, await file('receipted.json', receipted), ...keyArgs])) as Record<string, unknown>;
    expect(asserted).toMatchObject({ belief_id: 'bel-verified', belief_status: 'active', version: 1, events: ['belief.asserted'] });
    // an observed belief, then revoked: it stays, revoked
    const observed = { claim: 'the greeting is final', scope: `task:${taskId}`, confidence: 0.5, trust_tier: 'observed', belief_id: 'bel-observed', evidence_refs: [{ kind: 'observation', id: 'obs-1' }] };
    await stack.cli(['belief', 'assert', taskId, await file('observed.json', observed), ...keyArgs]);
    const revoked = JSON.parse(await stack.cli(['belief', 'revoke', taskId, 'bel-observed', '--reason', 'the copy may still change', ...keyArgs])) as Record<string, unknown>;
    expect(revoked).toMatchObject({ belief_status: 'revoked', version: 2 });

    // an agent whose bus credential publishes only its ingress subject changes a belief over HTTP: the signed body is the credential
    const overHttp = await signRequest(
      SIGNED_REQUESTS.beliefRequest,
      { task_id: taskId, request_id: 'req-http-1', change: { op: 'assert', belief: { ...observed, belief_id: 'bel-http', claim: 'posted over HTTP' } as never } },
      { principalId: agentId, key, now: new Date() },
    );
    const post = (body: unknown) => stack.http(`/v1/tasks/${taskId}/beliefs`, { method: 'POST', headers: { authorization: '', 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(await post({ request_jws: overHttp.jws })).toMatchObject({ status: 200, body: { belief_id: 'bel-http', belief_status: 'active', duplicate: false } });
    expect(await post({ request_jws: overHttp.jws })).toMatchObject({ status: 200, body: { belief_id: 'bel-http', duplicate: true } });
    // a signed working state revision past the limit answers the kernel's code as problem details
    const tooLarge = await signRequest(
      SIGNED_REQUESTS.workingStateRevision,
      { task_id: taskId, request_id: 'req-http-2', expected_revision: 1, set: large as never, remove: [] },
      { principalId: agentId, key, now: new Date() },
    );
    const refused = await stack.http(`/v1/tasks/${taskId}/working-state`, { method: 'POST', headers: { authorization: '', 'content-type': 'application/json' }, body: JSON.stringify({ request_jws: tooLarge.jws }) });
    expect(refused).toMatchObject({ status: 413, body: { code: 'KNOWLEDGE_WORKING_STATE_TOO_LARGE' } });

    // the log holds exactly what was accepted, appended by the orchestrator
    const log = (await stack.taskEvents(taskId)).filter((event) => event.event_type.startsWith('working_state.') || event.event_type.startsWith('belief.'));
    expect(log.map((event) => event.event_type)).toEqual(['working_state.opened', 'working_state.revised', 'belief.asserted', 'belief.asserted', 'belief.revoked', 'belief.asserted']);
    expect(log.every((event) => event.actor_id === 'writ-orchestrator')).toBe(true);
    expect(log[2]?.payload).toMatchObject({ belief: { belief_id: 'bel-verified', trust_tier: 'verified', evidence_refs: [{ kind: 'receipt', id: receiptId }], asserted_by: agentId } });

    // and the projection serves them to the agent that owns the task (the CLI reading as the agent)
    await stack.waitForRoute(`/v1/tasks/${taskId}/beliefs`, (status, body) => status === 200 && (body['beliefs'] as unknown[]).length === 3, { as: agent, timeoutMs: STEP_MS });
    const beliefs = JSON.parse(await stack.cli(['belief', 'list', taskId, '--url', stack.apiUrl, ...keyArgs])) as { beliefs: Array<Record<string, unknown>> };
    expect(beliefs.beliefs.map((b) => [b['belief_id'], b['status'], b['trust_tier']])).toEqual([
      ['bel-verified', 'active', 'verified'],
      ['bel-observed', 'revoked', 'observed'],
      ['bel-http', 'active', 'observed'],
    ]);
    const state = JSON.parse(await stack.cli(['working-state', 'show', taskId, '--url', stack.apiUrl, ...keyArgs])) as Record<string, unknown>;
    expect(state).toMatchObject({ task_id: taskId, revision: 1, entry_count: 2, last_request_id: 'req-ws-1', last_revised_by: agentId });
    // the task with its knowledge events still verifies and explains: they break no chain, seal or receipt check
    await stack.cli(['verify', '--task', taskId]);
    // (a bundle holds the task's events up to its last receipt: these knowledge events came after it)
    const bundle = path.join(scratch.dir(), `${taskId}.bundle.json`);
    expect(JSON.parse(await stack.cli(['export', taskId, '--out', bundle, '--wait', '60', '--json']))).toMatchObject({ ok: true });
    await stack.cli(['verify', bundle]);
    const explained = JSON.parse(await stack.cli(['explain', taskId, '--json'])) as { format: string; actions: Array<{ action_request_id: string }> };
    expect(explained.format).toBe('writ.explain/1');
    expect(explained.actions.map((a) => a.action_request_id)).toEqual([request.action_request_id]);

    // another agent reads neither
    const stranger = await stack.registerPrincipal({ type: 'agent', roles: ['executor'] });
    expect((await stack.http(`/v1/tasks/${taskId}/working-state`, { as: stranger })).status).toBe(404);
    expect((await stack.http(`/v1/tasks/${taskId}/beliefs`, { as: stranger })).body).toEqual({ task_id: taskId, beliefs: [] });
  },
  STEP_MS * 3,
);
