import { hasErrorCode } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { refusedByName } from '@writ/testing';
import { loadIngressConfig } from './config.js';

const MiB = 1024 ** 2;

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

  it('given no consumer tuning, then its consumer takes the shared WRIT_BUS_* defaults; given WRIT_BUS_*, then it reads them', () => {
    expect(loadIngressConfig({}).consumer).toEqual({ maxDeliver: 10, ackWaitMs: 30_000, backoff: { initialMs: 1_000 }, pullExpiresMs: 5_000 });
    const config = loadIngressConfig({ WRIT_BUS_MAX_DELIVER: '500', WRIT_BUS_ACK_WAIT_MS: '60000', WRIT_BUS_BACKOFF_INITIAL_MS: '20', WRIT_BUS_PULL_EXPIRES_MS: '1000' });
    expect(config.consumer).toEqual({ maxDeliver: 500, ackWaitMs: 60_000, backoff: { initialMs: 20 }, pullExpiresMs: 1_000 });
  });

  it('given the former WRIT_INGRESS_MAX_DELIVER or WRIT_INGRESS_ACK_WAIT_MS, then the start is refused by name: every service reads WRIT_BUS_MAX_DELIVER and WRIT_BUS_ACK_WAIT_MS', () => {
    expect(() => loadIngressConfig({ WRIT_INGRESS_MAX_DELIVER: '5' })).toThrow(refusedByName(/WRIT_INGRESS_MAX_DELIVER.*renamed WRIT_BUS_MAX_DELIVER/));
    expect(() => loadIngressConfig({ WRIT_INGRESS_ACK_WAIT_MS: '60000', WRIT_BUS_ACK_WAIT_MS: '60000' })).toThrow(refusedByName(/WRIT_INGRESS_ACK_WAIT_MS.*renamed WRIT_BUS_ACK_WAIT_MS/));
  });

  it('given a byte bound under 1 MiB, then ingress refuses it (its largest message), while the shared defaults apply unset', () => {
    expect(loadIngressConfig({}).streams).toMatchObject({ eventsMaxBytes: 10 * 1024 * MiB, busMaxBytes: 1024 * MiB, eventsReadCache: 50_000 });
    for (const variable of ['WRIT_EVENTS_MAX_BYTES', 'WRIT_BUS_MAX_BYTES']) {
      expect(() => loadIngressConfig({ [variable]: String(MiB - 1) })).toThrow(expect.objectContaining({ code: 'RUNTIME_CONFIG_INVALID', message: expect.stringContaining(variable) }));
      expect(loadIngressConfig({ [variable]: String(MiB) }).streams).toBeDefined();
    }
  });

  it('given no artifact settings, then the shared bucket and bound apply; given a bucket bound under 1 MiB, then ingress refuses it (it stores a message text or Last Will artifact whole)', () => {
    expect(loadIngressConfig({}).seeds.artifacts).toMatchObject({ bucket: 'WRIT_ARTIFACTS', maxBytes: 10 * 1024 * MiB });
    expect(() => loadIngressConfig({ WRIT_ARTIFACTS_MAX_BYTES: String(MiB - 1) })).toThrow(expect.objectContaining({ code: 'RUNTIME_CONFIG_INVALID', message: expect.stringContaining('WRIT_ARTIFACTS_MAX_BYTES') }));
    expect(loadIngressConfig({ WRIT_ARTIFACTS_BUCKET: 'OTHER', WRIT_ARTIFACTS_MAX_BYTES: String(MiB) }).seeds.artifacts).toMatchObject({ bucket: 'OTHER', maxBytes: MiB });
  });
});
