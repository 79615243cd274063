import { describe, expect, it } from 'vitest';
import { actionRequest, actionRequestWithNewTask } from '../test/samples.js';
import { issuesOf, pathsOf } from '../test/issues.js';
import { LIMITS, hasErrorCode, parseActionRequest, safeParseActionRequest, type ContractError } from './index.js';

const base = actionRequest;
const withNewTask = actionRequestWithNewTask;

function thrownBy(fn: () => unknown): ContractError {
  try {
    fn();
  } catch (error) {
    return error as ContractError;
  }
  throw new Error('expected a throw');
}

describe('ActionRequest', () => {
  it('given a request for an existing task, when parsed, then it is accepted', () => {
    expect(safeParseActionRequest(base).ok).toBe(true);
  });

  it('given a request proposing a new task and step with extra params, when parsed, then the extra params are kept', () => {
    // when
    const parsed = parseActionRequest(withNewTask);
    // then
    expect(parsed.params).toEqual({ path: 'src/retry/retry.ts', content: 'export const retries = 3;\n', mode: 420, note: { by: 'agent' } });
  });

  it('given several offending fields at once, when parsed, then CONTRACT_INVALID lists every offending path', () => {
    // given
    const input = {
      ...base,
      action_request_id: 'has.dots',
      action_class: 'teleport',
      target_resources: [],
      params: { argv: [], url: 'ftp://example.com/x', headers: { 'bad header': 'x' } },
      reversibility_hint: 'maybe',
      proposed_at: 'yesterday',
      extra: 1,
    };
    // when
    const error = thrownBy(() => parseActionRequest(input));
    // then
    expect(hasErrorCode(error, 'CONTRACT_INVALID')).toBe(true);
    expect(error.contract).toBe('ActionRequest');
    expect([...new Set(error.issues.map((issue) => issue.path))].sort()).toEqual(
      [
        '',
        'action_class',
        'action_request_id',
        'params.argv',
        'params.headers.bad header',
        'params.url',
        'proposed_at',
        'reversibility_hint',
        'target_resources',
      ].sort(),
    );
    expect(error.toJSON()).toMatchObject({ code: 'CONTRACT_INVALID', details: { contract: 'ActionRequest' } });
  });

  it('given an unknown top-level key (a typo), when parsed, then it is rejected at the root', () => {
    const { reason, ...rest } = base;
    expect(issuesOf('ActionRequest', { ...rest, reasons: reason })).toEqual([
      { path: 'reason', code: 'invalid_type' },
      { path: '', code: 'unrecognized_keys' },
    ]);
  });

  it('given an unknown key inside task or step, when parsed, then it is rejected there', () => {
    const input = { ...withNewTask, task: { ...withNewTask.task, owner: 'x' }, step: { ...withNewTask.step, prio: 1 } };
    expect(issuesOf('ActionRequest', input)).toEqual([
      { path: 'task', code: 'unrecognized_keys' },
      { path: 'step', code: 'unrecognized_keys' },
    ]);
  });

  describe('task binding', () => {
    it('given neither task_id nor task, when parsed, then task_id is the offending path', () => {
      const { task_id: _omitted, ...input } = base;
      expect(issuesOf('ActionRequest', input)).toEqual([{ path: 'task_id', code: 'custom' }]);
    });

    it('given both task_id and task, when parsed, then task is the offending path', () => {
      expect(issuesOf('ActionRequest', { ...withNewTask, task_id: 'task-01' })).toEqual([{ path: 'task', code: 'custom' }]);
    });
  });

  describe('params required by the action class', () => {
    const cases = [
      { note: 'execute_command needs argv', action_class: 'execute_command', params: { cwd: 'w' }, want: 'params.argv' },
      { note: 'read_local needs path', action_class: 'read_local', params: {}, want: 'params.path' },
      { note: 'write_local needs path', action_class: 'write_local', params: { content: 'x' }, want: 'params.path' },
      { note: 'delete_local needs path', action_class: 'delete_local', params: {}, want: 'params.path' },
      { note: 'network_read needs url', action_class: 'network_read', params: { method: 'GET' }, want: 'params.url' },
      { note: 'network_write needs url', action_class: 'network_write', params: { body: '{}' }, want: 'params.url' },
      { note: 'network_read may not POST', action_class: 'network_read', params: { url: 'https://example.com', method: 'POST' }, want: 'params.method' },
    ] as const;

    it.each(cases)('$note', ({ action_class, params, want }) => {
      // given
      const input = { ...base, action_class, params };
      // when
      const issues = issuesOf('ActionRequest', input);
      // then
      expect(issues).toEqual([{ path: want, code: 'custom' }]);
    });

    it('given a rule violation and a field error together, when parsed, then both are listed', () => {
      const input = { ...base, action_class: 'network_write', params: {}, reason: '' };
      expect(pathsOf('ActionRequest', input)).toEqual(['params.url', 'reason']);
    });

    it('given a network_write with POST and a url, when parsed, then it is accepted', () => {
      const input = { ...base, action_class: 'network_write', params: { url: 'https://api.example.com/v1/items', method: 'POST', body: '{}' } };
      expect(issuesOf('ActionRequest', input)).toEqual([]);
    });
  });

  describe('params types', () => {
    it.each([
      ['argv must be a non-empty list of strings', { argv: [] }, 'params.argv'],
      ['argv elements are strings', { argv: ['ls', 3] }, 'params.argv.1'],
      ['url must be http(s)', { argv: ['x'], url: 'javascript:alert(1)' }, 'params.url'],
      ['url must be absolute', { argv: ['x'], url: '/relative' }, 'params.url'],
      ['method is a known HTTP method', { argv: ['x'], method: 'BREW' }, 'params.method'],
      ['path has no control characters', { argv: ['x'], path: 'a\u0000b' }, 'params.path'],
      ['extra keys carry JSON values only', { argv: ['x'], big: 1n, gone: undefined }, 'params.big', 'params.gone'],
    ])('%s', (_note, params, ...want) => {
      expect(pathsOf('ActionRequest', { ...base, params })).toEqual(want);
    });
  });

  describe('bounded sizes', () => {
    it.each([
      ['reason', { reason: 'x'.repeat(LIMITS.text + 1) }, 'reason'],
      ['target_resources', { target_resources: Array.from({ length: LIMITS.targetResources + 1 }, (_, i) => `f${i}`) }, 'target_resources'],
      ['expected_effects', { expected_effects: Array.from({ length: LIMITS.shortListItems + 1 }, () => 'e') }, 'expected_effects'],
      ['argv items', { params: { argv: Array.from({ length: LIMITS.argvItems + 1 }, () => 'a') } }, 'params.argv'],
      ['one arg', { params: { argv: ['x'.repeat(LIMITS.arg + 1)] } }, 'params.argv.0'],
      ['inline content', { action_class: 'write_local', params: { path: 'f', content: 'x'.repeat(LIMITS.inlineContent + 1) } }, 'params.content'],
      ['a string inside an extra param', { params: { argv: ['x'], blob: 'x'.repeat(LIMITS.jsonString + 1) } }, 'params.blob'],
      ['header count', { params: { argv: ['x'], headers: Object.fromEntries(Array.from({ length: LIMITS.headers + 1 }, (_, i) => [`h${i}`, 'v'])) } }, 'params.headers'],
    ])('given an oversized %s, when parsed, then it is rejected at its path', (_note, patch, want) => {
      expect(pathsOf('ActionRequest', { ...base, ...patch })).toEqual([want]);
    });

    it('given params nested deeper than the limit, when parsed, then params is rejected without walking it', () => {
      // given: deep enough to overflow the stack if a recursive schema walked it
      let deep: unknown = 'leaf';
      for (let i = 0; i < 100_000; i += 1) deep = [deep];
      // when
      const issues = issuesOf('ActionRequest', { ...base, params: { argv: ['x'], deep } });
      // then
      expect(issues).toEqual([{ path: 'params', code: 'custom' }]);
    });

    it('given params with too many JSON values in total, when parsed, then params is rejected', () => {
      const wide = Array.from({ length: LIMITS.jsonItems }, () => Array.from({ length: 20 }, () => 0));
      expect(issuesOf('ActionRequest', { ...base, params: { argv: ['x'], wide } })).toEqual([{ path: 'params', code: 'custom' }]);
    });

    it('given params at the depth limit, when parsed, then they are accepted', () => {
      let deep: unknown = 'leaf';
      for (let i = 0; i < LIMITS.jsonDepth - 1; i += 1) deep = { d: deep };
      expect(issuesOf('ActionRequest', { ...base, params: { argv: ['x'], deep } })).toEqual([]);
    });
  });
});

describe('ActionRequest of class memory_write (issue 17)', () => {
  const memoryWrite = (memory: unknown, targets: string[] = ['memory:repo:writ']) => ({ ...base, action_class: 'memory_write', target_resources: targets, params: { memory } });

  it('given a complete promotion, or one missing its evidence and trust metadata, then both are well formed (a missing part degrades, it is not malformed)', () => {
    expect(safeParseActionRequest(memoryWrite({ op: 'promote', memory_id: 'mem-1', claim: 'c', scope: 'repo:writ', evidence_refs: [{ kind: 'receipt', id: 'r-1' }], trust_tier: 'verified' })).ok).toBe(true);
    expect(safeParseActionRequest(memoryWrite({ op: 'promote', memory_id: 'mem-1' })).ok).toBe(true);
    expect(safeParseActionRequest(memoryWrite({ op: 'invalidate', memory_id: 'mem-1', reason: 'stale' })).ok).toBe(true);
  });

  it.each([
    ['no params.memory', { ...base, action_class: 'memory_write', target_resources: ['memory:repo:writ'], params: {} }, ['params.memory']],
    ['an unknown op', memoryWrite({ op: 'delete', memory_id: 'mem-1' }), ['params.memory.op']],
    ['a trust tier that does not exist', memoryWrite({ op: 'promote', memory_id: 'mem-1', trust_tier: 'gospel' }), ['params.memory.trust_tier']],
    ['evidence of an unknown kind', memoryWrite({ op: 'promote', memory_id: 'mem-1', evidence_refs: [{ kind: 'rumour', id: 'x' }] }), ['params.memory.evidence_refs.0.kind']],
    ['an invalidation without a reason', memoryWrite({ op: 'invalidate', memory_id: 'mem-1' }), ['params.memory.reason']],
    ['an unknown key (a forged policy_result_ref)', memoryWrite({ op: 'promote', memory_id: 'mem-1', policy_result_ref: 'policy_result:x' }), ['params.memory']],
    ['no memory: target', memoryWrite({ op: 'promote', memory_id: 'mem-1' }, ['src/a.ts']), ['target_resources']],
  ])('given %s, then it is refused CONTRACT_INVALID at that path', (_note, input, paths) => {
    const error = thrownBy(() => parseActionRequest(input));
    expect(hasErrorCode(error, 'CONTRACT_INVALID')).toBe(true);
    expect([...new Set(error.issues.map((issue) => issue.path))]).toEqual(paths);
  });
});
