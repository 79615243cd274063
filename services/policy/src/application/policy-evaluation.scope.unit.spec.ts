import { PolicyEvaluated } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { builtinCatalog } from '../../test/profiles.js';
import { commandRequest, evaluateCommandFor, taskIds, type TaskIds } from '../../test/task-fixtures.js';
import { evaluateCommand } from './policy-evaluation.js';

const META = { policy_result_id: 'pr-1', decision_id: 'dec-1', now: '2030-01-01T00:00:05.000Z', evaluated_by: 'writ-policy' };
const ids: TaskIds = taskIds('scope');
const PROFILES = builtinCatalog();
const ECHO = commandRequest(ids, ['sh', '-c', 'echo hello > out.txt']);

describe('evaluateCommand: capability scope on policy.evaluated (issue 4 least privilege)', () => {
  it('given an evaluation that ran, then the event carries the capability scope the grant may encode at most', () => {
    const evaluated = evaluateCommand(evaluateCommandFor(ids, ECHO, 'local_edit_allowed', ['out.txt']), ECHO, META, PROFILES);
    expect(PolicyEvaluated.safeParse(evaluated).success).toBe(true);
    expect(evaluated.capability_scope).toEqual({ write_paths: ['out.txt'], egress_hosts: [], secret_handles: [], max_wall_clock_ms: 900_000 });
  });

  it('given a profile that allows HTTP reads of any host, then its egress pattern "*" is carried as a pattern (the grant lists concrete hosts)', () => {
    const evaluated = evaluateCommand(evaluateCommandFor(ids, ECHO, 'network_read_allowed'), ECHO, META, PROFILES);
    expect(evaluated.capability_scope?.egress_hosts).toEqual(['*']);
  });

  it('given an unknown profile (a recorded deny), then no capability scope is carried: nothing may be granted', () => {
    const evaluated = evaluateCommand(evaluateCommandFor(ids, ECHO, 'no_such_profile'), ECHO, META, PROFILES);
    expect(evaluated.policy_result.outcome).toBe('deny');
    expect(evaluated.capability_scope).toBeUndefined();
    expect(PolicyEvaluated.safeParse(evaluated).success).toBe(true);
  });
});
