import { DEFAULT_SECRET_PATHS, compileGlob, matchAnyGlob, type CompiledGlob } from '@writ/kernel';
import { canonicalJson } from '@writ/crypto';
import type { EventEnvelope, RollbackParams, RollbackStep } from '@writ/contracts';
import { ExecutorError } from './executor-errors.js';

/**
 * A granted rollback (Hermit 18.6) as the executor runs it, pure: whether the
 * task's log holds the receipt it names with exactly these steps, whether each
 * path still holds what the rolled-back action left, which files an action is
 * about to change (their pre-images are kept), and the one in-cell command
 * that applies every step or none.
 */

/** What one workspace walk says about a path (a subset of the cell layer's snapshot entry). */
export interface WalkedEntry {
  readonly kind: 'file' | 'symlink';
  readonly sha256: string;
  readonly size: number;
}

export interface WalkedWorkspace {
  readonly entries: ReadonlyMap<string, WalkedEntry>;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * Why the task's log does not back this rollback, or undefined when it does:
 * a `receipt.issued` of the task carries the receipt `receipt_id` with
 * `receipt_hash`, a `compensating_local_actions` method and these very steps
 * (compared in their RFC 8785 form). The receipt is read, not verified: its
 * signature is the receipt service's, and the log is hash-chained.
 */
export function receiptMismatch(params: RollbackParams, stream: readonly EventEnvelope[]): string | undefined {
  let found: Record<string, unknown> | undefined;
  for (const event of stream) {
    if (event.event_type !== 'receipt.issued') continue;
    const receipt = record(record(event.payload)['receipt']);
    if (receipt['receipt_id'] === params.receipt_id) {
      found = receipt;
      break;
    }
  }
  if (found === undefined) return `the task holds no receipt ${params.receipt_id}`;
  if (found['receipt_hash'] !== params.receipt_hash) return `receipt ${params.receipt_id} hashes to ${String(found['receipt_hash'])}, not ${params.receipt_hash}`;
  const rollback = record(found['rollback']);
  if (rollback['method'] !== 'compensating_local_actions') return `receipt ${params.receipt_id} names no rollback method (${String(rollback['method'] ?? 'none recorded')})`;
  let same = false;
  try {
    same = canonicalJson(rollback['steps']) === canonicalJson(params.steps);
  } catch {
    same = false;
  }
  return same ? undefined : `the steps differ from the rollback steps receipt ${params.receipt_id} names`;
}

/** A path that no longer holds what the rolled-back action left. */
export interface DriftedPath {
  readonly path: string;
  /** What the receipt says it must hold (null: absent). */
  readonly expected: string | null;
  /** What it holds now: a SHA-256, `symlink`, `directory`, or null when absent. */
  readonly found: string | null;
}

/**
 * The steps whose path changed since the action the receipt is about: a file
 * must still hash to `expected_sha256`, an absent path must still be absent
 * (no file, link or directory holding files). Any drift refuses the whole
 * rollback: applying it would lose the later change.
 */
export function rollbackDrift(steps: readonly RollbackStep[], walked: WalkedWorkspace): DriftedPath[] {
  const drifted: DriftedPath[] = [];
  for (const step of steps) {
    const entry = walked.entries.get(step.path);
    const prefix = `${step.path}/`;
    const isDirectory = entry === undefined && [...walked.entries.keys()].some((path) => path.startsWith(prefix));
    const found = entry === undefined ? (isDirectory ? 'directory' : null) : entry.kind === 'symlink' ? 'symlink' : entry.sha256;
    if (step.expected_sha256 === null ? found !== null : found !== step.expected_sha256) drifted.push({ path: step.path, expected: step.expected_sha256, found });
  }
  return drifted;
}

/** One line per drifted path, for the error message. */
export function describeDrift(drifted: readonly DriftedPath[]): string {
  const shown = drifted.slice(0, 10).map((d) => `${d.path} (expected ${d.expected ?? 'absent'}, found ${d.found ?? 'absent'})`);
  return `${shown.join('; ')}${drifted.length > 10 ? `; and ${drifted.length - 10} more` : ''}`;
}

/**
 * The in-cell command of a rollback, run by the cell's busybox sh as the cell
 * user (never a shell splice: every path and size is an argument).
 *
 *   $1 a tag unique to the use; then per step five arguments: op, ./path,
 *   size and SHA-256 of the pre-image, SHA-256 the path must hold now
 *   op c: write a pre-image where nothing is (the action had removed the file; "-" for what it holds)
 *   op w: write a pre-image over the regular file the action left
 *   op d: remove the regular file the action added (no pre-image: size and its SHA-256 are "-")
 *
 * stdin carries the pre-images of the c and w steps, back to back, in step
 * order. 1. check: every path is as expected, absent or a regular file with
 * that SHA-256 (exit 3 otherwise; the host checked the same before, this
 * closes the gap to the exec). 2. stage: each pre-image
 * goes to a temporary file beside its target (`dd` with fullblock reads
 * exactly its size), whose SHA-256 must be the receipt's (exit 5 otherwise).
 * 3. apply: each staged file is renamed over its target (atomic per file),
 * each added file removed. A failure before 3 removes what 2 staged: nothing
 * of the workspace changed. Modes are not restored (a staged file gets the
 * cell's default mode).
 */
export const ROLLBACK_SCRIPT = [
  'tag=$1; shift',
  'check() {',
  '  while [ $# -gt 0 ]; do',
  '    op=$1; p=$2; e=$5; shift 5',
  '    if [ "$op" = c ]; then',
  '      if [ -e "$p" ] || [ -h "$p" ]; then echo "writ-rollback: $p exists; it must be absent" >&2; return 3; fi',
  '      continue',
  '    fi',
  '    if [ ! -f "$p" ] || [ -h "$p" ]; then echo "writ-rollback: $p is not a regular file" >&2; return 3; fi',
  '    got=$(sha256sum "$p") || return 3',
  '    if [ "${got%% *}" != "$e" ]; then echo "writ-rollback: $p changed since the receipt" >&2; return 3; fi',
  '  done',
  '}',
  'staged() { printf "%s/.writ-rollback-%s-%s" "$(dirname "$1")" "$tag" "$2"; }',
  'stage() {',
  '  i=0',
  '  while [ $# -gt 0 ]; do',
  '    op=$1; p=$2; n=$3; h=$4; shift 5; i=$((i + 1))',
  '    [ "$op" = d ] && continue',
  '    mkdir -p "$(dirname "$p")" || return 4',
  '    t=$(staged "$p" "$i")',
  '    q=$((n / 65536)); r=$((n % 65536))',
  '    {',
  '      if [ "$q" -gt 0 ]; then dd bs=65536 count="$q" iflag=fullblock 2>/dev/null || return 4; fi',
  '      if [ "$r" -gt 0 ]; then dd bs="$r" count=1 iflag=fullblock 2>/dev/null || return 4; fi',
  '    } > "$t" || return 4',
  '    got=$(sha256sum "$t") || return 4',
  '    if [ "${got%% *}" != "$h" ]; then echo "writ-rollback: the pre-image of $p arrived changed" >&2; return 5; fi',
  '  done',
  '}',
  'unstage() {',
  '  i=0',
  '  while [ $# -gt 0 ]; do',
  '    op=$1; p=$2; shift 5; i=$((i + 1))',
  '    [ "$op" = d ] || rm -f "$(staged "$p" "$i")"',
  '  done',
  '}',
  'apply() {',
  '  i=0',
  '  while [ $# -gt 0 ]; do',
  '    op=$1; p=$2; shift 5; i=$((i + 1))',
  '    if [ "$op" = d ]; then rm "$p" || return 6; else mv -f "$(staged "$p" "$i")" "$p" || return 6; fi',
  '  done',
  '}',
  'check "$@" || exit $?',
  'stage "$@"; s=$?',
  'if [ "$s" -ne 0 ]; then unstage "$@"; exit "$s"; fi',
  'apply "$@"',
].join('\n');

/** The command a rollback plan runs; its arguments follow (rollbackExec). */
export const ROLLBACK_ARGV: readonly string[] = Object.freeze(['sh', '-c', ROLLBACK_SCRIPT, 'writ-rollback']);

/** The exec of a rollback: argv (ROLLBACK_SCRIPT and its arguments) and stdin (the pre-images in step order). */
export interface RollbackExec {
  readonly argv: readonly string[];
  readonly stdin: Uint8Array;
}

/**
 * Builds the exec of a rollback whose pre-images are `preimages` (by SHA-256,
 * already fetched and checked). `tag` keeps staged names apart from any other
 * use's (hex only).
 */
export function rollbackExec(steps: readonly RollbackStep[], preimages: ReadonlyMap<string, Uint8Array>, tag: string): RollbackExec {
  const argv: string[] = [...ROLLBACK_ARGV, tag];
  const chunks: Uint8Array[] = [];
  for (const step of steps) {
    const path = `./${step.path}`;
    const expected = step.expected_sha256 ?? '-';
    if (step.action_class === 'delete_local') {
      argv.push('d', path, '-', '-', expected);
      continue;
    }
    const sha256 = step.restore_sha256 as string;
    const bytes = preimages.get(sha256);
    if (bytes === undefined) throw new ExecutorError('EXECUTOR_INTERNAL', `the rollback exec was built without the pre-image ${sha256} of ${step.path}`);
    argv.push(step.expected_sha256 === null ? 'c' : 'w', path, String(bytes.byteLength), sha256, expected);
    chunks.push(bytes);
  }
  return { argv, stdin: Buffer.concat(chunks) };
}

/** A file whose current content is kept as a `file.preimage` artifact before an action changes it. */
export interface PreimageTarget {
  readonly path: string;
  readonly sha256: string;
  readonly size: number;
}

/** Compiled once: never kept as a pre-image, whatever an action is about to do to them. */
const SECRET_GLOBS: readonly CompiledGlob[] = Object.freeze(DEFAULT_SECRET_PATHS.map((pattern) => compileGlob(pattern)).filter((glob): glob is CompiledGlob => glob !== undefined));

/**
 * The regular files an action with known targets is about to change, as the
 * walk before it found them: each target itself and, for a directory, every
 * file below it; at most `maxBytes` each and `maxFiles` in all, in path
 * order. Secret paths (DEFAULT_SECRET_PATHS: `.env`, keys, `secrets/`...) are
 * never kept: their rollback then has no method.
 */
export function preimageTargets(targets: readonly string[], walked: WalkedWorkspace, limits: { readonly maxBytes: number; readonly maxFiles: number }): PreimageTarget[] {
  if (limits.maxBytes <= 0 || limits.maxFiles <= 0) return [];
  const out: PreimageTarget[] = [];
  const paths = [...walked.entries.keys()].sort();
  for (const path of paths) {
    if (out.length >= limits.maxFiles) break;
    if (!targets.some((target) => path === target || path.startsWith(`${target}/`))) continue;
    const entry = walked.entries.get(path) as WalkedEntry;
    if (entry.kind !== 'file' || entry.size > limits.maxBytes) continue;
    if (matchAnyGlob(SECRET_GLOBS, path.split('/'), path)) continue;
    out.push({ path, sha256: entry.sha256, size: entry.size });
  }
  return out;
}
