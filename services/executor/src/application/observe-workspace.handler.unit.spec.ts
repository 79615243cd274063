import { hasErrorCode } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { classifyResource, ObserveWorkspaceHandler } from './observe-workspace.handler.js';
import type { WorkspaceObserverPort, WorkspaceWalk } from './ports.js';

const T0 = new Date('2030-01-01T00:00:00.000Z');

type RepoQuery = ReadonlyArray<{ readonly segments: readonly string[]; readonly ref: string }>;

/** An observer answering scripted walks (and ref reads) in order (the last one repeats), recording what it was asked. */
function scripted(...walks: WorkspaceWalk[]): WorkspaceObserverPort & { asked: Array<ReadonlyArray<readonly string[]>>; refsAsked: RepoQuery[]; refAnswers: string[][] } {
  const asked: Array<ReadonlyArray<readonly string[]>> = [];
  const refsAsked: RepoQuery[] = [];
  const refAnswers: string[][] = [];
  return {
    asked,
    refsAsked,
    refAnswers,
    walk: async (_taskId, paths) => {
      asked.push(paths);
      return walks[Math.min(asked.length - 1, walks.length - 1)] as WorkspaceWalk;
    },
    refs: async (_taskId, repos) => {
      refsAsked.push(repos);
      return refAnswers[Math.min(refsAsked.length - 1, refAnswers.length - 1)] ?? repos.map(() => 'absent');
    },
  };
}

function handler(observer: WorkspaceObserverPort, maxPasses = 4): ObserveWorkspaceHandler {
  let tick = 0;
  return new ObserveWorkspaceHandler({ observer, clock: () => new Date(T0.getTime() + 1000 * tick++) }, { maxPasses });
}

describe('classifyResource', () => {
  it.each([
    ['build', { kind: 'path', segments: ['build'] }],
    ['./src//a.ts', { kind: 'path', segments: ['src', 'a.ts'] }],
    ['.', { kind: 'path', segments: [] }],
    ['/workspace', { kind: 'path', segments: [] }],
    ['/workspace/out/log.txt', { kind: 'path', segments: ['out', 'log.txt'] }],
    ['../etc/passwd', { kind: 'refused' }],
    ['src/../../x', { kind: 'refused' }],
    ['a/../b', { kind: 'refused' }],
    ['/etc/passwd', { kind: 'refused' }],
    ['/workspaces/x', { kind: 'refused' }],
    ['~/.ssh/id_ed25519', { kind: 'refused' }],
    ['a\\..\\b', { kind: 'refused' }],
    ['https://example.org/x', { kind: 'unobservable' }],
    ['repo:workspace@refs/heads/main', { kind: 'repo', segments: [], ref: 'refs/heads/main' }],
    ['repo:.', { kind: 'repo', segments: [], ref: 'HEAD' }],
    ['repo:libs/ui@HEAD', { kind: 'repo', segments: ['libs', 'ui'], ref: 'HEAD' }],
    ['repo:writ@main', { kind: 'refused' }],
    ['repo:../other@refs/heads/main', { kind: 'refused' }],
    ['repo:/etc@HEAD', { kind: 'refused' }],
    ['repo:workspace@refs/../../x', { kind: 'refused' }],
    ['memory:notes', { kind: 'unobservable' }],
  ])('given %j, then %j', (resource, expected) => {
    expect(classifyResource(resource)).toEqual(expected);
  });
});

describe('ObserveWorkspaceHandler', () => {
  it('given a repo resource, then its ref is read on every pass beside the walk and must agree too', async () => {
    // given a commit that moves between the first and second read, then holds
    const observer = scripted({ fingerprints: ['sha256:aa'], stable: true });
    observer.refAnswers.push(['git:refs/heads/main=1111111111111111111111111111111111111111'], ['git:refs/heads/main=2222222222222222222222222222222222222222']);
    // when
    const reply = await handler(observer).observe({ task_id: 'task-1', resources: ['src', 'repo:workspace@refs/heads/main', 'repo:writ@main'] });
    // then
    expect(reply.fingerprints).toEqual({ src: 'sha256:aa', 'repo:workspace@refs/heads/main': 'git:refs/heads/main=2222222222222222222222222222222222222222', 'repo:writ@main': 'refused' });
    expect(observer.refsAsked).toHaveLength(3);
    expect(observer.refsAsked[0]).toEqual([{ segments: [], ref: 'refs/heads/main' }]);
  });

  it('given two agreeing stable walks, then each resource gets its fingerprint, refused and unobservable ones without a walk', async () => {
    const observer = scripted({ fingerprints: ['sha256:aa', 'absent'], stable: true });
    const reply = await handler(observer).observe({ task_id: 'task-1', resources: ['out.txt', '../x', 'gone', 'https://example.org/', 'out.txt'] });
    expect(reply).toEqual({
      fingerprints: { 'out.txt': 'sha256:aa', '../x': 'refused', gone: 'absent', 'https://example.org/': 'unobservable' },
      observed_at: '2030-01-01T00:00:01.000Z',
    });
    expect(observer.asked).toEqual([[['out.txt'], ['gone']], [['out.txt'], ['gone']]]);
  });

  it('given a walk that saw a change while reading, then it is not trusted: the next two must agree', async () => {
    const observer = scripted(
      { fingerprints: ['sha256:half'], stable: false },
      { fingerprints: ['sha256:full'], stable: true },
      { fingerprints: ['sha256:full'], stable: true },
    );
    const reply = await handler(observer).observe({ task_id: 'task-1', resources: ['out.txt'] });
    expect(reply.fingerprints).toEqual({ 'out.txt': 'sha256:full' });
    expect(observer.asked).toHaveLength(3);
  });

  it('given consecutive walks that never agree, then EXECUTOR_OBSERVE_UNSTABLE after the bounded passes', async () => {
    let n = 0;
    const observer: WorkspaceObserverPort = { walk: async () => ({ fingerprints: [`sha256:${n++}`], stable: true }), refs: async () => [] };
    const error = await handler(observer, 3)
      .observe({ task_id: 'task-1', resources: ['out.txt'] })
      .catch((e: unknown) => e);
    expect(hasErrorCode(error, 'EXECUTOR_OBSERVE_UNSTABLE')).toBe(true);
    expect(n).toBe(3);
  });

  it('given only URLs, then nothing is walked and they are unobservable', async () => {
    const observer = scripted({ fingerprints: [], stable: true });
    const reply = await handler(observer).observe({ task_id: 'task-1', resources: ['https://example.org/a'] });
    expect(reply.fingerprints).toEqual({ 'https://example.org/a': 'unobservable' });
    expect(observer.asked).toEqual([]);
  });
});
