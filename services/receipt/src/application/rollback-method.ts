import { LIMITS, ROLLBACK_RESTORE_MAX_BYTES, type ActionClass, type ExecutionCompleted, type ReceiptResultCode, type ReceiptRollback, type RollbackStep } from '@writ/contracts';

/** A `file.preimage` or `file.snapshot` the task's executions kept: where a pre-image can be found. */
export interface RecordedSnapshot {
  readonly artifact_id: string;
  readonly byte_size: number;
}

export interface RollbackInput {
  /** The class of the request that ran (a downgrade's, when policy rewrote it). */
  readonly actionClass: ActionClass;
  readonly result: ReceiptResultCode;
  /** What the executor observed; null when nothing was recorded. */
  readonly execution: ExecutionCompleted | null;
  /** The outcome was unknown and a director settled it: the effect was not observed by Writ. */
  readonly settledByDirector: boolean;
  /** The task's `file.preimage` and `file.snapshot` artifacts by content hash (`recordedSnapshots`). */
  readonly snapshots: ReadonlyMap<string, RecordedSnapshot>;
}

/**
 * Classes whose whole effect is the cell's workspace when the cell has no
 * network: the only ones a rollback can be named for. A rollback is one of
 * them: undoing it writes back what it overwrote (its own pre-images).
 */
const WORKSPACE_CLASSES: readonly ActionClass[] = ['write_local', 'delete_local', 'execute_command', 'read_local', 'rollback'];

/**
 * The largest pre-image a `write_local` step restores: the executor fetches
 * it from the artifact store (ROLLBACK_RESTORE_MAX_BYTES, its largest file
 * artifact) and writes it back inside the cell.
 */
export const MAX_RESTORABLE_BYTES = ROLLBACK_RESTORE_MAX_BYTES;

/** The statement of an action that ran and changed nothing Writ could see or not see: not a limitation, just nothing to undo. */
export const NOTHING_CHANGED = 'the action changed no file in the workspace, and the cell had no network: there is nothing to roll back';

/** Diffs that could not be taken or stored: what changed is not fully known. */
const INCOMPLETE_DIFF = ['EXECUTOR_DIFF_UNAVAILABLE', 'EXECUTOR_ARTIFACTS_INCOMPLETE'];

function none(statement: string): ReceiptRollback {
  return { method: 'none', statement: clip(statement), prerequisites: [], steps: [] };
}

function clip(text: string): string {
  return text.length <= LIMITS.text ? text : `${text.slice(0, LIMITS.text - 1)}…`;
}

function listed(paths: readonly string[]): string {
  const shown = paths.slice(0, 5).join(', ');
  return paths.length > 5 ? `${shown} and ${paths.length - 5} more` : shown;
}

/**
 * Rollback metadata of one action (Hermit 18.6), from what the log holds and
 * nothing else. A method is named only when every change is undoable with
 * data the log has: a file the action added is deleted (if it still holds
 * what the action left); a file it modified or deleted is written back from a
 * `file.preimage` or `file.snapshot` artifact of the task with the
 * pre-image's hash (the store is content-addressed: any artifact with that
 * hash holds those bytes). The executor keeps the pre-image of every regular
 * file a write_local, delete_local or rollback is about to change (within
 * WRIT_EXECUTOR_PREIMAGE_MAX_BYTES, secret paths never), and the after-image
 * of files an action leaves; an execute_command's targets are not known
 * before it runs, so a file it modifies or deletes is restorable only when an
 * earlier action of the task left or kept those very bytes. Anything that
 * may have reached beyond the workspace (egress), an unknown outcome, or an
 * incomplete diff has no method.
 */
export function rollbackOf(input: RollbackInput): ReceiptRollback {
  const { execution, actionClass } = input;
  if (input.result === 'refused' || input.result === 'cancelled') return none('nothing ran under this attempt: there is nothing to roll back');
  if (input.settledByDirector) {
    return none('the outcome was settled by a director on evidence outside the log: Writ did not observe what changed, so no rollback can be named');
  }
  if (input.result === 'unknown_outcome' || execution === null || execution.outcome === 'unknown') {
    return none('the outcome is unknown: what changed is not known, so no rollback can be named');
  }
  if (!WORKSPACE_CLASSES.includes(actionClass)) return none(`Writ has no method to undo a ${actionClass} action`);
  const environment = execution.environment;
  if (environment === null) return none("the cell's environment was not read back: whether the action reached beyond its workspace is not known");
  const egress = environment.egress_hosts ?? [];
  if (egress.length > 0) {
    return none(`the cell could reach ${listed(egress)}: effects there are outside the workspace, were not observed by Writ and cannot be undone by it`);
  }
  if (execution.error !== undefined && INCOMPLETE_DIFF.includes(execution.error.code)) {
    return none(`what changed is not fully recorded (${execution.error.code}), so no rollback can be named`);
  }
  const changes = execution.changed_files;
  if (changes.length >= LIMITS.listItems) return none(`the changed-file list is at its bound of ${LIMITS.listItems} entries and may be incomplete, so no rollback can be named`);
  if (changes.length === 0) return none(NOTHING_CHANGED);

  const steps: RollbackStep[] = [];
  const missing: string[] = [];
  const tooLarge: string[] = [];
  for (const change of changes) {
    if (change.change === 'added') {
      if (change.after_sha256 === null) missing.push(change.path);
      else steps.push({ action_class: 'delete_local', path: change.path, expected_sha256: change.after_sha256 });
      continue;
    }
    // A modification with equal hashes changed the mode or the kind (file ↔ symlink): neither is recorded.
    if (change.before_sha256 === null || change.before_sha256 === change.after_sha256) {
      missing.push(change.path);
      continue;
    }
    const snapshot = input.snapshots.get(change.before_sha256);
    if (snapshot === undefined) missing.push(change.path);
    else if (snapshot.byte_size > MAX_RESTORABLE_BYTES) tooLarge.push(change.path);
    else {
      steps.push({
        action_class: 'write_local',
        path: change.path,
        expected_sha256: change.after_sha256,
        restore_artifact_ref: `artifact:${snapshot.artifact_id}`,
        restore_sha256: change.before_sha256,
      });
    }
  }
  if (missing.length > 0) {
    return none(
      `no rollback method: the pre-image of ${listed(missing)} was not captured (the executor keeps pre-images only of what a write_local, delete_local or rollback targets, within its size bound and never of secret paths, and after-images of files actions leave; a mode or file-kind change is not recorded)`,
    );
  }
  if (tooLarge.length > 0) return none(`no rollback method: the pre-image of ${listed(tooLarge)} is larger than a rollback restores (${MAX_RESTORABLE_BYTES} bytes)`);
  const writes = steps.some((step) => step.action_class === 'write_local');
  return {
    method: 'compensating_local_actions',
    statement: clip(
      `reversible through one governed rollback of the same task (${steps.length} step(s)): ${writes ? 'write_local writes back each pre-image from its artifact, ' : ''}${steps.some((step) => step.action_class === 'delete_local') ? 'delete_local removes each file the action added, ' : ''}all only if every path still holds what this action left; directories the action created are not listed and stay`,
    ),
    prerequisites: [
      'each path still hashes to expected_sha256 (null: it is still absent); otherwise a later change would be lost and the rollback does not run at all',
      'the rollback is one new governed action of class rollback (`writ rollback <receipt_id>`): it goes through policy and approval, gets its own grant and receipt, and applies every step or none',
      ...(writes ? ['the pre-image artifacts are still held by the artifact store (retention class task)', 'file modes are not restored: write_local writes content only'] : []),
    ],
    steps,
  };
}
