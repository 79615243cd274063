import { EvaluatePolicyDryRun, hasErrorCode, type ActionRequest } from '@writ/contracts';
import { BUILTIN_POLICY_DOCUMENTS } from '@writ/kernel';
import { describe, expect, it } from 'vitest';
import { builtinCatalog } from '../../test/profiles.js';
import { EvaluateDryRunHandler } from './evaluate-dry-run.handler.js';

function request(n: number, actionClass: ActionRequest['action_class'], targets: string[], params: Record<string, unknown>, reason = 'A representative request.'): ActionRequest {
  return {
    action_request_id: `ar-dry-${n}`,
    task_id: 'tsk-dry',
    action_class: actionClass,
    target_resources: targets,
    params,
    expected_effects: [],
    reversibility_hint: 'reversible',
    reason,
    proposed_by: 'agent-dry',
    proposed_at: '2030-01-01T00:00:00.000Z',
  } as ActionRequest;
}

// Every outcome, a downgrade with a rewritten request, approver roles, reasons needing JSON escapes.
const REQUESTS: ActionRequest[] = [
  request(1, 'execute_command', ['out.txt'], { argv: ['sh', '-c', 'echo hello > out.txt'] }),
  request(2, 'execute_command', ['build'], { argv: ['rm', '-rf', 'build'] }),
  request(3, 'write_local', ['src/index.ts'], { path: 'src/index.ts', content: 'export const x = 1;\n' }),
  request(4, 'write_local', ['docs/"quoted"\\name.md'], { path: 'docs/"quoted"\\name.md', content: 'outside' }),
  request(5, 'read_local', ['.env'], { path: '.env' }),
  request(6, 'network_read', ['https://example.com/'], { url: 'https://example.com/', method: 'GET' }),
  request(7, 'publication', ['https://example.com/post'], { url: 'https://example.com/post', body: 'é\u2028\u0001' }, 'Publish "the post"\n(newline)'),
  request(8, 'network_write', ['https://example.com/api'], { url: 'https://example.com/api', method: 'POST' }),
  request(9, 'write_local', ['package.json'], { path: 'package.json', content: '{}' }),
];

const PROFILES = ['local_edit_allowed', 'network_read_allowed', 'external_publish_gated', 'readonly_analysis'];

describe('EvaluateDryRunHandler.evaluateToJson', () => {
  const handler = new EvaluateDryRunHandler(builtinCatalog());

  it('given every profile and request of a mix, then the JSON text is exactly JSON.stringify of the reply object', () => {
    const outcomes = new Set<string>();
    for (const profile_id of PROFILES) {
      for (const action_request of REQUESTS) {
        for (const files_owned of [['src/**', 'drafts/**', 'package.json'], ['**']]) {
          const dryRun = EvaluatePolicyDryRun.parse({ action_request, profile_id, files_owned, sacred_exceptions: ['package.json'] });
          const reply = handler.evaluate(dryRun);
          outcomes.add(reply.outcome);
          expect(handler.evaluateToJson(dryRun), `${profile_id} ${action_request.action_request_id}`).toBe(JSON.stringify(reply));
        }
      }
    }
    expect([...outcomes].sort()).toEqual(['allow', 'deny', 'downgrade', 'require_approval']);
  });

  it('given a candidate document instead of a stored profile, then the JSON text is the reply object too', () => {
    const document = { ...BUILTIN_POLICY_DOCUMENTS.destructive_denied, id: 'candidate_profile' };
    const dryRun = EvaluatePolicyDryRun.parse({ action_request: REQUESTS[1], document, files_owned: ['**'] });
    const json = handler.evaluateToJson(dryRun);
    expect(json).toBe(JSON.stringify(handler.evaluate(dryRun)));
    expect(JSON.parse(json)).toMatchObject({ outcome: 'deny', profile_id: 'candidate_profile' });
  });

  it('given a reason longer than a reply may carry, then it is clipped as in the reply object', () => {
    const long = request(10, 'read_local', [`${'a/'.repeat(2_040)}.env`], { path: `${'a/'.repeat(2_040)}.env` });
    const dryRun = EvaluatePolicyDryRun.parse({ action_request: long, profile_id: 'local_edit_allowed', files_owned: [] });
    const reply = handler.evaluate(dryRun);
    expect(reply.reasons.some((reason) => reason.message.length === 4_096)).toBe(true);
    expect(handler.evaluateToJson(dryRun)).toBe(JSON.stringify(reply));
  });

  it('given an unknown profile id, then it throws POLICY_PROFILE_UNKNOWN like evaluate', () => {
    const dryRun = EvaluatePolicyDryRun.parse({ action_request: REQUESTS[0], profile_id: 'no_such_profile', files_owned: [] });
    let error: unknown;
    try {
      handler.evaluateToJson(dryRun);
    } catch (thrown) {
      error = thrown;
    }
    expect(hasErrorCode(error, 'POLICY_PROFILE_UNKNOWN')).toBe(true);
  });
});
