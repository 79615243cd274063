import type { EventEnvelope } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { cellSecretHandles, grantStateFor, readGrantHistory } from './grant-history.js';

const claims = {
  iss: 'writ-approval',
  sub: 'writ-executor',
  aud: 'writ-executor',
  jti: 'grant-1',
  iat: 1_893_456_000,
  exp: 1_893_456_300,
  task_id: 'task-1',
  step_id: 'step-1',
  attempt_id: 'attempt-1',
  action_class: 'execute_command' as const,
  resource_scope: { paths: ['.'], hosts: [] },
  max_uses: 2,
  issued_by_principal_id: 'writ-policy',
  policy_result_ref: 'policy_result:pr-1',
};

let seq = 0;
function event(event_type: string, entity_id: string, payload: Record<string, unknown>): EventEnvelope {
  seq += 1;
  return {
    event_id: `e-${seq}`,
    schema_version: 1,
    event_type,
    entity_type: event_type.startsWith('grant.') ? 'grant' : 'attempt',
    entity_id,
    occurred_at: '2030-01-01T00:00:00Z',
    actor_type: 'service',
    actor_id: 'writ-executor',
    payload,
    causation_id: null,
    correlation_id: 'task-1',
    task_id: 'task-1',
    task_seq: seq,
    prev_event_hash: null,
    hash: '0'.repeat(64),
  };
}

const claimed = (grant: string, useId: string, useNo: number) =>
  event('grant.use_claimed', grant, { use_id: useId, use_no: useNo, task_id: 'task-1', attempt_id: 'attempt-1', action_class: 'execute_command', at: '2030-01-01T00:00:10Z' });

describe('readGrantHistory', () => {
  it('given claims, refusals and completions of several grants, then only this grant and this use are reported', () => {
    const stream = [
      event('task.created', 'task-1', {}),
      event('grant.issued', 'grant-1', { claims, at: '2030-01-01T00:00:00Z' }),
      claimed('grant-1', 'use-a', 1),
      claimed('grant-other', 'use-b', 1),
      event('execution.completed', 'attempt-1', { grant_id: 'grant-1', use_no: 1, outcome: 'completed' }),
      event('grant.refused', 'grant-1', { use_id: 'use-c', code: 'GRANT_EXHAUSTED', message: 'x', at: '2030-01-01T00:00:20Z' }),
    ];
    const useA = readGrantHistory(stream, 'grant-1', 'use-a');
    expect(useA).toMatchObject({ head: stream.length, recorded: claims, claim: { use_no: 1, event_id: stream[2]?.event_id }, refusal: undefined, completion: { outcome: 'completed' } });
    expect(useA.events.map((e) => e.type)).toEqual(['grant.issued', 'grant.use_claimed', 'grant.refused']);
    expect(readGrantHistory(stream, 'grant-1', 'use-c')).toMatchObject({ claim: undefined, completion: undefined, refusal: { code: 'GRANT_EXHAUSTED' } });
    expect(readGrantHistory([], 'grant-1', 'use-a')).toMatchObject({ head: 0, recorded: undefined, claim: undefined, events: [] });
  });

  it('given a claim without a completion, then the claim is reported and no completion', () => {
    const history = readGrantHistory([claimed('grant-1', 'use-a', 1)], 'grant-1', 'use-a');
    expect(history.claim).toMatchObject({ use_no: 1, at: '2030-01-01T00:00:10Z' });
    expect(history.completion).toBeUndefined();
  });
});

describe('grantStateFor: the uses the kernel counts', () => {
  it('given no grant.issued in the log, then the verified claims stand in for it and every logged claim counts', () => {
    const history = readGrantHistory([claimed('grant-1', 'use-a', 1)], 'grant-1', 'use-x');
    const state = grantStateFor(history, claims);
    expect(state.status).toBe('issued');
    expect(state.status !== 'initial' && state.uses.map((use) => use.use_id)).toEqual(['use-a']);
  });

  it('given grant.issued and a revocation in the log, then the state is revoked', () => {
    const stream = [
      event('grant.issued', 'grant-1', { claims, at: '2030-01-01T00:00:00Z' }),
      event('grant.revoked', 'grant-1', { revoked_by: 'writ-orchestrator', reason: 'drift', at: '2030-01-01T00:00:05Z' }),
    ];
    expect(grantStateFor(readGrantHistory(stream, 'grant-1', 'use-a'), claims).status).toBe('revoked');
  });
});

describe('cellSecretHandles: what the task cell may hold', () => {
  const issued = (jti: string, handles?: string[]) => event('grant.issued', jti, { claims: { ...claims, jti, ...(handles === undefined ? {} : { constraints: { secret_handles: handles } }) }, at: '2030-01-01T00:00:00Z' });

  it('given grants with secret handles, then the handles of those with a use claimed, sorted and once; a grant never used, one without handles and a malformed one add nothing', () => {
    const stream = [
      issued('grant-a', ['deploy', 'canary']),
      issued('grant-b', ['never_used']),
      issued('grant-c'),
      issued('grant-d', ['canary']),
      event('grant.issued', 'grant-e', { claims: { jti: 'grant-e', constraints: { secret_handles: ['malformed'] } } }),
      claimed('grant-a', 'use-a', 1),
      claimed('grant-c', 'use-c', 1),
      claimed('grant-d', 'use-d', 1),
      claimed('grant-e', 'use-e', 1),
    ];
    expect(cellSecretHandles(stream)).toEqual(['canary', 'deploy']);
    expect(cellSecretHandles([])).toEqual([]);
  });
});
