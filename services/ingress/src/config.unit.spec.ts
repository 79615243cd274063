import { hasErrorCode } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { loadIngressConfig } from './config.js';

describe('loadIngressConfig', () => {
  it('derives every subject from WRIT_SUBJECT_ROOT, with the documented defaults', () => {
    const config = loadIngressConfig({ WRIT_SUBJECT_ROOT: 't_1' });
    expect(config.http.port).toBe(8081);
    expect(config.freshnessSeconds).toBe(300);
    expect(config.subjects.ingressActions).toBe('t_1.ingress.action.*');
    expect(config.subjects.ingressAction('agent-1')).toBe('t_1.ingress.action.agent-1');
    expect(config.subjects.submitAction).toBe('t_1.qry.ingress.submit-action');
    expect(config.subjects.deadLetter).toMatch(/^t_1\.dlq\.ingress\.t_1_ingress_action_any-[0-9a-f]{8}$/);
    expect(config.streams).toMatchObject({ events: 'WRIT_EVENTS', eventsPrefix: 't_1.evt', subjects: { ingress: 't_1.ingress.>', commands: 't_1.cmd.>', dlq: 't_1.dlq.>' } });
  });

  it('fails fast, listing every offending variable', () => {
    try {
      loadIngressConfig({ WRIT_HTTP_PORT: '70000', WRIT_SUBJECT_ROOT: 'a.*', WRIT_INGRESS_MAX_BYTES: String(10 * 1024 * 1024) });
      expect.unreachable();
    } catch (error) {
      expect(hasErrorCode(error, 'RUNTIME_CONFIG_INVALID')).toBe(true);
      const paths = (error as { details: { issues: { path: string }[] } }).details.issues.map((i) => i.path).sort();
      expect(paths).toEqual(['WRIT_HTTP_PORT', 'WRIT_INGRESS_MAX_BYTES', 'WRIT_SUBJECT_ROOT']);
    }
  });
});
