// CPU time of a container, from its cgroup (Linux): the work of every process it ran, reaped or
// live, which /proc cannot give once the processes are gone. Used by e2e.bench.mjs for the cells.
//
// The cgroup is the one its init process is in (/proc/<pid>/cgroup), so it does not depend on
// Docker's cgroup driver or layout: cgroup v2 (`0::<path>`, cpu.stat usage_usec) when the path
// names the container, else cgroup v1's cpuacct controller (cpuacct.usage, nanoseconds). Both
// count the whole subtree. The cgroup goes as the container stops (before Docker reports `die`):
// whatever it did after the last reading is not known.

import { readFileSync } from 'node:fs';

/** The lines of /proc/<pid>/cgroup: `hierarchy-id:controller,list:path` (v2: `0::path`). */
export function parseProcCgroup(text) {
  const entries = [];
  for (const line of text.split('\n')) {
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const controllers = line.slice(first + 1, second);
    entries.push({ hierarchy: Number(line.slice(0, first)), controllers: controllers === '' ? [] : controllers.split(','), path: line.slice(second + 1) });
  }
  return entries;
}

/**
 * Where the cgroup hierarchies are mounted, from /proc/self/mountinfo: the cgroup2 mount, and the
 * cgroup v1 mount carrying the cpuacct controller. A mountinfo line is `id parent major:minor
 * root mount-point options [optional fields] - fstype source super-options`.
 */
export function cgroupMounts(mountinfo) {
  let v2 = null;
  let cpuacct = null;
  for (const line of mountinfo.split('\n')) {
    const [mine, theirs] = line.split(' - ');
    if (theirs === undefined) continue;
    const root = mine.split(' ')[3];
    const mountPoint = mine.split(' ')[4];
    const [fstype, , superOptions = ''] = theirs.split(' ');
    // A bind mount of a subtree (root other than /) would shift every path: not one we can use.
    if (root !== '/' || mountPoint === undefined) continue;
    if (fstype === 'cgroup2' && v2 === null) v2 = mountPoint;
    if (fstype === 'cgroup' && cpuacct === null && superOptions.split(',').includes('cpuacct')) cpuacct = mountPoint;
  }
  return { v2, cpuacct };
}

/** `usage_usec` of a cgroup v2 cpu.stat; null when absent. */
export function usageUsecOf(cpuStat) {
  const match = /^usage_usec (\d+)$/m.exec(cpuStat);
  return match ? Number(match[1]) : null;
}

let mounts;

/**
 * The file holding the CPU time of container `containerId`, whose init process is `pid`: found
 * once while it runs, then read with `readCpuUsec` (it stays readable until the cgroup goes, with
 * the container). Null when its cgroup cannot be found or read (the container stopped, or a
 * layout this does not know). Only a cgroup whose path names the container counts, so a
 * process outside any container never yields the machine's root cgroup.
 */
export function containerCpuFile(pid, containerId) {
  mounts ??= cgroupMounts(readFileSync('/proc/self/mountinfo', 'utf8'));
  let entries;
  try {
    entries = parseProcCgroup(readFileSync(`/proc/${pid}/cgroup`, 'utf8'));
  } catch {
    return null;
  }
  const v2 = entries.find((entry) => entry.hierarchy === 0 && entry.path.includes(containerId));
  if (v2 !== undefined && mounts.v2 !== null) {
    const file = { path: `${mounts.v2}${v2.path}/cpu.stat`, source: 'cgroup v2 cpu.stat' };
    // A hybrid host may not account cpu in v2: then v1.
    if (readCpuUsec(file) !== null) return file;
  }
  const v1 = entries.find((entry) => entry.controllers.includes('cpuacct') && entry.path.includes(containerId));
  if (v1 !== undefined && mounts.cpuacct !== null) {
    const file = { path: `${mounts.cpuacct}${v1.path}/cpuacct.usage`, source: 'cgroup v1 cpuacct.usage' };
    if (readCpuUsec(file) !== null) return file;
  }
  return null;
}

/** Microseconds of CPU in a file `containerCpuFile` found; null once the cgroup is gone. */
export function readCpuUsec(file) {
  let text;
  try {
    text = readFileSync(file.path, 'utf8');
  } catch {
    return null;
  }
  if (file.path.endsWith('/cpu.stat')) return usageUsecOf(text);
  const ns = Number(text.trim());
  return Number.isSafeInteger(ns) ? ns / 1000 : null;
}
