import type { ActionClass } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { ACTION_CLASSES, OUTCOME_LETTER, PROFILE_IDS, SCOPE_CASES, matrixFacts, matrixProfile, matrixRequest, type ScopeCase } from '../../test/policy.matrix.js';
import { evaluatePolicy } from './evaluate-policy.js';
import type { BuiltinPolicyProfileId } from './policy-profile.js';

/**
 * Every built-in profile × every action class × every scope case. One row
 * per profile and class; the letters follow SCOPE_CASES:
 *
 *   inside  outside  sacred  sacred_both  sacred_profile_only  sacred_task_only
 *   sacred_both_outside  secret  egress_allowed  egress_denied  destructive
 *
 * A = allow, R = require_approval, D = deny, G = downgrade. Facts: files_owned
 * `src/**` and `drafts/**`; the sacred cases write `src/package.json` (or
 * `package.json`, outside); the egress cases narrow egress to
 * api.example.com; destructive carries `git push --force` as argv (read only
 * by execute_command and vcs_mutation); rollback names a receipt and one
 * write_local step on the case's path (none for a URL); it puts back what an action of the task
 * replaced, so outside files_owned and on a Sacred Scope it goes to a director
 * instead of being denied. See test/policy.matrix.ts.
 */
const MATRIX_EXPECTATIONS: Readonly<Record<BuiltinPolicyProfileId, Readonly<Record<ActionClass, string>>>> = {
  readonly_analysis: {
    read_local: 'A A A A A A A D D D A',
    write_local: 'G G G G G G G D G G G',
    delete_local: 'G G G G G G G D G G G',
    execute_command: 'D D D D D D D D D D D',
    network_read: 'D D D D D D D D D D D',
    network_write: 'D D D D D D D D D D D',
    credentialed_api_call: 'D D D D D D D D D D D',
    vcs_mutation: 'D D D D D D D D D D D',
    publication: 'D D D D D D D D D D D',
    payment: 'D D D D D D D D D D D',
    memory_write: 'D D D D D D D D D D D',
    rollback: 'D D D D D D D D D D D',
  },
  local_edit_allowed: {
    read_local: 'A A A A A A A D D D A',
    write_local: 'A D D A D D D D D D A',
    delete_local: 'A D D A D D D D D D A',
    execute_command: 'A D D A D D D D D D R',
    network_read: 'D D D D D D D D D D D',
    network_write: 'D D D D D D D D D D D',
    credentialed_api_call: 'D D D D D D D D D D D',
    vcs_mutation: 'D D D D D D D D D D D',
    publication: 'G G G G G G G G G G G',
    payment: 'D D D D D D D D D D D',
    memory_write: 'D D D D D D D D D D D',
    rollback: 'R R R R R R R D D D R',
  },
  network_read_allowed: {
    read_local: 'A A A A A A A D D D A',
    write_local: 'A D D A D D D D D D A',
    delete_local: 'A D D A D D D D D D A',
    execute_command: 'A D D A D D D D D D R',
    network_read: 'A A A A A A A D A D A',
    network_write: 'G G G G G G G G G D G',
    credentialed_api_call: 'D D D D D D D D D D D',
    vcs_mutation: 'D D D D D D D D D D D',
    publication: 'G G G G G G G G G G G',
    payment: 'D D D D D D D D D D D',
    memory_write: 'D D D D D D D D D D D',
    rollback: 'R R R R R R R D D D R',
  },
  repo_mutation_gated: {
    read_local: 'A A A A A A A D D D A',
    write_local: 'A D D A D D D D D D A',
    delete_local: 'A D D A D D D D D D A',
    execute_command: 'A D D A D D D D D D R',
    network_read: 'A A A A A A A D A D A',
    network_write: 'G G G G G G G G G D G',
    credentialed_api_call: 'D D D D D D D D D D D',
    vcs_mutation: 'R D D R D D D D R D R',
    publication: 'G G G G G G G G G G G',
    payment: 'D D D D D D D D D D D',
    memory_write: 'D D D D D D D D D D D',
    rollback: 'R R R R R R R D D D R',
  },
  external_publish_gated: {
    read_local: 'A A A A A A A D D D A',
    write_local: 'A D D A D D D D D D A',
    delete_local: 'A D D A D D D D D D A',
    execute_command: 'A D D A D D D D R D R',
    network_read: 'A A A A A A A D A D A',
    network_write: 'R D D R D D D D R D R',
    credentialed_api_call: 'R D D R D D D D R D R',
    vcs_mutation: 'R D D R D D D D R D R',
    publication: 'R D D R D D D D R D R',
    payment: 'D D D D D D D D D D D',
    memory_write: 'D D D D D D D D D D D',
    rollback: 'R R R R R R R D D D R',
  },
  destructive_denied: {
    read_local: 'A A A A A A A D D D A',
    write_local: 'A D D A D D D D D D A',
    delete_local: 'A D D A D D D D D D A',
    execute_command: 'A D D A D D D D D D D',
    network_read: 'D D D D D D D D D D D',
    network_write: 'D D D D D D D D D D D',
    credentialed_api_call: 'D D D D D D D D D D D',
    vcs_mutation: 'D D D D D D D D D D D',
    publication: 'G G G G G G G G G G G',
    payment: 'D D D D D D D D D D D',
    memory_write: 'D D D D D D D D D D D',
    rollback: 'R R R R R R R D D D R',
  },
};

interface Row {
  readonly note: string;
  readonly profile: BuiltinPolicyProfileId;
  readonly cls: ActionClass;
  readonly scope: ScopeCase;
  readonly want: string;
}

const ROWS: Row[] = PROFILE_IDS.flatMap((profile) =>
  ACTION_CLASSES.flatMap((cls) => {
    const letters = MATRIX_EXPECTATIONS[profile][cls].split(' ');
    return SCOPE_CASES.map((scope, i) => ({ note: `${profile} × ${cls} × ${scope}`, profile, cls, scope, want: letters[i] as string }));
  }),
);

describe('policy matrix: every built-in profile × action class × scope case', () => {
  it('given the expectations table, then it covers every built-in, every class and every scope case', () => {
    expect(Object.keys(MATRIX_EXPECTATIONS).sort()).toEqual([...PROFILE_IDS].sort());
    for (const profile of PROFILE_IDS) {
      expect(Object.keys(MATRIX_EXPECTATIONS[profile]).sort()).toEqual([...ACTION_CLASSES].sort());
      for (const cls of ACTION_CLASSES) expect(MATRIX_EXPECTATIONS[profile][cls].split(' ')).toHaveLength(SCOPE_CASES.length);
    }
    expect(ROWS).toHaveLength(6 * 12 * SCOPE_CASES.length);
  });

  it.each(ROWS.map((row) => [row.note, row] as const))('%s', (_note, row) => {
    const profile = matrixProfile(row.profile, row.scope);
    const result = evaluatePolicy(matrixRequest(row.cls, row.scope), profile, matrixFacts(row.scope));
    const explain = `[${row.note}] got ${result.outcome}: ${result.reasons.map((r) => `${r.code}/${r.outcome}`).join(', ')}`;
    expect(OUTCOME_LETTER[result.outcome], explain).toBe(row.want);
    expect(result.profile_version).toBe(profile.version);
    expect(result.matched_rules.length, explain).toBeGreaterThan(0);
    expect(result.reasons.some((reason) => reason.outcome === result.outcome), explain).toBe(true);
    if (result.outcome === 'require_approval') expect(result.approver_roles, explain).toEqual(['director']);
    if (result.outcome === 'downgrade') {
      const rewritten = result.downgrade?.action_request;
      expect(rewritten === undefined ? undefined : evaluatePolicy(rewritten, profile, matrixFacts(row.scope)).outcome, explain).toBe('allow');
    }
  });
});
