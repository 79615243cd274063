import { hasErrorCode, type ActionRequest, type EventEnvelope, type PolicyEvaluated } from '@writ/contracts';
import type { EventStore } from '@writ/eventstore';
import { EventStoreTaskLog } from '@writ/runtime';
import { waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinCatalog } from '../test/profiles.js';
import { participantEvents, retireParticipant, spawnParticipant, type TestParticipant } from '../test/participant-fixtures.js';
import { append, createRig, disposeRig, events, startApp, waitForEvents, type Rig } from '../test/rig.js';
import { evaluateCommandFor, ingressDrafts, taskIds, type TaskIds } from '../test/task-fixtures.js';
import { EvaluatePolicyHandler } from './application/evaluate-policy.handler.js';
import { LogParticipantScopes } from './outbound/log-participant-scopes.js';

/**
 * A participant's actions (a seed spawned under seed 002) through the running
 * policy service on the real NATS: the test plays ingress (the participant's
 * stream, its tasks) and the orchestrator (EvaluatePolicy), and reads the
 * log. The manifest scope is checked on every action, in addition to the profile.
 */

let rig: Rig;
const unique = (name: string) => `${name}-${Math.random().toString(16).slice(2, 10)}`;

beforeAll(async () => {
  rig = await createRig('participants');
  await startApp(rig);
});

afterAll(async () => {
  await disposeRig(rig);
});

type Req = Pick<ActionRequest, 'action_class' | 'target_resources' | 'params'>;
const read = (path: string): Req => ({ action_class: 'read_local', target_resources: [path], params: { path } });
const run = (...argv: string[]): Req => ({ action_class: 'execute_command', target_resources: ['docs/'], params: { argv } });

function requestOf(p: TestParticipant, ids: TaskIds, action: Req, profile = 'local_edit_allowed'): ActionRequest {
  return {
    action_request_id: `ar-${ids.task_id}`,
    task: { title: 'A seed task', goal: 'Act within the manifest', policy_profile: profile, files_owned: ['**'] },
    expected_effects: [],
    reversibility_hint: 'reversible',
    reason: 'participant scope test',
    proposed_by: p.seedId,
    proposed_at: new Date().toISOString(),
    ...action,
  } as ActionRequest;
}

/** The participant's action as a new task, evaluated by the running service: its `policy.evaluated` payload. */
async function evaluate(p: TestParticipant, action: Req): Promise<PolicyEvaluated> {
  const ids = taskIds(unique('p'));
  const request = requestOf(p, ids, action);
  await append(rig, ids.task_id, ...ingressDrafts(ids, request));
  await rig.bus.publish(rig.config.subjects.policyEvaluate, evaluateCommandFor(ids, request), { msgId: `${ids.attempt_id}:cmd:policy.evaluate:1` });
  const [evaluated] = await waitForEvents(rig, ids.task_id, 'policy.evaluated');
  return evaluated!.payload as unknown as PolicyEvaluated;
}

const calls = async (p: TestParticipant): Promise<EventEnvelope[]> => (await participantEvents(rig, p.seedId)).filter((event) => event.event_type === 'participant.call_recorded');

describe('the policy service enforces a participant\'s manifest scope', () => {
  it('given an action inside the capabilities, then allow, naming the scope version, and the call is counted on the participant stream', async () => {
    const p = await spawnParticipant(rig);
    const { policy_result: result } = await evaluate(p, read('docs/a.md'));
    expect(result).toMatchObject({ outcome: 'allow', participant_scope_ref: `participant:${p.seedId}@${p.manifestHash}` });
    expect(result.matched_rules).toContain('participant_scope_allowed');
    const [call] = await calls(p);
    expect(call).toMatchObject({ actor_id: 'writ-policy', payload: { seed_id: p.seedId, call: 1, manifest_hash: p.manifestHash, policy_entry: 1 } });
  });

  it.each([
    { note: 'a write where the manifest grants only reading', action: { action_class: 'write_local', target_resources: ['docs/a.md'], params: { path: 'docs/a.md', content: 'x' } } as Req, code: 'participant_path_denied' },
    { note: 'a read outside every fs glob', action: read('src/secret.ts'), code: 'participant_path_denied' },
    { note: 'a program outside shell', action: run('rm', '-rf', 'docs'), code: 'participant_command_denied' },
    { note: 'a listed program inside an unlisted shell', action: run('sh', '-c', 'ls docs'), code: 'participant_command_denied' },
  ])('given $note (which the profile alone would not deny), then deny with $code first, and nothing is counted', async ({ action, code }) => {
    const p = await spawnParticipant(rig);
    const { policy_result: result, decision } = await evaluate(p, action);
    expect(result.outcome).toBe('deny');
    expect(result.matched_rules[0]).toBe(code);
    expect(result.reasoning_summary.startsWith(`${code}: `)).toBe(true);
    expect(result.participant_scope_ref).toBe(`participant:${p.seedId}@${p.manifestHash}`);
    expect(decision.summary.startsWith('policy deny')).toBe(true);
    expect(await calls(p)).toEqual([]);
  });

  it('given max_calls 2, when a third action is evaluated, then PARTICIPANT_LIMIT_EXCEEDED denies it', async () => {
    const p = await spawnParticipant(rig, { resource_limits: { max_tokens: 100, max_calls: 2, max_wallclock_seconds: 3_600 } });
    expect((await evaluate(p, read('docs/a.md'))).policy_result.outcome).toBe('allow');
    expect((await evaluate(p, read('docs/b.md'))).policy_result.outcome).toBe('allow');
    const third = (await evaluate(p, read('docs/c.md'))).policy_result;
    expect(third).toMatchObject({ outcome: 'deny', matched_rules: ['participant_limit_exceeded'] });
    expect((await calls(p)).map((event) => event.payload['call'])).toEqual([1, 2]);
  });

  it('given a participant retired after its request was accepted, then its action is denied PARTICIPANT_NOT_ACTIVE', async () => {
    const p = await spawnParticipant(rig);
    expect((await evaluate(p, read('docs/a.md'))).policy_result.outcome).toBe('allow');
    await retireParticipant(rig, p);
    expect((await evaluate(p, read('docs/a.md'))).policy_result).toMatchObject({ outcome: 'deny', matched_rules: ['participant_not_active'] });
  });

  it('given a principal that is not a participant, then the profile alone decides and no participant scope is named', async () => {
    const ids = taskIds(unique('agent'));
    const request = { ...requestOf({ seedId: 'agent-1' } as TestParticipant, ids, read('src/a.ts')) };
    await append(rig, ids.task_id, ...ingressDrafts(ids, request));
    await rig.bus.publish(rig.config.subjects.policyEvaluate, evaluateCommandFor(ids, request), { msgId: `${ids.attempt_id}:cmd:policy.evaluate:1` });
    const [evaluated] = await waitForEvents(rig, ids.task_id, 'policy.evaluated');
    const result = (evaluated!.payload as unknown as PolicyEvaluated).policy_result;
    expect(result.outcome).toBe('allow');
    expect(result.participant_scope_ref).toBeUndefined();
    expect(result.matched_rules).not.toContain('participant_scope_allowed');
  });
});

describe('EvaluatePolicyHandler with participant scopes against the real log', () => {
  let scopes: LogParticipantScopes;
  beforeAll(async () => {
    scopes = await LogParticipantScopes.start(rig.nc, rig.store, { stream: rig.config.env.WRIT_EVENTS_STREAM, subjectPrefix: rig.config.subjects.events });
  });
  afterAll(async () => {
    await scopes.stop();
  });
  const handler = () => new EvaluatePolicyHandler({ log: new EventStoreTaskLog(rig.store), clock: () => new Date(), profiles: builtinCatalog(), participants: scopes, principalId: 'writ-policy' });

  async function task(p: TestParticipant, action: Req) {
    const ids = taskIds(unique('h'));
    const request = requestOf(p, ids, action);
    await append(rig, ids.task_id, ...ingressDrafts(ids, request));
    return { ids, command: evaluateCommandFor(ids, request) };
  }

  it('given a command handled twice, then the call is counted once and the second is a duplicate', async () => {
    const p = await spawnParticipant(rig);
    const { command } = await task(p, read('docs/a.md'));
    expect(await handler().handle(command)).toMatchObject({ status: 'evaluated', outcome: 'allow' });
    expect(await handler().handle(command)).toMatchObject({ status: 'duplicate' });
    expect(await calls(p)).toHaveLength(1);
  });

  it('given two actions racing for the last call, then exactly one is admitted; the loser conflicts and, judged again, is denied', async () => {
    const p = await spawnParticipant(rig, { resource_limits: { max_tokens: 100, max_calls: 1, max_wallclock_seconds: 3_600 } });
    const first = await task(p, read('docs/a.md'));
    const second = await task(p, read('docs/b.md'));
    const results = await Promise.allSettled([handler().handle(first.command), handler().handle(second.command)]);
    for (const result of results) if (result.status === 'rejected') expect(hasErrorCode(result.reason, 'EVENTSTORE_CONFLICT')).toBe(true);
    // the bus retries a conflict: each command once more (a duplicate when it was evaluated)
    for (const { command } of [first, second]) expect(['evaluated', 'duplicate']).toContain((await handler().handle(command)).status);
    const evaluated = await Promise.all(
      [first, second].map(async ({ ids }) => ((await events(rig, ids.task_id)).find((e) => e.event_type === 'policy.evaluated')?.payload as unknown as PolicyEvaluated).policy_result),
    );
    expect(evaluated.map((r) => r.outcome).sort()).toEqual(['allow', 'deny']);
    expect(evaluated.find((r) => r.outcome === 'deny')?.matched_rules).toEqual(['participant_limit_exceeded']);
    expect(await calls(p)).toHaveLength(1);
  });
});

describe('LogParticipantScopes: followed from the log, checked against its head', () => {
  it('given the follower folded the stream, then a use reads only its head, never the stream; a retirement reaches the scope the same way', async () => {
    let reads = 0;
    const counting = new Proxy(rig.store, {
      get(target, property, receiver) {
        if (property === 'readEntity') {
          return (...args: Parameters<EventStore['readEntity']>) => {
            reads += 1;
            return target.readEntity(...args);
          };
        }
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const scopes = await LogParticipantScopes.start(rig.nc, counting, { stream: rig.config.env.WRIT_EVENTS_STREAM, subjectPrefix: rig.config.subjects.events });
    try {
      const p = await spawnParticipant(rig);
      // no use yet: only the follower can bring the spawn into memory
      await waitFor(() => (scopes.heldSeq(p.seedId) === 1 ? true : undefined), { what: 'the follower to fold the spawn', timeoutMs: 20_000, intervalMs: 25 });
      expect((await scopes.current(p.seedId))?.state.status).toBe('active');
      await retireParticipant(rig, p);
      await waitFor(() => (scopes.heldSeq(p.seedId) === 2 ? true : undefined), { what: 'the follower to fold the retirement', timeoutMs: 20_000, intervalMs: 25 });
      expect((await scopes.current(p.seedId))?.state.status).toBe('retired');
      expect(reads, 'every use answered from the followed streams after one head read').toBe(0);
      expect(await scopes.current('never-spawned-seed')).toBeUndefined();
    } finally {
      await scopes.stop();
    }
  });
});
