import { hasErrorCode } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import type { ReadModel } from './ports.js';
import { ReadService } from './read-service.js';
import type { PrincipalRow } from './views/index.js';

const key = (kid: string) => ({ kty: 'OKP' as const, crv: 'Ed25519' as const, x: 'A'.repeat(43), kid });
const principal = (id: string, kids: string[]): PrincipalRow => ({
  principal_id: id,
  type: 'service',
  display_name: id,
  roles: [],
  keys: kids.map(key),
  revoked_kids: [],
  registered_at: '2030-01-01T00:00:00.000Z',
  updated_at: '2030-01-01T00:00:00.000Z',
});

function model(overrides: Partial<ReadModel> = {}): ReadModel {
  return {
    action: async () => undefined,
    task: async () => undefined,
    taskEvents: async () => [],
    approvals: async () => [],
    approval: async () => undefined,
    approvalEvents: async () => [],
    receipt: async () => undefined,
    grant: async () => undefined,
    servicePrincipals: async () => [],
    principal: async () => undefined,
    grants: async () => [],
    steps: async () => [],
    step: async () => undefined,
    stepAttempts: async () => [],
    attempt: async () => undefined,
    artifacts: async () => [],
    artifact: async () => undefined,
    decisions: async () => [],
    cells: async () => [],
    cell: async () => undefined,
    viewRows: async () => ({ actions: 0, tasks: 0, task_events: 0, approvals: 0, grants: 0, receipts: 0, principals: 0, steps: 0, attempts: 0, artifacts: 0, decisions: 0, cells: 0 }),
    ping: async () => undefined,
    ...overrides,
  };
}

const code = (c: string) => (error: unknown) => hasErrorCode(error, c);

describe('ReadService', () => {
  it('answers PROJECTION_NOT_FOUND for a well-formed id it does not hold, PROJECTION_REQUEST_INVALID for a malformed one', async () => {
    const reads = new ReadService(model());
    await expect(reads.action('ar-1')).rejects.toSatisfy(code('PROJECTION_NOT_FOUND'));
    await expect(reads.receipt('r-1')).rejects.toSatisfy(code('PROJECTION_NOT_FOUND'));
    await expect(reads.grant('gnt-1')).rejects.toSatisfy(code('PROJECTION_NOT_FOUND'));
    await expect(reads.grant('gnt.1')).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    await expect(reads.task('t-1', {})).rejects.toSatisfy(code('PROJECTION_NOT_FOUND'));
    await expect(reads.action('a.b')).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
  });

  it('validates the approval status filter and page sizes', async () => {
    const reads = new ReadService(model());
    await expect(reads.approvals({ status: 'waiting' })).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    await expect(reads.approvals({ status: 'pending', limit: '0' })).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    await expect(reads.approvals({ status: ['pending', 'granted'] })).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    await expect(reads.approvals({ status: 'pending', limit: '10' })).resolves.toEqual({ approvals: [] });
  });

  it('pages a task timeline and says where the next page starts', async () => {
    const event = (seq: number) => ({ task_seq: seq }) as never;
    const reads = new ReadService(
      model({
        task: async () => ({ task_id: 't-1' }) as never,
        taskEvents: async (_id, page) => [1, 2, 3, 4, 5].filter((s) => s > page.afterSeq).slice(0, page.limit).map(event),
      }),
    );
    expect(await reads.task('t-1', { limit: '2' })).toMatchObject({ events: [{ task_seq: 1 }, { task_seq: 2 }], next_after: 2 });
    expect(await reads.task('t-1', { after: '4', limit: '2' })).toMatchObject({ events: [{ task_seq: 5 }], next_after: null });
  });

  it('serves the JWKS of service principals, each kid once', async () => {
    const reads = new ReadService(model({ servicePrincipals: async () => [principal('approval', ['k1']), principal('receipt', ['k2', 'k1'])] }));
    expect((await reads.keys()).keys.map((k) => k.kid)).toEqual(['k1', 'k2']);
    expect((await reads.keys()).keys[0]).toMatchObject({ alg: 'EdDSA', use: 'sig', kty: 'OKP' });
  });
});
