// CPU time of processes, read from /proc (Linux): what each group of processes consumed between
// two snapshots. Used by e2e.bench.mjs to print CPU ms per action per process.
//
// /proc/<pid>/stat counts in clock ticks: utime and stime are the process's own time (all its
// threads), cutime and cstime the time of the children it has reaped (wait()ed for). A group's
// consumption in a window is therefore the sum over its processes of own + reaped time at the
// end minus the same at the start, with two corrections for processes that exit in the window:
// one reaped by a process of the snapshot has its whole life in that parent's reaped time, so
// its time before the window is taken off; one reaped by anybody else is lost after the start,
// so it is reported as such (the figure is then a lower bound).

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Clock ticks per second, the unit of /proc's CPU times (`getconf CLK_TCK`); 100 when it cannot be read. */
export function clockTicksPerSecond() {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return Number.isInteger(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
}

/**
 * The fields of one /proc/<pid>/stat line we use, times in clock ticks. comm is in parentheses
 * and may itself hold spaces and parentheses (a process may name itself anything), so the
 * fields after it are split from the LAST ')'.
 */
export function parseProcStat(text) {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open <= 0 || close < open) throw new Error(`not a /proc/<pid>/stat line: ${JSON.stringify(text.slice(0, 80))}`);
  // fields[0] is field 3 of proc(5) (state); field n is fields[n - 3].
  const fields = text.slice(close + 1).trim().split(/\s+/);
  const field = (n) => {
    const value = Number(fields[n - 3]);
    if (!Number.isSafeInteger(value)) throw new Error(`/proc/<pid>/stat field ${n} is not an integer: ${JSON.stringify(fields[n - 3])}`);
    return value;
  };
  const pid = Number(text.slice(0, open).trim());
  if (!Number.isSafeInteger(pid)) throw new Error(`/proc/<pid>/stat has no pid: ${JSON.stringify(text.slice(0, 80))}`);
  return {
    pid,
    comm: text.slice(open + 1, close),
    state: fields[0],
    ppid: field(4),
    utime: field(14),
    stime: field(15),
    cutime: field(16),
    cstime: field(17),
    starttime: field(22),
  };
}

/** The stat of one process, or null once it is gone (it may exit between listing /proc and reading it). */
export function readProcStat(pid, proc = '/proc') {
  let text;
  try {
    text = readFileSync(`${proc}/${pid}/stat`, 'utf8');
  } catch (error) {
    if (error.code === 'ENOENT' || error.code === 'ESRCH') return null;
    throw error;
  }
  return parseProcStat(text);
}

/** Own plus reaped CPU time of a process, in ticks. */
const ticksOf = (stat) => stat.utime + stat.stime + stat.cutime + stat.cstime;

/** A process's identity across snapshots: a pid alone may be reused by a later process. */
const keyOf = (stat) => `${stat.pid}@${stat.starttime}`;

/** Every process in /proc, by pid (those that exit while it is read are simply absent). */
export function readProcesses(proc = '/proc') {
  const byPid = new Map();
  for (const name of readdirSync(proc)) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readProcStat(Number(name), proc);
    if (stat !== null) byPid.set(stat.pid, stat);
  }
  return byPid;
}

/**
 * The processes `groupOf(stat, byPid)` puts in a group (a name; null leaves the process out),
 * with their CPU times: one side of a `cpuSpent` diff. `byPid` is every process of the
 * snapshot, for a group defined by ancestry. A process that may exit in the window while
 * still holding time from before it should be in a group even if that group is never printed:
 * its parent's reaped time then counts only the window's part of it.
 */
export function snapshotProcesses(groupOf, byPid = readProcesses()) {
  const processes = new Map();
  for (const stat of byPid.values()) {
    const group = groupOf(stat, byPid);
    if (group !== null) processes.set(keyOf(stat), { ...stat, group });
  }
  return { processes };
}

/**
 * The CPU ticks each group consumed from `before` to `after`, with what is known about its
 * processes: `live` at the end, `started` in the window (counted from zero), `reaped` (exited,
 * their whole time in a parent of the snapshot's reaped time; exact), and `lost` (exited, reaped
 * by a process outside the snapshot: their time after `before` is missing, `ticks` is a lower
 * bound). A group present in one snapshot only is still reported.
 */
export function cpuSpent(before, after) {
  const groups = new Map();
  const groupNamed = (name) => {
    let group = groups.get(name);
    if (group === undefined) {
      group = { ticks: 0, live: 0, started: 0, reaped: 0, lost: 0, lostPids: [] };
      groups.set(name, group);
    }
    return group;
  };
  for (const [key, now] of after.processes) {
    const then = before.processes.get(key);
    const group = groupNamed(now.group);
    group.ticks += ticksOf(now) - (then === undefined ? 0 : ticksOf(then));
    group.live += 1;
    if (then === undefined) group.started += 1;
  }
  const beforeByPid = new Map([...before.processes.values()].map((stat) => [stat.pid, stat]));
  for (const [key, then] of before.processes) {
    if (after.processes.has(key)) continue;
    const parent = beforeByPid.get(then.ppid);
    const parentNow = parent === undefined ? undefined : after.processes.get(keyOf(parent));
    if (parentNow !== undefined) {
      // Its whole life is now in the parent's reaped time, counted above: only the window's part belongs there.
      groupNamed(parentNow.group).ticks -= ticksOf(then);
      groupNamed(then.group).reaped += 1;
    } else {
      const group = groupNamed(then.group);
      group.lost += 1;
      group.lostPids.push(then.pid);
    }
  }
  return groups;
}

// ---- which process listens on a port ---------------------------------------------------------------

/**
 * The socket inodes listening (state 0A) on local `port` in one /proc/net/tcp or tcp6 table.
 * Columns: sl, local_address (hex address:hex port), rem_address, st, queues, timers,
 * retransmits, uid, timeout, inode.
 */
export function listeningInodes(table, port) {
  const inodes = [];
  for (const line of table.split('\n').slice(1)) {
    const columns = line.trim().split(/\s+/);
    if (columns.length < 10) continue;
    const localPort = Number.parseInt(columns[1].slice(columns[1].lastIndexOf(':') + 1), 16);
    if (columns[3] === '0A' && localPort === port && columns[9] !== '0') inodes.push(columns[9]);
  }
  return inodes;
}

/**
 * The pids holding a listening TCP socket on `port` (IPv4 or IPv6) in this network namespace:
 * the listening sockets' inodes from /proc/net/tcp{,6}, then every process's fd links
 * (`socket:[<inode>]`). Reading other users' fds needs root; an empty list when nothing is found.
 */
export function pidsListeningOn(port, proc = '/proc') {
  const wanted = new Set();
  for (const table of ['tcp', 'tcp6']) {
    let text;
    try {
      text = readFileSync(`${proc}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const inode of listeningInodes(text, port)) wanted.add(`socket:[${inode}]`);
  }
  if (wanted.size === 0) return [];
  const pids = [];
  for (const name of readdirSync(proc)) {
    if (!/^\d+$/.test(name)) continue;
    let fds;
    try {
      fds = readdirSync(`${proc}/${name}/fd`);
    } catch {
      continue; // gone, or not ours to read
    }
    for (const fd of fds) {
      let target;
      try {
        target = readlinkSync(`${proc}/${name}/fd/${fd}`);
      } catch {
        continue;
      }
      if (wanted.has(target)) {
        pids.push(Number(name));
        break;
      }
    }
  }
  return pids;
}
