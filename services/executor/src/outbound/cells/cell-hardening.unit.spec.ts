import { afterEach, describe, expect, it } from 'vitest';
import { CELL_DEFAULTS, resolveCellConfig } from './cell-config.js';
import { CELL_ENV, CELL_LABELS, cellContainerSpec } from './cell-hardening.js';

const input = (overrides: Partial<Parameters<typeof cellContainerSpec>[0]> = {}) => ({
  taskId: 'task-1',
  containerName: 'writ-cell-task-1',
  image: 'writ/cell:latest',
  imageId: 'sha256:aaaa',
  workspaceDir: '/var/lib/writ/cells/task-1/workspace',
  config: resolveCellConfig(),
  ...overrides,
});

describe('the cell container spec (hardening as data)', () => {
  afterEach(() => {
    delete process.env.WRIT_CANARY_SECRET;
  });

  it('given the defaults, when the spec is built, then every isolation flag is set', () => {
    const { spec } = cellContainerSpec(input());
    expect(spec.User).toBe('10001:10001');
    expect(spec.NetworkDisabled).toBe(true);
    expect(spec.HostConfig).toMatchObject({
      NetworkMode: 'none',
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      CapAdd: [],
      SecurityOpt: ['no-new-privileges'],
      Privileged: false,
      Memory: 256 * 1024 * 1024,
      MemorySwap: 256 * 1024 * 1024,
      PidsLimit: 128,
      NanoCpus: 1_000_000_000,
      Tmpfs: { '/tmp': 'rw,noexec,nosuid,nodev,size=16m' },
      IpcMode: 'private',
      Init: false,
      AutoRemove: false,
      Binds: [],
      Devices: [],
    });
    // Default seccomp stays on: nothing unconfines it.
    expect(JSON.stringify(spec)).not.toContain('unconfined');
  });

  it('given a workspace dir, when the spec is built, then it is the only host path, mounted at /workspace', () => {
    const { spec } = cellContainerSpec(input());
    expect(spec.HostConfig.Mounts).toEqual([
      { Type: 'bind', Source: '/var/lib/writ/cells/task-1/workspace', Target: '/workspace', ReadOnly: false, BindOptions: { Propagation: 'rprivate' } },
    ]);
    expect(JSON.stringify(spec)).not.toContain('docker.sock');
  });

  it('given a secret in the executor environment, when the spec is built, then the cell env is the allowlist only', () => {
    process.env.WRIT_CANARY_SECRET = 'canary-value';
    const { spec } = cellContainerSpec(input());
    expect(spec.Env).toEqual(['PATH=/bin:/usr/bin', 'HOME=/workspace', 'LANG=C.UTF-8']);
    expect(Object.keys(CELL_ENV)).toEqual(['PATH', 'HOME', 'LANG']);
    expect(JSON.stringify(spec)).not.toContain('canary-value');
  });

  it('given configured limits, when the spec is built, then they are applied', () => {
    const config = resolveCellConfig({ memoryBytes: 64 * 1024 * 1024, pidsLimit: 32, nanoCpus: 500_000_000, tmpfsBytes: 1024 * 1024 });
    const { spec } = cellContainerSpec(input({ config }));
    expect(spec.HostConfig).toMatchObject({ Memory: 64 * 1024 * 1024, PidsLimit: 32, NanoCpus: 500_000_000, Tmpfs: { '/tmp': 'rw,noexec,nosuid,nodev,size=1m' } });
  });

  it('given the same input twice, when hashed, then the spec hash is stable and labelled; a change of image id or workspace changes it', () => {
    const a = cellContainerSpec(input());
    expect(cellContainerSpec(input()).specSha256).toBe(a.specSha256);
    expect(a.spec.Labels[CELL_LABELS.spec]).toBe(a.specSha256);
    expect(a.spec.Labels).toMatchObject({ 'writ.cell': '1', 'writ.task_id': 'task-1', 'writ.cell.image_id': 'sha256:aaaa' });
    expect(cellContainerSpec(input({ imageId: 'sha256:bbbb' })).specSha256).not.toBe(a.specSha256);
    expect(cellContainerSpec(input({ workspaceDir: '/elsewhere' })).specSha256).not.toBe(a.specSha256);
  });
});

describe('cell runtime options', () => {
  it('given no options, when resolved, then the documented defaults apply', () => {
    expect(resolveCellConfig()).toMatchObject({ ...CELL_DEFAULTS, labels: {} });
  });

  it.each([
    { note: 'pids limit below the cell’s own processes', options: { pidsLimit: 2 } },
    { note: 'fractional memory', options: { memoryBytes: 1.5 } },
    { note: 'relative cells root', options: { cellsRoot: 'cells' } },
    { note: 'reserved label', options: { labels: { 'writ.task_id': 'x' } } },
    { note: 'name prefix that is not a container name', options: { namePrefix: '/x' } },
  ])('given $note, when resolved, then CELL_ARGUMENT_INVALID', ({ options }) => {
    expect(() => resolveCellConfig(options)).toThrow(expect.objectContaining({ code: 'CELL_ARGUMENT_INVALID' }));
  });
});
