import { hasErrorCode } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { loadPolicyConfig } from './config.js';

describe('policy config', () => {
  it('given no environment, then it uses the documented defaults and the real subjects', () => {
    const { env, subjects } = loadPolicyConfig({});
    expect(env).toMatchObject({ WRIT_HTTP_PORT: 8083, WRIT_SUBJECT_ROOT: 'writ', WRIT_POLICY_PRINCIPAL_ID: 'writ-policy', WRIT_POLICY_CONCURRENCY: 4 });
    expect(subjects).toMatchObject({ policyEvaluate: 'writ.cmd.policy.evaluate', events: 'writ.evt', dlqAll: 'writ.dlq.>' });
  });

  it('given a subject root, then every subject derives from it', () => {
    const { subjects } = loadPolicyConfig({ WRIT_SUBJECT_ROOT: 't_abc' });
    expect(Object.values(subjects).every((subject) => subject.startsWith('t_abc'))).toBe(true);
  });

  it('given an invalid principal id, then start-up fails with RUNTIME_CONFIG_INVALID', () => {
    let error: unknown;
    try {
      loadPolicyConfig({ WRIT_POLICY_PRINCIPAL_ID: 'writ policy' });
    } catch (caught) {
      error = caught;
    }
    expect(hasErrorCode(error, 'RUNTIME_CONFIG_INVALID')).toBe(true);
  });
});
