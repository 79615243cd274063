import { ExecutionCompleted } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { describe, expect, it } from 'vitest';
import type { WorkspaceDiff } from '../outbound/cells/index.js';
import { EMPTY_SHA256, MAX_COMPLETION_PAYLOAD_BYTES, changedFilesOf, fitCompletion } from './execution-record.js';

const file = (content: string) => ({ kind: 'file' as const, sha256: sha256Hex(content), size: content.length, mode: 0o644 });

describe('execution record', () => {
  it('given a diff, then changed_files lists every change by path with both hashes', () => {
    const diff: WorkspaceDiff = {
      added: [{ path: 'b.txt', before: null, after: file('b'), before_sha256: null, after_sha256: sha256Hex('b') }],
      modified: [{ path: 'a.txt', before: file('1'), after: file('2'), before_sha256: sha256Hex('1'), after_sha256: sha256Hex('2') }],
      deleted: [{ path: 'c.txt', before: file('c'), after: null, before_sha256: sha256Hex('c'), after_sha256: null }],
    };
    expect(changedFilesOf(diff).map((change) => [change.path, change.change])).toEqual([
      ['a.txt', 'modified'],
      ['b.txt', 'added'],
      ['c.txt', 'deleted'],
    ]);
  });

  it('given more changed files than fit in one event, then the list is cut to fit and the payload stays valid', () => {
    const changed = Array.from({ length: 256 }, (_, i) => ({ path: `${'d/'.repeat(1_900)}f${i}`, change: 'added' as const, before_sha256: null, after_sha256: EMPTY_SHA256 }));
    const payload = fitCompletion({
      grant_id: 'grant-1',
      use_no: 1,
      executor_id: 'executor-1',
      outcome: 'completed',
      exit_code: 0,
      timed_out: false,
      duration_ms: 1,
      stdout_sha256: EMPTY_SHA256,
      stderr_sha256: EMPTY_SHA256,
      changed_files: changed,
      artifacts: [],
      environment: null,
      at: '2030-01-01T00:00:00Z',
    });
    expect(Buffer.byteLength(JSON.stringify(payload))).toBeLessThanOrEqual(MAX_COMPLETION_PAYLOAD_BYTES);
    expect(payload.changed_files.length).toBeGreaterThan(0);
    expect(payload.changed_files.length).toBeLessThan(256);
    expect(ExecutionCompleted.safeParse(payload).success).toBe(true);
  });
});
