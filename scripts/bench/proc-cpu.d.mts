// Types of proc-cpu.mjs (plain ESM JavaScript, so the benchmark runs it without a compiler).

/** The fields of /proc/<pid>/stat the benchmarks use; times in clock ticks. */
export interface ProcStat {
  readonly pid: number;
  readonly comm: string;
  readonly state: string;
  readonly ppid: number;
  readonly utime: number;
  readonly stime: number;
  readonly cutime: number;
  readonly cstime: number;
  readonly starttime: number;
}

export interface GroupedProcStat extends ProcStat {
  readonly group: string;
}

/** One side of a `cpuSpent` diff: the grouped processes, by `<pid>@<starttime>`. */
export interface ProcessSnapshot {
  readonly processes: ReadonlyMap<string, GroupedProcStat>;
}

export interface GroupCpu {
  /** Clock ticks spent in the window (a lower bound when `lost` > 0). */
  ticks: number;
  /** Processes of the group at the end. */
  live: number;
  /** Processes that appeared in the window (counted from zero). */
  started: number;
  /** Processes that exited in the window, reaped by a process of the snapshot (exact). */
  reaped: number;
  /** Processes that exited in the window, reaped outside the snapshot (their time after the start is missing). */
  lost: number;
  lostPids: number[];
}

export declare function clockTicksPerSecond(): number;
export declare function parseProcStat(text: string): ProcStat;
export declare function readProcStat(pid: number, proc?: string): ProcStat | null;
export declare function readProcesses(proc?: string): Map<number, ProcStat>;
export declare function snapshotProcesses(groupOf: (stat: ProcStat, byPid: ReadonlyMap<number, ProcStat>) => string | null, byPid?: ReadonlyMap<number, ProcStat>): ProcessSnapshot;
export declare function cpuSpent(before: ProcessSnapshot, after: ProcessSnapshot): Map<string, GroupCpu>;
export declare function listeningInodes(table: string, port: number): string[];
export declare function pidsListeningOn(port: number, proc?: string): number[];
