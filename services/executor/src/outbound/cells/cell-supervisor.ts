import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { CellError, fromDockerError } from './cell-errors.js';
import { DockerStreamDemuxer, type ByteSink } from './exec-output.js';
import { RECORDED_SUPERVISOR_SCRIPT, timeoutSeconds } from './exec-wrapper.js';

/**
 * The in-cell supervisor: one long-lived `docker exec` per cell and user, a busybox `sh`
 * loop reading one request per line from its stdin and running the recorded wrapper
 * (exec-wrapper.ts) for it. A recorded action then costs a line each way on a stream the
 * executor already holds, instead of an exec create, start and inspect round trip
 * through dockerd (about 40–90 ms here).
 *
 * Why isolation stays as it was: the loop runs inside the same container, as the same
 * user, with the same limits as a `docker exec` of the action would; it adds no mount,
 * capability or network. Its channel is the exec's hijacked stdin, which only the holder
 * of the Docker API (the executor) can write. A process of the same user in the cell could
 * kill the loop or write to its stdout through /proc, but it could already forge its own
 * use record (the result is read from the record, as for a plain exec), so the loop gives
 * it nothing new; a killed loop is started again on the next action.
 *
 *   $1   the recorded wrapper script
 *   each request line: base64 of `u=<use> t=<seconds> d=<record dir> m=<bytes> c=<cwd>; set -- <argv>`,
 *        every value single-quoted by the executor (see `supervisorRequest`)
 *   each answer line:  `done <use> <wrapper exit status>`, or `bad` for a line it could not read
 */
export const SUPERVISOR_LOOP_SCRIPT = [
  'w=$1',
  'exec 2>/dev/null',
  'echo ready',
  'while IFS= read -r q; do',
  '  u=',
  '  eval "$(printf %s "$q" | base64 -d)"',
  '  if [ -z "$u" ]; then echo bad; continue; fi',
  // cd exports OLDPWD; a plain exec of the action would not have it.
  '  (cd "$c" && unset OLDPWD && exec /bin/sh -c "$w" writ-exec "$t" "$d" "$m" "$@") </dev/null >/dev/null 2>&1',
  '  echo "done $u $?"',
  'done',
].join('\n');

/** A word the shell reads back exactly: single-quoted, each `'` closed, escaped and reopened. */
function shellQuoted(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

export interface SupervisedRun {
  readonly useId: string;
  readonly recordDir: string;
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly timeoutMs: number;
  readonly maxOutputBytes: number;
}

/** One request line for the loop (with its newline). */
export function supervisorRequest(run: SupervisedRun): string {
  for (const value of [run.useId, run.recordDir, run.cwd, ...run.argv]) {
    if (value.includes('\0')) throw new CellError('CELL_ARGUMENT_INVALID', 'an argument of a supervised action holds a NUL byte', { details: { use_id: run.useId } });
  }
  const statement =
    `u=${shellQuoted(run.useId)} t=${shellQuoted(timeoutSeconds(run.timeoutMs))} d=${shellQuoted(run.recordDir)} ` +
    `m=${shellQuoted(String(run.maxOutputBytes))} c=${shellQuoted(run.cwd)}; set -- ${run.argv.map(shellQuoted).join(' ')}`;
  return `${Buffer.from(statement, 'utf8').toString('base64')}\n`;
}

/** How a supervised run ended: the wrapper's exit status, the host deadline, or the loop gone mid-run. */
export type SupervisedOutcome = { readonly kind: 'exited'; readonly status: number } | { readonly kind: 'deadline' } | { readonly kind: 'lost' };

interface Pending {
  readonly useId: string;
  readonly settle: (outcome: SupervisedOutcome) => void;
}

/** Longest answer line kept while waiting for its newline: far more than `done <use> <status>`. */
const MAX_LINE = 4096;

/** One running loop in one container, as one user. */
export class CellSupervisor {
  readonly containerId: string;
  readonly execId: string;
  readonly #stream: Duplex;
  readonly #pending = new Map<string, Pending>();
  #alive = true;

  private constructor(containerId: string, execId: string, stream: Duplex) {
    this.containerId = containerId;
    this.execId = execId;
    this.#stream = stream;
  }

  /**
   * Starts the loop in `container` as `user` and resolves once it said `ready`
   * (CELL_EXEC_FAILED when Docker refuses, or the loop ends or stays silent for `readyTimeoutMs`).
   */
  static async start(container: Docker.Container, containerId: string, user: string, readyTimeoutMs: number): Promise<CellSupervisor> {
    const what = `starting the supervisor in container ${containerId}`;
    let stream: Duplex;
    let execId: string;
    try {
      const exec = await container.exec({
        Cmd: ['/bin/sh', '-c', SUPERVISOR_LOOP_SCRIPT, 'writ-supervisor', RECORDED_SUPERVISOR_SCRIPT],
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        Privileged: false,
        User: user,
        WorkingDir: '/',
      });
      execId = exec.id;
      stream = (await exec.start({ hijack: true, stdin: true })) as Duplex;
    } catch (error) {
      // 404 / 409: the container is gone or not running, as for an action's own exec.
      throw fromDockerError(error, what, 'CELL_EXEC_FAILED', { 404: 'CELL_NOT_FOUND', 409: 'CELL_NOT_FOUND' });
    }
    const supervisor = new CellSupervisor(containerId, execId, stream);
    await supervisor.#listen(readyTimeoutMs).catch((error: unknown) => {
      supervisor.close();
      throw error;
    });
    return supervisor;
  }

  get alive(): boolean {
    return this.#alive;
  }

  /** Wires the stream and waits for the loop's first line. */
  #listen(readyTimeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      let ready = false;
      const timer = setTimeout(() => reject(new CellError('CELL_EXEC_FAILED', `the supervisor in container ${this.containerId} did not start within ${readyTimeoutMs} ms`)), readyTimeoutMs);
      // Only stdout carries answers; the loop sends its stderr to /dev/null, anything else there is dropped.
      const stdout = new LineSink((line) => {
        if (!ready) {
          if (line === 'ready') {
            ready = true;
            clearTimeout(timer);
            resolve();
          }
          return;
        }
        const match = /^done (\S+) (\d+)$/.exec(line);
        if (match === null) return;
        const pending = this.#pending.get(match[1] as string);
        if (pending === undefined) return;
        this.#pending.delete(pending.useId);
        pending.settle({ kind: 'exited', status: Number(match[2]) });
      });
      const demuxer = new DockerStreamDemuxer(stdout, { write: () => undefined });
      const gone = () => {
        clearTimeout(timer);
        if (!ready) reject(new CellError('CELL_EXEC_FAILED', `the supervisor in container ${this.containerId} ended before it was ready`));
        this.#end();
      };
      this.#stream.on('data', (chunk: Buffer) => {
        try {
          demuxer.push(chunk);
        } catch {
          this.#stream.destroy();
        }
      });
      this.#stream.on('end', gone);
      this.#stream.on('close', gone);
      this.#stream.on('error', gone);
    });
  }

  /**
   * Runs one recorded action and resolves with how it ended. At `deadline`
   * (performance.now() clock) the answer is no longer awaited: 'deadline'.
   */
  run(request: SupervisedRun, deadline: number): Promise<SupervisedOutcome> {
    if (!this.#alive) return Promise.resolve({ kind: 'lost' });
    if (this.#pending.has(request.useId)) throw new CellError('CELL_ARGUMENT_INVALID', `use ${request.useId} is already running in this supervisor`);
    const line = supervisorRequest(request);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#pending.delete(request.useId);
        resolve({ kind: 'deadline' });
      }, Math.max(0, deadline - performance.now()));
      this.#pending.set(request.useId, {
        useId: request.useId,
        settle: (outcome) => {
          clearTimeout(timer);
          resolve(outcome);
        },
      });
      this.#stream.write(line);
    });
  }

  /** Ends the loop (its stdin closes) and forgets every pending run as lost. */
  close(): void {
    this.#stream.destroy();
    this.#end();
  }

  #end(): void {
    if (!this.#alive) return;
    this.#alive = false;
    for (const pending of this.#pending.values()) pending.settle({ kind: 'lost' });
    this.#pending.clear();
  }
}

/** Splits the demuxed stdout into lines (the answers are ASCII). */
class LineSink implements ByteSink {
  readonly #onLine: (line: string) => void;
  #partial = '';

  constructor(onLine: (line: string) => void) {
    this.#onLine = onLine;
  }

  write(part: Buffer): void {
    this.#partial += part.toString('latin1');
    let newline = this.#partial.indexOf('\n');
    while (newline >= 0) {
      this.#onLine(this.#partial.slice(0, newline));
      this.#partial = this.#partial.slice(newline + 1);
      newline = this.#partial.indexOf('\n');
    }
    if (this.#partial.length > MAX_LINE) this.#partial = '';
  }
}
