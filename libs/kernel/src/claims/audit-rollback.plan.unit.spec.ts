import type { ReceiptRollback, RollbackStep } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { planAuditRollback, type ReceiptedExecution } from './audit-rollback.plan.js';
import type { ExecutedChange } from './file-ownership.audit.js';

const H = (c: string) => c.repeat(64);

function change(path: string, execution: string, kind: ExecutedChange['change'] = 'added'): ExecutedChange {
  return { path, change: kind, before_sha256: kind === 'added' ? null : H('a'), after_sha256: kind === 'deleted' ? null : H('b'), execution_event_id: execution };
}

const remove = (path: string): RollbackStep => ({ action_class: 'delete_local', path, expected_sha256: H('b') });
const restore = (path: string): RollbackStep => ({ action_class: 'write_local', path, expected_sha256: H('b'), restore_artifact_ref: 'artifact:art-1', restore_sha256: H('a') });

function undoable(...steps: RollbackStep[]): ReceiptRollback {
  return { method: 'compensating_local_actions', statement: 'reversible', prerequisites: [], steps };
}

const NONE: ReceiptRollback = { method: 'none', statement: 'no rollback method: the pre-image of package.json was not captured', prerequisites: [], steps: [] };

function receipts(entries: Record<string, ReceiptedExecution>) {
  return (execution: string) => entries[execution];
}

describe('planAuditRollback (a failed file-ownership audit rolls back what it flagged)', () => {
  it('given a flagged file whose receipt names a method, when planned, then that receipt is rolled back with its own steps, unchanged', () => {
    const steps = [remove('billing/plan.ts'), restore('src/a.ts')];
    const plan = planAuditRollback([change('billing/plan.ts', 'evt-1')], receipts({ 'evt-1': { receipt_id: 'rct-1', receipt_hash: H('c'), rollback: undoable(...steps), seq: 7 } }));
    expect(plan).toEqual({ rollbacks: [{ receipt_id: 'rct-1', receipt_hash: H('c'), steps, paths: ['billing/plan.ts'] }], unrollable: [] });
  });

  it('given two flagged files of one action, when planned, then one rollback covers both', () => {
    const rollback = undoable(remove('billing/a.ts'), remove('billing/b.ts'));
    const plan = planAuditRollback([change('billing/a.ts', 'evt-1'), change('billing/b.ts', 'evt-1')], receipts({ 'evt-1': { receipt_id: 'rct-1', receipt_hash: H('c'), rollback, seq: 3 } }));
    expect(plan.rollbacks.map((r) => [r.receipt_id, r.paths])).toEqual([['rct-1', ['billing/a.ts', 'billing/b.ts']]]);
  });

  it('given one path changed by two actions, when planned, then the later receipt is rolled back first (each step expects what its own action left)', () => {
    const plan = planAuditRollback(
      [change('package.json', 'evt-1', 'modified'), change('package.json', 'evt-2', 'modified')],
      receipts({
        'evt-1': { receipt_id: 'rct-early', receipt_hash: H('c'), rollback: undoable(restore('package.json')), seq: 5 },
        'evt-2': { receipt_id: 'rct-late', receipt_hash: H('d'), rollback: undoable(restore('package.json')), seq: 9 },
      }),
    );
    expect(plan.rollbacks.map((r) => r.receipt_id)).toEqual(['rct-late', 'rct-early']);
  });

  it('given a receipt that names no method (a command modified the file without a pre-image), when planned, then the path is unrollable with the receipt and its statement, and nothing is proposed', () => {
    const plan = planAuditRollback([change('package.json', 'evt-1', 'modified')], receipts({ 'evt-1': { receipt_id: 'rct-1', receipt_hash: H('c'), rollback: NONE, seq: 4 } }));
    expect(plan.rollbacks).toEqual([]);
    expect(plan.unrollable).toEqual([{ path: 'package.json', receipt_id: 'rct-1', reason: `receipt rct-1 names no rollback method: ${NONE.statement}` }]);
  });

  it('given an execution no receipt closes, a receipt without a hash or without metadata, when planned, then each path is unrollable and says why', () => {
    const plan = planAuditRollback(
      [change('a/package.json', 'evt-1'), change('b/package.json', 'evt-2'), change('c/package.json', 'evt-3')],
      receipts({
        'evt-2': { receipt_id: 'rct-2', receipt_hash: null, rollback: undoable(remove('b/package.json')), seq: 2 },
        'evt-3': { receipt_id: 'rct-3', receipt_hash: H('c'), rollback: null, seq: 3 },
      }),
    );
    expect(plan.rollbacks).toEqual([]);
    expect(plan.unrollable.map((u) => [u.path, u.receipt_id])).toEqual([
      ['a/package.json', null],
      ['b/package.json', 'rct-2'],
      ['c/package.json', 'rct-3'],
    ]);
    expect(plan.unrollable[0]?.reason).toContain('no receipt');
    expect(plan.unrollable[2]?.reason).toContain('predates rollback metadata');
  });

  it('given a path one of whose changes cannot be undone, when planned, then it is unrollable and a receipt left with only that path is not proposed', () => {
    const plan = planAuditRollback(
      [change('package.json', 'evt-1', 'modified'), change('package.json', 'evt-2', 'modified'), change('billing/x.ts', 'evt-3')],
      receipts({
        'evt-1': { receipt_id: 'rct-cmd', receipt_hash: H('c'), rollback: NONE, seq: 1 },
        'evt-2': { receipt_id: 'rct-write', receipt_hash: H('d'), rollback: undoable(restore('package.json')), seq: 2 },
        'evt-3': { receipt_id: 'rct-add', receipt_hash: H('e'), rollback: undoable(remove('billing/x.ts')), seq: 3 },
      }),
    );
    expect(plan.rollbacks.map((r) => r.receipt_id)).toEqual(['rct-add']);
    expect(plan.unrollable.map((u) => u.path)).toEqual(['package.json']);
  });

  it("given a receipt whose rollback has no step for the flagged path, when planned, then the path is unrollable (the receipt's steps are never extended)", () => {
    const plan = planAuditRollback([change('billing/x.ts', 'evt-1')], receipts({ 'evt-1': { receipt_id: 'rct-1', receipt_hash: H('c'), rollback: undoable(remove('src/other.ts')), seq: 1 } }));
    expect(plan.rollbacks).toEqual([]);
    expect(plan.unrollable[0]?.reason).toContain('no step for this path');
  });
});
