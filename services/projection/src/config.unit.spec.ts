import { hasErrorCode } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { refusedByName } from '@writ/testing';
import { loadProjectionConfig, underRoot } from './config.js';

describe('projection config', () => {
  it('defaults to the documented values', () => {
    const config = loadProjectionConfig({});
    expect(config.http).toEqual({ port: 8080, host: '127.0.0.1' });
    expect(config.nats.url).toBe('nats://127.0.0.1:4223');
    expect(config.pg).toEqual({ url: 'postgres://postgres@127.0.0.1:5432/writ', schema: 'writ', poolSize: 10 });
    expect(config.subjects).toEqual({
      root: 'writ',
      eventsPrefix: 'writ.evt',
      projectorPattern: 'writ.evt.>',
      submitAction: 'writ.qry.ingress.submit-action',
      resolveApproval: 'writ.qry.approval.resolve',
      revokeGrant: 'writ.qry.approval.revoke-grant',
      claims: { done: 'writ.qry.orchestrator.claim-done', blocked: 'writ.qry.orchestrator.claim-blocked', correction: 'writ.qry.orchestrator.claim-correction' },
      knowledge: { working_state: 'writ.qry.orchestrator.revise-working-state', belief: 'writ.qry.orchestrator.change-belief' },
      submitMessage: 'writ.qry.ingress.submit-message',
      rebuild: 'writ.qry.projection.rebuild',
      rebuildStatus: 'writ.qry.projection.rebuild-status',
      projections: 'writ.proj',
      deadLetters: 'writ.dlq',
    });
    expect(config.streams).toMatchObject({ events: 'WRIT_EVENTS', ingress: 'WRIT_INGRESS', commands: 'WRIT_COMMANDS', dlq: 'WRIT_DLQ', replicas: 1 });
    expect(config.rebuild).toEqual({ swapLockTimeoutMs: 30_000 });
  });

  it('derives every subject from WRIT_SUBJECT_ROOT', () => {
    const config = loadProjectionConfig({ WRIT_SUBJECT_ROOT: 't_1', WRIT_HTTP_PORT: '0' });
    expect(config.subjects.projectorPattern).toBe('t_1.evt.>');
    expect(config.subjects.submitAction).toBe('t_1.qry.ingress.submit-action');
    expect(config.subjects.rebuild).toBe('t_1.qry.projection.rebuild');
    expect(config.subjects.projections).toBe('t_1.proj');
    expect(config.http.port).toBe(0);
    expect(underRoot('writ.cmd.policy.evaluate', 'x')).toBe('x.cmd.policy.evaluate');
  });

  it('fails fast on invalid variables', () => {
    let failure: unknown;
    try {
      loadProjectionConfig({ WRIT_HTTP_PORT: 'eighty', WRIT_PG_SCHEMA: 'Bad-Schema', WRIT_SUBJECT_ROOT: 'a.b' });
    } catch (error) {
      failure = error;
    }
    expect(hasErrorCode(failure, 'RUNTIME_CONFIG_INVALID')).toBe(true);
    const paths = ((failure as { details?: { issues?: Array<{ path: string }> } }).details?.issues ?? []).map((issue) => issue.path);
    expect(paths.sort()).toEqual(['WRIT_HTTP_PORT', 'WRIT_PG_SCHEMA', 'WRIT_SUBJECT_ROOT']);
  });

  it('takes the Postgres password from a file, and refuses a WRIT_PG_URL that carries one without echoing it', () => {
    const config = loadProjectionConfig({ WRIT_PG_URL: 'postgres://writ_x_projection@127.0.0.1:5432/writ', WRIT_PG_PASSWORD_FILE: '/var/writ/pg/projection.password' });
    expect(config.pg).toMatchObject({ url: 'postgres://writ_x_projection@127.0.0.1:5432/writ', passwordFile: '/var/writ/pg/projection.password' });
    let failure: unknown;
    try {
      loadProjectionConfig({ WRIT_PG_URL: 'postgres://writ_x_projection:hunter2-secret@127.0.0.1:5432/writ' });
    } catch (error) {
      failure = error;
    }
    expect(hasErrorCode(failure, 'RUNTIME_CONFIG_INVALID')).toBe(true);
    expect((failure as Error).message).toMatch(/WRIT_PG_URL: must not carry a password/);
    expect(JSON.stringify({ message: (failure as Error).message, details: (failure as { details?: unknown }).details })).not.toContain('hunter2-secret');
  });

  it('given no consumer tuning, then the projector keeps its 100 deliveries and takes the other shared WRIT_BUS_* defaults; given WRIT_BUS_*, then it reads them', () => {
    expect(loadProjectionConfig({}).projector).toEqual({ maxDeliver: 100, ackWaitMs: 30_000, backoff: { initialMs: 1_000 }, pullExpiresMs: 5_000 });
    const config = loadProjectionConfig({ WRIT_BUS_MAX_DELIVER: '20', WRIT_BUS_BACKOFF_INITIAL_MS: '50', WRIT_BUS_ACK_WAIT_MS: '60000', WRIT_BUS_PULL_EXPIRES_MS: '1000' });
    expect(config.projector).toEqual({ maxDeliver: 20, ackWaitMs: 60_000, backoff: { initialMs: 50 }, pullExpiresMs: 1_000 });
  });

  it('given the former WRIT_PROJECTOR_MAX_DELIVER or WRIT_PROJECTOR_BACKOFF_MS, then the start is refused by name: every service reads WRIT_BUS_MAX_DELIVER and WRIT_BUS_BACKOFF_INITIAL_MS', () => {
    expect(() => loadProjectionConfig({ WRIT_PROJECTOR_MAX_DELIVER: '100' })).toThrow(refusedByName(/WRIT_PROJECTOR_MAX_DELIVER.*renamed WRIT_BUS_MAX_DELIVER/));
    expect(() => loadProjectionConfig({ WRIT_PROJECTOR_BACKOFF_MS: '50', WRIT_BUS_BACKOFF_INITIAL_MS: '50' })).toThrow(refusedByName(/WRIT_PROJECTOR_BACKOFF_MS.*renamed WRIT_BUS_BACKOFF_INITIAL_MS/));
  });
});
