import { describe, expect, it } from 'vitest';
import { DEFAULT_SACRED_PATHS } from '../policy/sacred-scopes.js';
import { auditFileOwnership, type ExecutedChange } from './file-ownership.audit.js';

const H = (c: string) => c.repeat(64);
const SACRED = { scopes: DEFAULT_SACRED_PATHS, exceptions: [] as string[] };

function change(path: string, kind: ExecutedChange['change'] = 'modified', execution = 'evt-1'): ExecutedChange {
  return { path, change: kind, before_sha256: kind === 'added' ? null : H('a'), after_sha256: kind === 'deleted' ? null : H('b'), execution_event_id: execution };
}

describe('auditFileOwnership (seed 003 file-ownership audit)', () => {
  it('given only owned files changed, when audited, then it passes', () => {
    const audit = auditFileOwnership([change('src/retry/retry.ts'), change('src/retry/retry.test.ts', 'added')], ['src/retry/**'], SACRED);
    expect(audit).toMatchObject({ verdict: 'passed', changed_files: 2, modified_not_owned: [], sacred_modified: [], restore: [] });
  });

  it('given owned files that were not modified, when audited, then it passes (headroom is fine)', () => {
    expect(auditFileOwnership([], ['src/**', 'docs/**'], SACRED).verdict).toBe('passed');
  });

  it('given a file modified outside files_owned, when audited, then it fails and names the file and its execution', () => {
    const audit = auditFileOwnership([change('src/retry/retry.ts'), change('src/other.ts', 'modified', 'evt-2')], ['src/retry/**'], SACRED);
    expect(audit.verdict).toBe('failed');
    expect(audit.modified_not_owned.map((c) => [c.path, c.execution_event_id])).toEqual([['src/other.ts', 'evt-2']]);
  });

  it('given a file deleted outside files_owned, when audited, then it fails', () => {
    expect(auditFileOwnership([change('README.md', 'deleted')], ['src/**'], SACRED).modified_not_owned.map((c) => c.path)).toEqual(['README.md']);
  });

  it('given a path spelled outside the workspace, when audited, then it is never owned', () => {
    expect(auditFileOwnership([change('../escape.txt', 'added')], ['**'], SACRED).modified_not_owned).toHaveLength(1);
  });

  it('given a Sacred Scope file modified even inside files_owned, when audited, then it fails with what to restore', () => {
    const audit = auditFileOwnership([change('app/.env'), change('app/.env', 'modified', 'evt-2'), change('package.json', 'added')], ['**'], SACRED);
    expect(audit.verdict).toBe('failed');
    expect(audit.modified_not_owned).toEqual([]);
    expect(audit.sacred_modified.map((c) => c.path)).toEqual(['app/.env', 'app/.env', 'package.json']);
    expect(audit.restore).toEqual([
      { path: 'app/.env', before_sha256: H('a') },
      { path: 'package.json', before_sha256: null },
    ]);
  });

  it("given a sacred path the task named as an exception and owns, when audited, then it is excused", () => {
    const audit = auditFileOwnership([change('db/migrations/002.sql', 'added')], ['db/migrations/**'], { scopes: DEFAULT_SACRED_PATHS, exceptions: ['db/migrations/002.sql'] });
    expect(audit.verdict).toBe('passed');
  });

  it('given an exception for a sacred path the task does not own, when audited, then it is not excused', () => {
    const audit = auditFileOwnership([change('db/migrations/002.sql', 'added')], ['src/**'], { scopes: DEFAULT_SACRED_PATHS, exceptions: ['db/migrations/002.sql'] });
    expect(audit.sacred_modified).toHaveLength(1);
    expect(audit.modified_not_owned).toHaveLength(1);
  });

  it('given an execution whose diff was not captured, when audited, then it fails closed', () => {
    const audit = auditFileOwnership([], ['**'], SACRED, ['evt-7']);
    expect(audit).toMatchObject({ verdict: 'failed', unaudited_executions: ['evt-7'] });
  });
});
