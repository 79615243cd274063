import 'reflect-metadata';
import {
  ExecutionOutcomeResolved,
  type EventDraft,
  type ExecutionCompleted,
  type OutcomeResolution,
  type ResolveOutcomeReply,
} from '@writ/contracts';
import { canonicalJson, generateEd25519Key, sha256Hex, signJws } from '@writ/crypto';
import { uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolutionEventId } from './application/resolve-outcome.handler.js';
import { ExecutorRig, expectRefused, newIds, request, type Ids, type User } from '../test/executor-rig.js';

/**
 * `<root>.qry.executor.resolve-outcome` on the executor started in-process against the real
 * NATS (no cell is needed: the resolution reads and appends the log only). Principals are
 * registered in the log as the CLI does; each test's task holds an `execution.completed` as
 * the executor appends it (outcome unknown after a crash, or a known outcome). Refusals are
 * asserted by code.
 */

const HASH = 'e'.repeat(64);
const rig = new ExecutorRig();

let director: User;
let otherDirector: User;
let observer: User;
let agentDirector: User;
let proposer: User;

beforeAll(async () => {
  await rig.start('executor-resolve', { cellsRoots: ['writ-executor-resolve-'], env: { WRIT_CELL_POOL_SIZE: '0' }, cellImage: false });
  director = await rig.registerUser(['director']);
  otherDirector = await rig.registerUser(['director']);
  observer = await rig.registerUser(['observer']);
  agentDirector = await rig.registerUser(['director'], 'agent');
  proposer = await rig.registerUser(['director']);
}, 120_000);

afterAll(() => rig.close(), 60_000);

// ---- fixtures -------------------------------------------------------------------------------

/** A task whose attempt (proposed by `proposer`) ran under a grant and ended with `outcome`, as the executor records it. */
async function executedTask(outcome: ExecutionCompleted['outcome']): Promise<{ ids: Ids; executionEventId: string }> {
  const ids = newIds('resolve');
  const at = new Date().toISOString();
  const grantId = uniqueName('grant');
  const where = { step_id: ids.step_id, attempt_id: ids.attempt_id, occurred_at: at, schema_version: 1, causation_id: null, correlation_id: ids.task_id };
  const completed: ExecutionCompleted = {
    grant_id: grantId,
    use_no: 1,
    executor_id: 'executor-crashed',
    outcome,
    exit_code: outcome === 'completed' ? 0 : null,
    timed_out: false,
    duration_ms: 0,
    stdout_sha256: HASH,
    stderr_sha256: HASH,
    changed_files: [],
    artifacts: [],
    environment: null,
    ...(outcome === 'unknown' ? { error: { code: 'EXECUTOR_OUTCOME_UNKNOWN', message: 'claimed and never recorded as completed' } } : {}),
    at,
  };
  const executionEventId = uniqueName('use');
  const drafts: EventDraft[] = [
    {
      ...where,
      event_id: uniqueName('evt'),
      event_type: 'attempt.awaiting_policy',
      entity_type: 'attempt',
      entity_id: ids.attempt_id,
      actor_type: 'service',
      actor_id: 'writ-ingress',
      payload: { action_request: request(ids, { proposed_by: proposer.id }), at },
    },
    { ...where, event_id: executionEventId, event_type: 'execution.completed', entity_type: 'attempt', entity_id: ids.attempt_id, actor_type: 'service', actor_id: rig.config.principalId, payload: completed },
  ];
  await rig.store.append(ids.task_id, drafts, 0);
  return { ids, executionEventId };
}

async function resolutionJws(user: User, ids: Ids, overrides: Partial<OutcomeResolution> = {}): Promise<string> {
  const resolution: OutcomeResolution = {
    task_id: ids.task_id,
    attempt_id: ids.attempt_id,
    outcome: 'succeeded',
    note: 'the operator found the effect on the target',
    resolved_by: user.id,
    resolved_at: new Date().toISOString(),
    ...overrides,
  };
  return signJws(canonicalJson(resolution), user.key);
}

const resolve = (ids: Ids, jws: string): Promise<ResolveOutcomeReply> =>
  rig.client.request(rig.config.subjects.resolveOutcome, { task_id: ids.task_id, attempt_id: ids.attempt_id, resolution_jws: jws });

/** The request is refused with `code` (the code is what a caller branches on, never the message). */
const resolutions = async (taskId: string) => (await rig.events(taskId)).filter((event) => event.event_type === 'execution.outcome_resolved');

// ---- tests ----------------------------------------------------------------------------------

describe('executor: a director resolves an unknown outcome', () => {
  it('given an execution with outcome unknown, when a director resolves it failed, then execution.outcome_resolved binds the execution, the resolver, the note and the signed request', async () => {
    const { ids, executionEventId } = await executedTask('unknown');
    const jws = await resolutionJws(director, ids, { outcome: 'failed', note: 'the remote file is absent' });

    const reply = await resolve(ids, jws);

    expect(reply).toMatchObject({ task_id: ids.task_id, attempt_id: ids.attempt_id, status: 'resolved', outcome: 'failed', resolved_by: director.id, event_id: resolutionEventId(executionEventId) });
    const [event] = await resolutions(ids.task_id);
    expect(event).toMatchObject({ event_id: reply.event_id, entity_type: 'attempt', entity_id: ids.attempt_id, attempt_id: ids.attempt_id, step_id: ids.step_id, actor_id: rig.config.principalId, causation_id: executionEventId });
    expect(ExecutionOutcomeResolved.parse(event?.payload)).toMatchObject({
      execution_event_id: executionEventId,
      outcome: 'failed',
      resolved_by: director.id,
      note: 'the remote file is absent',
      resolution_jws_sha256: sha256Hex(jws),
    });
  });

  it('given a resolved outcome, when it is resolved again (the same request, or another director with another outcome), then already_resolved with the standing resolution and nothing appended', async () => {
    const { ids } = await executedTask('unknown');
    const jws = await resolutionJws(director, ids);
    const first = await resolve(ids, jws);
    const again = await resolve(ids, jws);
    const other = await resolve(ids, await resolutionJws(otherDirector, ids, { outcome: 'failed' }));
    expect(first.status).toBe('resolved');
    for (const reply of [again, other]) expect(reply).toMatchObject({ status: 'already_resolved', outcome: 'succeeded', resolved_by: director.id, event_id: first.event_id });
    expect(await resolutions(ids.task_id)).toHaveLength(1);
  });

  it('given two directors resolving at once, then exactly one resolution is in the log and both replies name it', async () => {
    const { ids } = await executedTask('unknown');
    const replies = await Promise.all([resolve(ids, await resolutionJws(director, ids)), resolve(ids, await resolutionJws(otherDirector, ids, { outcome: 'failed' }))]);
    expect(await resolutions(ids.task_id)).toHaveLength(1);
    expect(new Set(replies.map((reply) => reply.event_id)).size).toBe(1);
    expect(replies.map((reply) => reply.status).sort()).toEqual(['already_resolved', 'resolved']);
  });

  it.each([
    ['an observer', () => observer, 'EXECUTOR_RESOLUTION_NOT_ALLOWED'],
    ['an agent holding the director role', () => agentDirector, 'EXECUTOR_RESOLUTION_NOT_ALLOWED'],
    ['the proposer of the action', () => proposer, 'EXECUTOR_RESOLUTION_NOT_ALLOWED'],
  ] as const)('given %s signs the resolution, then it is refused (%s) and nothing is appended', async (_who, user, code) => {
    const { ids } = await executedTask('unknown');
    await expectRefused(code, resolve(ids, await resolutionJws(user(), ids)));
    expect(await resolutions(ids.task_id)).toEqual([]);
  });

  it('given a resolution naming a director but signed with another key (forged), then EXECUTOR_RESOLUTION_SIGNATURE_INVALID', async () => {
    const { ids } = await executedTask('unknown');
    const forger = await generateEd25519Key({ kid: `${director.id}-k1` });
    await expectRefused('EXECUTOR_RESOLUTION_SIGNATURE_INVALID', resolve(ids, await resolutionJws({ id: director.id, key: forger }, ids)));
    await expectRefused('EXECUTOR_RESOLUTION_SIGNATURE_INVALID', resolve(ids, 'not-a-jws'));
    expect(await resolutions(ids.task_id)).toEqual([]);
  });

  it('given an unregistered signer, then EXECUTOR_RESOLUTION_NOT_ALLOWED', async () => {
    const { ids } = await executedTask('unknown');
    const stranger = { id: uniqueName('stranger'), key: await generateEd25519Key({ kid: 'stranger-k1' }) };
    await expectRefused('EXECUTOR_RESOLUTION_NOT_ALLOWED', resolve(ids, await resolutionJws(stranger, ids)));
  });

  it('given a resolution signed 10 minutes ago (a replay), then EXECUTOR_RESOLUTION_STALE', async () => {
    const { ids } = await executedTask('unknown');
    const stale = await resolutionJws(director, ids, { resolved_at: new Date(Date.now() - 600_000).toISOString() });
    await expectRefused('EXECUTOR_RESOLUTION_STALE', resolve(ids, stale));
    expect(await resolutions(ids.task_id)).toEqual([]);
  });

  it('given a resolution signed for another attempt, when sent for this one, then EXECUTOR_RESOLUTION_MISMATCH', async () => {
    const { ids } = await executedTask('unknown');
    const other = await executedTask('unknown');
    await expectRefused('EXECUTOR_RESOLUTION_MISMATCH', resolve(ids, await resolutionJws(director, other.ids)));
    expect(await resolutions(ids.task_id)).toEqual([]);
  });

  it('given an execution whose outcome is known, then EXECUTOR_OUTCOME_NOT_UNKNOWN; an attempt without execution, EXECUTOR_EXECUTION_NOT_FOUND', async () => {
    const { ids } = await executedTask('completed');
    await expectRefused('EXECUTOR_OUTCOME_NOT_UNKNOWN', resolve(ids, await resolutionJws(director, ids)));
    expect(await resolutions(ids.task_id)).toEqual([]);
    const none = newIds('resolve-none');
    await expectRefused('EXECUTOR_EXECUTION_NOT_FOUND', resolve(none, await resolutionJws(director, none)));
  });

  it('given a malformed request, then CONTRACT_INVALID', async () => {
    await expectRefused('CONTRACT_INVALID', rig.client.request(rig.config.subjects.resolveOutcome, { task_id: 'x', resolution_jws: 'y' }));
  });
});
