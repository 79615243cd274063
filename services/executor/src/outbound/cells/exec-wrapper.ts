/**
 * What `docker exec` actually runs for an action: a busybox `sh` supervisor that
 * enforces the timeout inside the cell and leaves nothing of the action behind.
 *
 *   $1      timeout in seconds (fractional: busybox sleep takes "1.5")
 *   $2...   the action's argv, passed as arguments (never spliced into the script)
 *
 * 1. The timer `sleep $1` starts first, in its own session, with /dev/null as stdio
 *    (so it can never hold the exec's output open). Starting it before the action
 *    means a fork bomb cannot starve it of a process slot.
 * 2. The action starts in a new session (setsid), so its process group id is its pid
 *    `c`, and every descendant that does not call setsid itself shares that group.
 *    It runs under a small `sh` whose EXIT trap kills the timer when the action ends.
 * 3. The supervisor waits on the timer. The timer ending on its own (status 0) means
 *    the time is up: the whole action group gets SIGKILL. Otherwise the action ended.
 * 4. It reaps the action (its status, 137 when killed), then SIGKILLs whatever is
 *    left in the action's group (background jobs): a pgid stays reserved while any
 *    member lives, so this never hits an unrelated process.
 *
 * The action runs with umask 002: what a seat makes in the project or `shared/` (setgid
 * directories of the cell group) stays writable by every working seat and readable by all;
 * its own home is 0700, so nothing in it is reachable by another seat whatever the file modes.
 *
 * Stdin reaches the action through fd 3 (busybox ash gives background jobs /dev/null
 * even with an explicit `<&0`). The supervisor's own job-status chatter is discarded.
 * A process that escapes the group (its own setsid) and holds stdout keeps the exec
 * stream open: the host-side deadline catches that and restarts the cell.
 */
export const EXEC_SUPERVISOR_SCRIPT = [
  't=$1; shift',
  'exec 3<&0 </dev/null',
  'setsid sleep "$t" </dev/null >/dev/null 2>&1 &',
  'w=$!',
  `trap 'kill -KILL "$w" 2>/dev/null' EXIT`,
  `setsid sh -c 'w=$1; shift; trap "kill -KILL $w 2>/dev/null" EXIT; umask 002; "$@"' writ-action "$w" "$@" <&3 3<&- &`,
  'c=$!',
  'wait "$w" 2>/dev/null; r=$?',
  'trap - EXIT',
  'if [ "$r" = 0 ]; then kill -KILL -"$c" 2>/dev/null; fi',
  'wait "$c" 2>/dev/null; s=$?',
  'kill -KILL -"$c" 2>/dev/null',
  'exit "$s"',
].join('\n');

/** Exit status of a process killed by SIGKILL (128 + 9), as the shell reports it. */
export const KILLED_EXIT_CODE = 137;

/** `1500` → `"1.500"`: seconds for busybox sleep, exact for whole milliseconds. */
export function timeoutSeconds(timeoutMs: number): string {
  return (timeoutMs / 1000).toFixed(3);
}

/** The exec's Cmd: the supervisor script, then the timeout, then the action's argv untouched. */
export function supervisedArgv(argv: readonly string[], timeoutMs: number): string[] {
  return ['/bin/sh', '-c', EXEC_SUPERVISOR_SCRIPT, 'writ-exec', timeoutSeconds(timeoutMs), ...argv];
}

/** Container path of the per-cell use records (a host directory per cell, see cell-hardening.ts). */
export const CELL_USES_DIR = '/run/writ';

/** The wrapper's exit status when the use was fenced by a reconciler before it could start: nothing ran. */
export const FENCED_EXIT_CODE = 125;

/**
 * The supervisor of an action that keeps a durable record (crash safety, Hermit 19):
 * the same timer / session / group-kill logic as EXEC_SUPERVISOR_SCRIPT, plus a
 * per-use record directory `$2` (a host directory, bind-mounted, outside /workspace):
 *
 *   $1 timeout in seconds, $2 record directory, $3 bytes kept per stream, $4... argv
 *
 *   run/        made with mkdir before anything runs: the atomic "started" mark. A
 *               reconciler that finds the executor dead makes it first (as root on
 *               the host): the wrapper then exits 125 and writes `fenced` (informative only: the
 *               host trusts its own marker `uses/<use_id>.fenced`); nothing ran.
 *   pgid        the action's process group (for a reconciler's kill)
 *   stdout, stderr           the first $3 bytes of each stream
 *   stdout.rest, stderr.rest how many bytes past them were read and dropped
 *   timed_out   present when the in-cell timer killed the action
 *   exit        the action's exit status, written last (tmp + rename: all or nothing)
 *
 * The record is made under umask 077 (the seat's own); the action itself runs under umask 002
 * like an unrecorded one (see EXEC_SUPERVISOR_SCRIPT).
 *
 * The action's output goes through FIFOs to `head -c` (busybox reads at most the
 * remaining count) and `wc -c`, so nothing past the cap touches the disk and the action
 * is never blocked by a full file. Nothing is written to the exec's own stream: the
 * host reads the record once the exec is over, and a crashed host finds it there.
 */
export const RECORDED_SUPERVISOR_SCRIPT = [
  't=$1; d=$2; m=$3; shift 3',
  'exec 3<&0 </dev/null',
  'umask 077',
  'if ! mkdir "$d/run" 2>/dev/null; then : > "$d/fenced"; exit 125; fi',
  'mkfifo "$d/o" "$d/e" || exit 126',
  '(head -c "$m" > "$d/stdout"; wc -c > "$d/stdout.rest") < "$d/o" &',
  'ro=$!',
  '(head -c "$m" > "$d/stderr"; wc -c > "$d/stderr.rest") < "$d/e" &',
  're=$!',
  'setsid sleep "$t" </dev/null >/dev/null 2>&1 &',
  'w=$!',
  `trap 'kill -KILL "$w" 2>/dev/null' EXIT`,
  `setsid sh -c 'w=$1; shift; trap "kill -KILL $w 2>/dev/null" EXIT; umask 002; "$@"' writ-action "$w" "$@" <&3 3<&- >"$d/o" 2>"$d/e" &`,
  'c=$!',
  'echo "$c" > "$d/pgid"',
  'wait "$w" 2>/dev/null; r=$?',
  'trap - EXIT',
  'if [ "$r" = 0 ]; then kill -KILL -"$c" 2>/dev/null; : > "$d/timed_out"; fi',
  'wait "$c" 2>/dev/null; s=$?',
  'kill -KILL -"$c" 2>/dev/null',
  'wait "$ro" "$re" 2>/dev/null',
  'rm -f "$d/o" "$d/e"',
  'echo "$s" > "$d/exit.tmp" && mv "$d/exit.tmp" "$d/exit"',
  'exit "$s"',
].join('\n');

/** The exec's Cmd of a recorded action: the record directory is `<CELL_USES_DIR>/<useId>`. */
export function recordedArgv(argv: readonly string[], timeoutMs: number, useId: string, maxOutputBytes: number): string[] {
  return ['/bin/sh', '-c', RECORDED_SUPERVISOR_SCRIPT, 'writ-exec', timeoutSeconds(timeoutMs), `${CELL_USES_DIR}/${useId}`, String(maxOutputBytes), ...argv];
}
