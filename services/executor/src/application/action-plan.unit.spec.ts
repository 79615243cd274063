import type { ActionRequest, CapabilityGrantClaims } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { sampleRequest } from '../../test/grants.js';
import { DELETE_LOCAL_SCRIPT, VCS_SCRIPT, WRITE_LOCAL_SCRIPT, execLimits, planAction, urlHost, useResources, workspacePath } from './action-plan.js';

const limits = { timeoutMs: 60_000, maxOutputBytes: 1024 };
const claims = (constraints?: CapabilityGrantClaims['constraints']): CapabilityGrantClaims => ({
    iss: 'writ-approval',
    sub: 'writ-executor',
    aud: 'writ-executor',
    jti: 'grant-1',
    iat: 1,
    exp: 2,
    task_id: 'task-1',
    step_id: 'step-1',
    attempt_id: 'attempt-1',
    action_class: 'execute_command',
    resource_scope: { paths: ['.'], hosts: [] },
    max_uses: 1,
    issued_by_principal_id: 'writ-policy',
    ...(constraints === undefined ? {} : { constraints }),
});

describe('useResources: what the grant scope must cover', () => {
  it.each([
    ['paths from target resources; a cwd is not a resource', { target_resources: ['out.txt'], params: { argv: ['ls'], cwd: 'src' } }, { paths: ['out.txt'], hosts: [], repos: [] }],
    ['a URL becomes its host, with an explicit port', { target_resources: ['https://API.example.com:8443/v1'], params: { url: 'http://example.com/x' } }, { paths: [], hosts: ['api.example.com:8443', 'example.com'], repos: [] }],
    ['a repo ref', { target_resources: ['repo:github.com/acme/app@refs/heads/writ/x'], params: {} }, { paths: [], hosts: [], repos: [{ repo: 'github.com/acme/app', ref: 'refs/heads/writ/x' }] }],
    ['another scheme names nothing a scope can hold (as the approval service mints it)', { target_resources: ['memory:team'], params: {} }, { paths: [], hosts: [], repos: [] }],
    ['a repo without a ref keeps an empty ref (no scope covers it)', { target_resources: ['repo:github.com/acme/app'], params: {} }, { paths: [], hosts: [], repos: [{ repo: 'github.com/acme/app', ref: '' }] }],
  ])('given %s', (_note, overrides, want) => {
    expect(useResources(sampleRequest(overrides as never))).toEqual(want);
  });

  it('given something that is not a URL, then urlHost keeps it as is (it matches no host pattern)', () => {
    expect(urlHost('http://')).toBe('http://');
  });
});

describe('workspacePath: a file action names a place below the workspace', () => {
  it.each([
    ['a/b.txt', 'a/b.txt'],
    ['./a//b.txt', 'a/b.txt'],
    ['-rf', '-rf'],
  ])('given %j, then %j', (input, relative) => {
    expect(workspacePath(input)).toEqual({ ok: true, relative });
  });

  it.each(['', '/etc/passwd', '../x', 'a/../../x', 'a/../b', '~/x', 'a\\b', '.', './', 'a\nb'])('given %j, then it is refused', (input) => {
    expect(workspacePath(input).ok).toBe(false);
  });
});

describe('execLimits', () => {
  it('given no grant limits, then the service defaults; a request may ask for less time, never more', () => {
    const defaults = { actionTimeoutMs: 60_000, outputCapBytes: 1_000 };
    expect(execLimits(sampleRequest(), claims(), defaults)).toEqual({ timeoutMs: 60_000, maxOutputBytes: 1_000 });
    expect(execLimits(sampleRequest({ params: { argv: ['x'], timeout_ms: 5_000 } }), claims(), defaults)).toEqual({ timeoutMs: 5_000, maxOutputBytes: 1_000 });
    expect(execLimits(sampleRequest({ params: { argv: ['x'], timeout_ms: 500_000 } }), claims(), defaults).timeoutMs).toBe(60_000);
  });

  it('given the grant sets its wall clock and output cap, then they apply (the cap never above the service cap)', () => {
    const defaults = { actionTimeoutMs: 60_000, outputCapBytes: 1_000 };
    expect(execLimits(sampleRequest(), claims({ timeout_ms: 120_000, max_output_bytes: 10 }), defaults)).toEqual({ timeoutMs: 120_000, maxOutputBytes: 10 });
    expect(execLimits(sampleRequest(), claims({ max_output_bytes: 10_000 }), defaults).maxOutputBytes).toBe(1_000);
  });
});

describe('planAction', () => {
  it('given execute_command, then argv and cwd as requested', () => {
    expect(planAction(sampleRequest({ params: { argv: ['make', 'test'], cwd: 'src' } }), limits)).toEqual({ kind: 'run', argv: ['make', 'test'], cwd: 'src', ...limits });
  });

  it('given write_local, then a fixed script writes stdin to ./<path>; base64 content is decoded', () => {
    const plan = planAction(sampleRequest({ action_class: 'write_local', params: { path: 'a/b.txt', content: 'aGk=', encoding: 'base64' } }), limits);
    expect(plan).toMatchObject({ kind: 'run', argv: ['sh', '-c', WRITE_LOCAL_SCRIPT, 'writ-write-local', './a/b.txt'], filePath: 'a/b.txt' });
    expect(plan.kind === 'run' && Buffer.from(plan.stdin ?? []).toString()).toBe('hi');
  });

  it('given read_local and delete_local, then cat and the delete script on ./<path>', () => {
    expect(planAction(sampleRequest({ action_class: 'read_local', params: { path: 'a.txt' } }), limits)).toMatchObject({ argv: ['cat', './a.txt'], filePath: 'a.txt' });
    expect(planAction(sampleRequest({ action_class: 'delete_local', params: { path: 'd' } }), limits)).toMatchObject({
      argv: ['sh', '-c', DELETE_LOCAL_SCRIPT, 'writ-delete-local', './d'],
    });
  });

  it.each([
    ['write_local to an absolute path', { action_class: 'write_local', params: { path: '/etc/passwd', content: 'x' } }, 'EXECUTOR_PATH_ESCAPE'],
    ['write_local through ..', { action_class: 'write_local', params: { path: 'a/../../x', content: 'x' } }, 'EXECUTOR_PATH_ESCAPE'],
    ['write_local without content', { action_class: 'write_local', params: { path: 'a' } }, 'EXECUTOR_PARAMS_INVALID'],
    ['write_local with content that is not base64', { action_class: 'write_local', params: { path: 'a', content: 'not base64!', encoding: 'base64' } }, 'EXECUTOR_PARAMS_INVALID'],
    ['delete_local of the workspace itself', { action_class: 'delete_local', params: { path: '.' } }, 'EXECUTOR_PATH_ESCAPE'],
    ['publication', { action_class: 'publication', params: { url: 'https://example.com' } }, 'EXECUTOR_ACTION_UNSUPPORTED'],
    ['payment', { action_class: 'payment', params: {} }, 'EXECUTOR_ACTION_UNSUPPORTED'],
  ])('given %s, then it cannot run: %s', (_note, overrides, code) => {
    expect(planAction(sampleRequest(overrides as never), limits)).toMatchObject({ kind: 'cannot-run', code });
  });
});

describe('planAction for vcs_mutation', () => {
  const vcs = (params: ActionRequest['params']) => sampleRequest({ action_class: 'vcs_mutation', target_resources: ['.'], params });
  const limits = { timeoutMs: 1_000, maxOutputBytes: 64 };

  it('given git argv, then the fixed git script with the proposer and the subcommand, in the repository as cwd', () => {
    expect(planAction(vcs({ argv: ['git', 'commit', '-m', 'x'], cwd: './repo/' }), limits)).toMatchObject({ kind: 'run', argv: ['sh', '-c', VCS_SCRIPT, 'writ-vcs', 'agent-1', 'commit', '-m', 'x'], cwd: 'repo', vcsRepo: 'repo' });
    expect(planAction(vcs({ argv: ['git', 'tag', 'v1'] }), limits)).toMatchObject({ kind: 'run', cwd: '.', vcsRepo: '.' });
  });

  it.each([
    ['a non-git argv', { argv: ['sh', '-c', 'git commit'] }, 'EXECUTOR_PARAMS_INVALID'],
    ['git alone', { argv: ['git'] }, 'EXECUTOR_PARAMS_INVALID'],
    ['a global option first', { argv: ['git', '--git-dir=/etc', 'log'] }, 'EXECUTOR_PARAMS_INVALID'],
    ['no argv', {}, 'EXECUTOR_PARAMS_INVALID'],
    ['a cwd that climbs', { argv: ['git', 'add', '.'], cwd: '../other' }, 'EXECUTOR_PATH_ESCAPE'],
  ] as const)('given %s, then %s', (_note, params, code) => {
    expect(planAction(vcs(params as ActionRequest['params']), limits)).toMatchObject({ kind: 'cannot-run', code });
  });
});
