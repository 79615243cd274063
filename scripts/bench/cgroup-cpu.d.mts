// Types of cgroup-cpu.mjs (plain ESM JavaScript, so the benchmark runs it without a compiler).

export interface ProcCgroupEntry {
  readonly hierarchy: number;
  readonly controllers: readonly string[];
  readonly path: string;
}

export declare function parseProcCgroup(text: string): ProcCgroupEntry[];
export declare function cgroupMounts(mountinfo: string): { v2: string | null; cpuacct: string | null };
export declare function usageUsecOf(cpuStat: string): number | null;
export interface CpuFile {
  readonly path: string;
  readonly source: string;
}

export declare function containerCpuFile(pid: number, containerId: string): CpuFile | null;
export declare function readCpuUsec(file: CpuFile): number | null;
