import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// eslint-disable-next-line @nx/enforce-module-boundaries -- scripts/ is in no Nx project (nothing to place it by); the bench's own helpers are tested from here
import { cpuSpent, listeningInodes, parseProcStat, pidsListeningOn, readProcesses, readProcStat, snapshotProcesses, type ProcStat } from '../../scripts/bench/proc-cpu.mjs';

// e2e.bench.mjs prints CPU ms per action from these: a wrong field or a wrong diff would print
// plausible, wrong figures, so the parser and the diff are checked on known lines.

interface Times {
  pid: number;
  comm?: string;
  ppid?: number;
  utime?: number;
  stime?: number;
  cutime?: number;
  cstime?: number;
  starttime?: number;
}

/** A /proc/<pid>/stat line with the given fields (proc(5) numbering) and zeros elsewhere, 52 fields as Linux writes them. */
function statLine({ pid, comm = 'node', ppid = 1, utime = 0, stime = 0, cutime = 0, cstime = 0, starttime = 1000 }: Times): string {
  const fields = Array.from({ length: 50 }, () => '0'); // fields 3..52
  const set = (n: number, value: string | number) => (fields[n - 3] = String(value));
  set(3, 'S');
  set(4, ppid);
  set(14, utime);
  set(15, stime);
  set(16, cutime);
  set(17, cstime);
  set(22, starttime);
  return `${pid} (${comm}) ${fields.join(' ')}\n`;
}

const stat = (times: Times): ProcStat => parseProcStat(statLine(times));

/** A snapshot of the given processes, each in the group its comm names. */
const snapshot = (...processes: Times[]) => {
  const byPid = new Map(processes.map((times) => [times.pid, stat(times)]));
  return snapshotProcesses((process) => process.comm, byPid);
};

describe('parseProcStat', () => {
  it('given a line the kernel wrote (cat reading itself), then its pid, parent, times and start are read from their fields', () => {
    const line = '20437 (cat) R 20414 20414 21919 0 -1 4194304 98 0 0 0 7 3 2 1 20 0 1 0 714869 3133440 416 18446744073709551615 94902776205312 94902776225193 140726141605504 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 94902776241200 94902776242816 94902784679936 140726141606417 140726141606437 140726141606437 140726141607915 0\n';

    const parsed = parseProcStat(line);

    expect(parsed).toEqual({ pid: 20437, comm: 'cat', state: 'R', ppid: 20414, utime: 7, stime: 3, cutime: 2, cstime: 1, starttime: 714869 });
  });

  it('given a comm holding spaces and parentheses, then the fields after it are still found (split at the last parenthesis)', () => {
    const line = statLine({ pid: 42, comm: 'a) (b c) 9 9 ', ppid: 7, utime: 11, stime: 12, cutime: 13, cstime: 14, starttime: 15 });

    const parsed = parseProcStat(line);

    expect(parsed).toEqual({ pid: 42, comm: 'a) (b c) 9 9 ', state: 'S', ppid: 7, utime: 11, stime: 12, cutime: 13, cstime: 14, starttime: 15 });
  });

  it('given text that is not a stat line, or one cut short, then it refuses it instead of reading zeros', () => {
    expect(() => parseProcStat('no parentheses here')).toThrow();
    expect(() => parseProcStat('12 (node) S 1 2 3')).toThrow();
  });
});

describe('cpuSpent', () => {
  it('given a process in both snapshots, then its group spent its own and its reaped time in between', () => {
    const before = snapshot({ pid: 10, comm: 'svc', utime: 100, stime: 50, cutime: 5, cstime: 5 });
    const after = snapshot({ pid: 10, comm: 'svc', utime: 130, stime: 60, cutime: 7, cstime: 6 });

    const spent = cpuSpent(before, after).get('svc');

    expect(spent).toMatchObject({ ticks: 30 + 10 + 2 + 1, live: 1, started: 0, reaped: 0, lost: 0 });
  });

  it('given a process that started in the window, then all of its time counts, and it is said to have started', () => {
    const before = snapshot({ pid: 10, comm: 'postgres', utime: 100 });
    const after = snapshot({ pid: 10, comm: 'postgres', utime: 100 }, { pid: 11, comm: 'postgres', ppid: 10, utime: 4, stime: 2 });

    const spent = cpuSpent(before, after).get('postgres');

    expect(spent).toMatchObject({ ticks: 6, live: 2, started: 1, lost: 0 });
  });

  it('given a child that exited in the window and was reaped by its parent in the snapshot, then only its time inside the window counts', () => {
    // The backend had 40 ticks at the start and 55 at its exit; the postmaster reaped it (cutime += 55).
    const before = snapshot({ pid: 10, comm: 'postgres', utime: 100 }, { pid: 11, comm: 'postgres', ppid: 10, utime: 30, stime: 10 });
    const after = snapshot({ pid: 10, comm: 'postgres', utime: 101, cutime: 40, cstime: 15 });

    const spent = cpuSpent(before, after).get('postgres');

    expect(spent).toMatchObject({ ticks: 1 + 15, live: 1, reaped: 1, lost: 0 });
  });

  it('given a process that exited in the window and was reaped outside the snapshot, then it is reported lost and its earlier time is not taken off', () => {
    const before = snapshot({ pid: 20, comm: 'shim', ppid: 1, utime: 50 }, { pid: 21, comm: 'shim', ppid: 1, utime: 70 });
    const after = snapshot({ pid: 20, comm: 'shim', ppid: 1, utime: 58 });

    const spent = cpuSpent(before, after).get('shim');

    expect(spent).toMatchObject({ ticks: 8, live: 1, reaped: 0, lost: 1, lostPids: [21] });
  });

  it('given a pid reused by a new process in the window, then the old one has exited and the new one starts from zero', () => {
    const before = snapshot({ pid: 30, comm: 'svc', ppid: 1, utime: 500, starttime: 100 });
    const after = snapshot({ pid: 30, comm: 'svc', ppid: 1, utime: 3, starttime: 900 });

    const spent = cpuSpent(before, after).get('svc');

    expect(spent).toMatchObject({ ticks: 3, live: 1, started: 1, lost: 1 });
  });

  it('given a group whose every process exited, then it is still reported, with no process left', () => {
    const before = snapshot({ pid: 40, comm: 'gone', ppid: 1, utime: 9 });
    const after = snapshot();

    const spent = cpuSpent(before, after).get('gone');

    expect(spent).toMatchObject({ ticks: 0, live: 0, lost: 1 });
  });
});

describe('/proc as a directory', () => {
  let root: string | undefined;
  const proc = (files: Record<string, string>, links: Record<string, string> = {}) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'proc-cpu-'));
    root = dir;
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
    for (const [link, target] of Object.entries(links)) {
      mkdirSync(path.dirname(path.join(dir, link)), { recursive: true });
      symlinkSync(target, path.join(dir, link));
    }
    return dir;
  };
  afterEach(() => {
    if (root !== undefined) rmSync(root, { recursive: true, force: true });
    root = undefined;
  });

  it('given processes and other entries, then every process is read and nothing else; a pid that is gone reads as null', () => {
    const dir = proc({ '7/stat': statLine({ pid: 7, utime: 1 }), '8/stat': statLine({ pid: 8, utime: 2 }), 'uptime': '1.00 2.00\n', 'net/tcp': '' });

    const processes = readProcesses(dir);

    expect([...processes.keys()].sort()).toEqual([7, 8]);
    expect(readProcStat(9, dir)).toBeNull();
  });

  // Two servers, as on the machine the bench runs on: Writ's on 4423 (IPv4 and IPv6 sockets), another on 4222.
  const tcp = [
    '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    '   0: 0100007F:1147 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 22575 1 0000000000000000 100 0 0 10 0',
    '   1: 0100007F:107E 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 11111 1 0000000000000000 100 0 0 10 0',
    '   2: 0100007F:1147 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 33333 1 0000000000000000 20 4 30 10 -1',
    '',
  ].join('\n');
  const tcp6 = [
    '  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    '   0: 00000000000000000000000001000000:1147 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 22576 1 0000000000000000 100 0 0 10 0',
    '',
  ].join('\n');

  it('given a table with listeners on two ports and an established connection, then only the listening sockets of the port asked for', () => {
    expect(listeningInodes(tcp, 4423)).toEqual(['22575']);
    expect(listeningInodes(tcp6, 4423)).toEqual(['22576']);
    expect(listeningInodes(tcp, 4222)).toEqual(['11111']);
    expect(listeningInodes(tcp, 5555)).toEqual([]);
  });

  it('given two servers on two ports, then the pid found is the one holding the listening socket of the port asked for', () => {
    const dir = proc(
      { 'net/tcp': tcp, 'net/tcp6': tcp6, '100/stat': statLine({ pid: 100 }), '200/stat': statLine({ pid: 200 }), '300/stat': statLine({ pid: 300 }) },
      // 100: the other server; 200: Writ's, with its IPv6 listener and a client connection; 300: the client.
      { '100/fd/3': 'socket:[11111]', '200/fd/0': '/dev/null', '200/fd/7': 'socket:[22576]', '200/fd/9': 'socket:[99999]', '300/fd/4': 'socket:[33333]' },
    );

    expect(pidsListeningOn(4423, dir)).toEqual([200]);
    expect(pidsListeningOn(4222, dir)).toEqual([100]);
    expect(pidsListeningOn(5555, dir)).toEqual([]);
  });
});
