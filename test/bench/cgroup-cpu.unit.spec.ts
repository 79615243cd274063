import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
// eslint-disable-next-line @nx/enforce-module-boundaries -- scripts/ is in no Nx project (nothing to place it by); the bench's own helpers are tested from here
import { cgroupMounts, parseProcCgroup, readCpuUsec, usageUsecOf } from '../../scripts/bench/cgroup-cpu.mjs';

// The bench reads a cell's CPU from the cgroup its init process is in: these are the texts the
// kernel gives on a hybrid host (cgroup v1 controllers, plus cgroup2 under /sys/fs/cgroup/unified)
// and on a cgroup v2 host.

const id = 'd6973ecdbeb93ea956dec80de2833917beb2aaa56eaf3b0b50bbe4c0b18553dd';

describe('parseProcCgroup', () => {
  it('given a container process on a hybrid host, then each hierarchy with its controllers and path, v2 as hierarchy 0 with none', () => {
    const text = [`9:name=systemd:/docker/${id}`, `2:cpuacct:/docker/${id}`, `1:cpu:/docker/${id}`, `0::/docker/${id}`, ''].join('\n');

    const entries = parseProcCgroup(text);

    expect(entries).toEqual([
      { hierarchy: 9, controllers: ['name=systemd'], path: `/docker/${id}` },
      { hierarchy: 2, controllers: ['cpuacct'], path: `/docker/${id}` },
      { hierarchy: 1, controllers: ['cpu'], path: `/docker/${id}` },
      { hierarchy: 0, controllers: [], path: `/docker/${id}` },
    ]);
  });

  it('given a combined cpu,cpuacct hierarchy, then both controllers are listed', () => {
    expect(parseProcCgroup(`4:cpu,cpuacct:/system.slice/docker-${id}.scope\n`)).toEqual([{ hierarchy: 4, controllers: ['cpu', 'cpuacct'], path: `/system.slice/docker-${id}.scope` }]);
  });
});

describe('cgroupMounts', () => {
  it('given a hybrid host, then the cgroup2 mount and the v1 mount carrying cpuacct', () => {
    const mountinfo = [
      '30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
      '31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu',
      '32 30 0:29 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct',
      '39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd',
      '40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
    ].join('\n');

    expect(cgroupMounts(mountinfo)).toEqual({ v2: '/sys/fs/cgroup/unified', cpuacct: '/sys/fs/cgroup/cpuacct' });
  });

  it('given a cgroup v2 host with optional fields in its mount line, then its mount and no v1', () => {
    const mountinfo = '35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n';

    expect(cgroupMounts(mountinfo)).toEqual({ v2: '/sys/fs/cgroup', cpuacct: null });
  });

  it('given only a bind mount of a subtree, then it is not used (its paths would not match /proc/<pid>/cgroup)', () => {
    expect(cgroupMounts('50 40 0:37 /docker /mnt/cg rw - cgroup2 cgroup2 rw\n')).toEqual({ v2: null, cpuacct: null });
  });
});

describe('usageUsecOf', () => {
  it('given a cpu.stat, then usage_usec; given one without it, then null', () => {
    expect(usageUsecOf('usage_usec 243478\nuser_usec 96675\nsystem_usec 146803\n')).toBe(243478);
    expect(usageUsecOf('user_usec 1\n')).toBeNull();
  });
});

describe('readCpuUsec', () => {
  it('given a v2 cpu.stat, a v1 cpuacct.usage (nanoseconds) and a cgroup that is gone, then microseconds, microseconds and null', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cgroup-cpu-'));
    try {
      writeFileSync(path.join(dir, 'cpu.stat'), 'usage_usec 243478\nuser_usec 96675\nsystem_usec 146803\n');
      writeFileSync(path.join(dir, 'cpuacct.usage'), '243478896\n');

      expect(readCpuUsec({ path: path.join(dir, 'cpu.stat'), source: 'v2' })).toBe(243478);
      expect(readCpuUsec({ path: path.join(dir, 'cpuacct.usage'), source: 'v1' })).toBeCloseTo(243478.896, 3);
      expect(readCpuUsec({ path: path.join(dir, 'gone', 'cpu.stat'), source: 'v2' })).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
