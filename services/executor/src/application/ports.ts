import type { EventDraft, EventEnvelope } from '@writ/contracts';
import type { KeySet } from '@writ/crypto';
import type { CellEnvironment, CellExecOptions, CellExecResult, CellHandle, CellImage, WorkspaceSnapshot } from '../outbound/cells/index.js';

/** The task streams of the event log. */
export interface TaskLog {
  /** The task's events in order (empty for a task with none). */
  read(taskId: string): Promise<readonly EventEnvelope[]>;
  /**
   * Appends if the task's last task_seq is `expectedSeq`; throws EVENTSTORE_CONFLICT
   * otherwise. `duplicate` when the log already held the (first) event by its key.
   */
  append(taskId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<{ readonly head: number; readonly duplicate: boolean }>;
}

/** Active verification keys of a principal, as the log records them. */
export interface IssuerKeys {
  verificationKeys(principalId: string): Promise<KeySet>;
}

/** A stored, content-addressed object. */
export interface StoredObject {
  readonly sha256: string;
  /** `nats-obj://<bucket>/sha256-<hex>`. */
  readonly uri: string;
  readonly byte_size: number;
}

/** Content-addressed artifact storage. */
export interface ArtifactStore {
  /** Stores `bytes` under their SHA-256 (once: the same content is stored once). */
  put(bytes: Uint8Array): Promise<StoredObject>;
}

/** One exec of an action: the cell's options plus the grant's secret handles it may resolve. */
export type ActionExecOptions = CellExecOptions & {
  /** Handles the grant allows and the request names; resolved at execution time, redacted from the output. */
  readonly secretHandles?: readonly string[];
  /** The grant's egress hosts: the exec runs in a cell on a per-action internal network, through the egress proxy. */
  readonly egressHosts?: readonly string[];
};

/** The task cells as the executor drives them (outbound/cells plus host-side file checks). */
export interface CellPort {
  /** The cell image, or CELL_IMAGE_MISSING / CELL_DOCKER_UNAVAILABLE. */
  ensureImage(): Promise<CellImage>;
  openCell(taskId: string): Promise<CellHandle>;
  snapshotWorkspace(taskId: string): Promise<WorkspaceSnapshot>;
  exec(taskId: string, options: ActionExecOptions): Promise<CellExecResult>;
  environment(taskId: string): Promise<CellEnvironment>;
  /** Throws EXECUTOR_PATH_ESCAPE when `relative` (inside the task's workspace) is reached through a symlink. */
  assertPlainPath(taskId: string, relative: string): Promise<void>;
  /**
   * The content of a file the action changed, if it still is a regular file (reached
   * through no symlink) of at most `maxBytes` whose SHA-256 is `sha256`; else undefined.
   */
  readChangedFile(taskId: string, relative: string, sha256: string, maxBytes: number): Promise<Uint8Array | undefined>;
}

/**
 * What one walk of a task's workspace found for some resources (read-only, from the host,
 * symlinks never followed). `fingerprints[i]` answers `paths[i]`; `stable` is false when
 * something changed while it was read (a file's size or times, a directory's entries).
 */
export interface WorkspaceWalk {
  readonly fingerprints: readonly string[];
  readonly stable: boolean;
}

/** Read-only observation of a task's workspace for the state witness (no cell, no grant). */
export interface WorkspaceObserverPort {
  /** `paths` are workspace-relative segment lists (`[]` is the workspace itself), already checked lexically. */
  walk(taskId: string, paths: ReadonlyArray<readonly string[]>): Promise<WorkspaceWalk>;
}

/** Closing a task's cell: its containers go, its workspace stays. */
export interface CellCloser {
  /** Idempotent: a task without a container removes nothing. */
  closeCell(taskId: string): Promise<{ readonly containers_removed: number }>;
}

/** A use this process journaled on its host before claiming it (see outbound/use-journal.ts). */
export interface JournalEntry {
  readonly useId: string;
  readonly command: import('@writ/contracts').RunAction;
}

/** The host journal of uses in flight: what a restarted executor reconciles. */
export interface UseJournal {
  write(useId: string, command: import('@writ/contracts').RunAction): Promise<void>;
  remove(useId: string): Promise<void>;
  list(): Promise<JournalEntry[]>;
}

/** The per-use records of recorded execs, on this host (outbound/cells/use-record.ts). */
export interface UseRecords {
  read(taskId: string, useId: string, maxOutputBytes: number): Promise<import('../outbound/cells/index.js').UseRecord | undefined>;
  /** True when this call fenced the use: it never ran and never will. */
  fence(taskId: string, useId: string): Promise<boolean>;
  remove(taskId: string, useId: string): Promise<void>;
  /** SIGKILL to the action's process group inside the cell (after its deadline). */
  killGroup(taskId: string, pgid: number): Promise<void>;
  /** Whether the task's cell lives on this host (its task directory exists here). */
  hostsCell(taskId: string): Promise<boolean>;
}
