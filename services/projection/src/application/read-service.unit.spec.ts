import { hasErrorCode } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import type { ReadModel } from './ports.js';
import { READ_ALL, ReadService } from './read-service.js';
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
  row_version: 1,
  updated_at: '2030-01-01T00:00:00.000Z',
});

function model(overrides: Partial<ReadModel> = {}): ReadModel {
  return {
    action: async () => undefined,
    task: async () => undefined,
    taskEvents: async () => [],
    listTasks: async () => [],
    listActions: async () => [],
    listApprovals: async () => [],
    listReceipts: async () => [],
    listCells: async () => [],
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
    cell: async () => undefined,
    workingState: async () => undefined,
    beliefs: async () => [],
    memoryRecord: async () => undefined,
    memoryRecords: async () => [],
    conversationFocus: async () => [],
    conversationMessages: async () => [],
    viewRows: async () => ({ actions: 0, tasks: 0, task_events: 0, approvals: 0, grants: 0, receipts: 0, principals: 0, steps: 0, attempts: 0, artifacts: 0, decisions: 0, cells: 0, working_states: 0, beliefs: 0, memory: 0, conversation_focus: 0, conversation_messages: 0 }),
    ping: async () => undefined,
    ...overrides,
  };
}

const code = (c: string) => (error: unknown) => hasErrorCode(error, c);

describe('ReadService', () => {
  it('given memory records (issue 17), then an agent lists and reads only the ones it promoted; another\'s reads as missing; a bad filter is PROJECTION_REQUEST_INVALID', async () => {
    const filters: unknown[] = [];
    const row = { memory_id: 'mem-1', promoted_by: 'agent-1' } as never;
    const reads = new ReadService(model({ memoryRecord: async () => row, memoryRecords: async (filter) => (filters.push(filter), []) }));
    await reads.memoryRecords({ status: 'active' }, { kind: 'own', principalId: 'agent-2' });
    await reads.memoryRecords({}, READ_ALL);
    expect(filters).toEqual([{ status: 'active', promotedBy: 'agent-2', limit: 200 }, { limit: 200 }]);
    await expect(reads.memoryRecord('mem-1', { kind: 'own', principalId: 'agent-1' })).resolves.toBe(row);
    await expect(reads.memoryRecord('mem-1', { kind: 'own', principalId: 'agent-2' })).rejects.toSatisfy(code('PROJECTION_NOT_FOUND'));
    await expect(reads.memoryRecords({ status: 'deleted' }, READ_ALL)).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
  });

  it('answers PROJECTION_NOT_FOUND for a well-formed id it does not hold, PROJECTION_REQUEST_INVALID for a malformed one', async () => {
    const reads = new ReadService(model());
    await expect(reads.action('ar-1', READ_ALL)).rejects.toSatisfy(code('PROJECTION_NOT_FOUND'));
    await expect(reads.receipt('r-1', READ_ALL)).rejects.toSatisfy(code('PROJECTION_NOT_FOUND'));
    await expect(reads.grant('gnt-1', READ_ALL)).rejects.toSatisfy(code('PROJECTION_NOT_FOUND'));
    await expect(reads.grant('gnt.1', READ_ALL)).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    await expect(reads.task('t-1', {}, READ_ALL)).rejects.toSatisfy(code('PROJECTION_NOT_FOUND'));
    await expect(reads.action('a.b', READ_ALL)).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
  });

  it('validates the approval status filter and page sizes, and keeps the earlier approvals field', async () => {
    const reads = new ReadService(model());
    await expect(reads.approvals({ status: 'waiting' }, READ_ALL)).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    await expect(reads.approvals({ status: 'pending', limit: '0' }, READ_ALL)).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    await expect(reads.approvals({ status: ['pending', 'granted'] }, READ_ALL)).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    await expect(reads.approvals({ status: 'pending', limit: '10' }, READ_ALL)).resolves.toEqual({ items: [], next_cursor: null, approvals: [] });
  });

  describe('paged lists', () => {
    const task = (n: number) => ({ task_id: `t-${String(n).padStart(3, '0')}`, created_at: `2030-01-01T00:00:${String(n % 60).padStart(2, '0')}.000Z` }) as never;
    /** 7 tasks; the model answers the page the request asks for (after the keyset, at most limit), newest first. */
    const seen: unknown[] = [];
    const reads = new ReadService(
      model({
        listTasks: async (request) => {
          seen.push(request);
          const all = [7, 6, 5, 4, 3, 2, 1].map(task) as Array<{ task_id: string; created_at: string }>;
          const start = request.after === undefined ? 0 : all.findIndex((row) => row.task_id === request.after?.id) + 1;
          return all.slice(start, start + request.limit) as never;
        },
      }),
    );

    it('given more rows than the limit, when walked by next_cursor, then every row comes once and the last page has no cursor', async () => {
      // when
      const ids: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const page = await reads.tasks({ limit: '3', ...(cursor === undefined ? {} : { cursor }) }, READ_ALL);
        ids.push(...page.items.map((row) => row.task_id));
        if (page.next_cursor === null) break;
        cursor = page.next_cursor;
      }
      // then
      expect(ids).toEqual(['t-007', 't-006', 't-005', 't-004', 't-003', 't-002', 't-001']);
      expect(seen.at(-1)).toMatchObject({ limit: 4, after: { id: 't-002', at: '2030-01-01T00:00:02.000Z' }, visibleTo: undefined });
    });

    it('given a cursor, when the filters change, another list takes it, or it is garbled, then 400 PROJECTION_CURSOR_INVALID', async () => {
      // given
      const first = await reads.tasks({ limit: '2', status: 'running' }, READ_ALL);
      const cursor = first.next_cursor as string;
      // then
      await expect(reads.tasks({ limit: '2', status: 'running', cursor }, READ_ALL)).resolves.toMatchObject({ items: expect.any(Array) });
      await expect(reads.tasks({ limit: '2', status: 'completed', cursor }, READ_ALL)).rejects.toSatisfy(code('PROJECTION_CURSOR_INVALID'));
      await expect(reads.tasks({ limit: '2', cursor }, READ_ALL)).rejects.toSatisfy(code('PROJECTION_CURSOR_INVALID'));
      await expect(reads.actions({ status: 'running', cursor }, READ_ALL)).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
      await expect(reads.receipts({ cursor }, READ_ALL)).rejects.toSatisfy(code('PROJECTION_CURSOR_INVALID'));
      await expect(reads.tasks({ cursor: 'not+a/cursor' }, READ_ALL)).rejects.toSatisfy(code('PROJECTION_CURSOR_INVALID'));
      await expect(reads.tasks({ cursor: 'AAAA' }, READ_ALL)).rejects.toSatisfy(code('PROJECTION_CURSOR_INVALID'));
    });

    it('given an unknown or repeated parameter, then 400 PROJECTION_REQUEST_INVALID naming it', async () => {
      await expect(reads.tasks({ statuss: 'running' }, READ_ALL)).rejects.toMatchObject({ code: 'PROJECTION_REQUEST_INVALID', details: { parameter: 'statuss' } });
      await expect(reads.tasks({ status: ['running', 'failed'] }, READ_ALL)).rejects.toMatchObject({ code: 'PROJECTION_REQUEST_INVALID', details: { parameter: 'status' } });
      await expect(reads.tasks({ since: 'yesterday' }, READ_ALL)).rejects.toMatchObject({ code: 'PROJECTION_REQUEST_INVALID', details: { parameter: 'since' } });
      await expect(reads.tasks({ limit: '1001' }, READ_ALL)).rejects.toMatchObject({ code: 'PROJECTION_REQUEST_INVALID', details: { parameter: 'limit' } });
    });
  });

  it('pages a task timeline and says where the next page starts', async () => {
    const event = (seq: number) => ({ task_seq: seq }) as never;
    const reads = new ReadService(
      model({
        task: async () => ({ task_id: 't-1' }) as never,
        taskEvents: async (_id, page) => [1, 2, 3, 4, 5].filter((s) => s > page.afterSeq).slice(0, page.limit).map(event),
      }),
    );
    expect(await reads.task('t-1', { limit: '2' }, READ_ALL)).toMatchObject({ events: [{ task_seq: 1 }, { task_seq: 2 }], next_after: 2 });
    expect(await reads.task('t-1', { after: '4', limit: '2' }, READ_ALL)).toMatchObject({ events: [{ task_seq: 5 }], next_after: null });
  });

  it('serves the JWKS of service principals, each kid once', async () => {
    const reads = new ReadService(model({ servicePrincipals: async () => [principal('approval', ['k1']), principal('receipt', ['k2', 'k1'])] }));
    expect((await reads.keys()).keys.map((k) => k.kid)).toEqual(['k1', 'k2']);
    expect((await reads.keys()).keys[0]).toMatchObject({ alg: 'EdDSA', use: 'sig', kty: 'OKP' });
  });

  describe('scope', () => {
    const own = (principalId: string) => ({ kind: 'own', principalId }) as const;
    const tasks: Record<string, { task_id: string; owner_principal_id: string }> = { 't-a': { task_id: 't-a', owner_principal_id: 'agent-a' }, 't-b': { task_id: 't-b', owner_principal_id: 'agent-b' } };
    const reads = new ReadService(
      model({
        task: async (id) => tasks[id] as never,
        action: async (id) => ({ action_request_id: id, principal_id: id === 'ar-a' ? 'agent-a' : 'agent-b', task_id: id === 'ar-a' ? 't-a' : 't-b' }) as never,
        receipt: async (id) => ({ receipt_id: id, task_id: id === 'r-a' ? 't-a' : 't-b' }) as never,
        approval: async (id) => ({ approval_id: id, task_id: id === 'ap-a' ? 't-a' : 't-b' }) as never,
        cell: async (id) => ({ cell_id: id, task_id: id === 'task-t-a' ? 't-a' : null }) as never,
        principal: async (id) => principal(id, []),
        grants: async () => [{ grant_id: 'g' }] as never,
      }),
    );

    it('given agent A, when it reads its own action, task, receipt, approval, cell and principal, then each answers', async () => {
      await expect(reads.action('ar-a', own('agent-a'))).resolves.toMatchObject({ action_request_id: 'ar-a' });
      await expect(reads.task('t-a', {}, own('agent-a'))).resolves.toMatchObject({ task_id: 't-a' });
      await expect(reads.receipt('r-a', own('agent-a'))).resolves.toMatchObject({ receipt_id: 'r-a' });
      await expect(reads.approval('ap-a', own('agent-a'))).resolves.toMatchObject({ approval_id: 'ap-a' });
      await expect(reads.cell('task-t-a', own('agent-a'))).resolves.toMatchObject({ cell_id: 'task-t-a' });
      await expect(reads.principal('agent-a', own('agent-a'))).resolves.toMatchObject({ principal_id: 'agent-a' });
    });

    it("given agent A, when it reads agent B's, then each answers exactly as a missing one (404, same message)", async () => {
      const missing = new ReadService(model());
      for (const [mine, theirs] of [
        [() => reads.action('ar-b', own('agent-a')), () => missing.action('ar-b', READ_ALL)],
        [() => reads.task('t-b', {}, own('agent-a')), () => missing.task('t-b', {}, READ_ALL)],
        [() => reads.receipt('r-b', own('agent-a')), () => missing.receipt('r-b', READ_ALL)],
        [() => reads.approval('ap-b', own('agent-a')), () => missing.approval('ap-b', READ_ALL)],
        [() => reads.cell('task-t-b', own('agent-a')), () => missing.cell('task-t-b', READ_ALL)],
        [() => reads.principal('agent-b', own('agent-a')), () => missing.principal('agent-b', READ_ALL)],
      ] as const) {
        const refused = await mine().then(() => undefined, (error: unknown) => error as Error);
        const absent = await theirs().then(() => undefined, (error: unknown) => error as Error);
        expect(refused).toSatisfy(code('PROJECTION_NOT_FOUND'));
        expect(refused?.message).toBe(absent?.message);
      }
    });

    it('given an own scope, when it lists a paged list, then the model is asked for its own rows only', async () => {
      const asked: unknown[] = [];
      const scoped = new ReadService(
        model({
          listTasks: async (request) => (asked.push(request), []),
          listActions: async (request) => (asked.push(request), []),
          listApprovals: async (request) => (asked.push(request), []),
          listReceipts: async (request) => (asked.push(request), []),
          listCells: async (request) => (asked.push(request), []),
        }),
      );
      await scoped.tasks({ principal_id: 'agent-b' }, own('agent-a'));
      await scoped.actions({}, own('agent-a'));
      await scoped.approvals({}, own('agent-a'));
      await scoped.receipts({}, own('agent-a'));
      await scoped.cells({}, own('agent-a'));
      expect(asked).toHaveLength(5);
      for (const request of asked) expect(request).toMatchObject({ visibleTo: 'agent-a' });
      expect(asked[0]).toMatchObject({ filter: { principal_id: 'agent-b' } });
    });

    it('given an own scope, when it lists grants across tasks, then 403 PROJECTION_SCOPE_FORBIDDEN; by another task, then an empty list', async () => {
      await expect(reads.grants({}, own('agent-a'))).rejects.toSatisfy(code('PROJECTION_SCOPE_FORBIDDEN'));
      await expect(reads.grants({ task_id: 't-b' }, own('agent-a'))).resolves.toEqual({ grants: [] });
      await expect(reads.grants({ task_id: 't-a' }, own('agent-a'))).resolves.toEqual({ grants: [{ grant_id: 'g' }] });
      await expect(reads.decisions('t-b', {}, own('agent-a'))).resolves.toEqual({ task_id: 't-b', decisions: [], next_after: null });
    });

    it('given scope all, when it reads anyone\'s, then it answers', async () => {
      await expect(reads.action('ar-b', READ_ALL)).resolves.toMatchObject({ action_request_id: 'ar-b' });
      await expect(reads.cell('task-x', READ_ALL)).resolves.toMatchObject({ task_id: null });
      await expect(reads.grants({}, READ_ALL)).resolves.toEqual({ grants: [{ grant_id: 'g' }] });
    });
  });
});
