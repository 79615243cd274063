import type { EventDraft, EventEnvelope, PrincipalType } from '@writ/contracts';
import type { KeySet } from '@writ/crypto';
import type { CellEnvironment, CellExecOptions, CellExecResult, CellHandle, CellImage, CellUser, WorkspaceSnapshot } from '../outbound/cells/index.js';
import type { GitHead } from '../outbound/git-head.js';

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

/**
 * The memory records' streams of the event log (`<events>.memory.<memory_id>`, issue 17): a
 * granted memory_write appends its memory event there, guarded by the stream's last sequence
 * (the first promotion of an id wins), keyed by the grant use (a replay appends nothing new).
 */
export interface MemoryLog {
  /** The record's events in order, authorship checked (empty for an id never written). */
  read(memoryId: string): Promise<readonly EventEnvelope[]>;
  /** Appends if the stream's last sequence is `expectedSeq`; throws EVENTSTORE_CONFLICT otherwise. */
  append(memoryId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<void>;
}

/** Who a proposer is, as its principal stream registers it now (a memory's trust tier is bounded by it). */
export interface ProposerDirectory {
  principalType(principalId: string): Promise<PrincipalType | undefined>;
}

/** Active verification keys of a principal, as the log records them. */
export interface IssuerKeys {
  verificationKeys(principalId: string): Promise<KeySet>;
  /**
   * Why the issuer's key `kid` is not trusted (its registration does not chain to the trust
   * anchor: `RegistrationAuthority`), or undefined when it is. Throws when the log cannot be read.
   */
  unauthorized(principalId: string, kid: string): Promise<string | undefined>;
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
  /** The bytes stored under `sha256`, or null when the store has none (a rollback's pre-images). */
  get(sha256: string): Promise<Uint8Array | null>;
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
  /**
   * The secret handles earlier uses of the task may have resolved into its cell (`cellSecretHandles`
   * of the task stream): resolved for redaction only, never passed to an exec. From then on every
   * output of the task's cell has their values redacted, and a file holding one is read back as
   * undefined (no artifact), as for the exec's own secrets. Best effort: a handle the store no longer
   * resolves is skipped (its value is unknown to redact). Absent: only each exec's own secrets are.
   */
  holdSecrets?(taskId: string, handles: readonly string[]): Promise<void>;
  environment(taskId: string): Promise<CellEnvironment>;
  /** Throws EXECUTOR_PATH_ESCAPE when `relative` (inside the task's workspace) is reached through a symlink. */
  assertPlainPath(taskId: string, relative: string): Promise<void>;
  /**
   * The content of a file the action changed, if it still is a regular file (reached
   * through no symlink) of at most `maxBytes` whose SHA-256 is `sha256`; else undefined.
   */
  readChangedFile(taskId: string, relative: string, sha256: string, maxBytes: number): Promise<Uint8Array | undefined>;
  /**
   * HEAD of the git repository at `repoRelative` (workspace-relative) as its files say, read from
   * the host without following links; undefined when there is none. Absent: HEADs are not recorded.
   */
  gitHead?(taskId: string, repoRelative: string): Promise<GitHead | undefined>;
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
  /** The fingerprint of each `repo:` resource: the commit its ref names in the repository at `segments` (`git:<ref>=<commit>|unborn`, or `absent`). */
  refs(taskId: string, repos: ReadonlyArray<{ readonly segments: readonly string[]; readonly ref: string }>): Promise<string[]>;
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
  /**
   * SIGKILL to the action's process group inside the cell (after its deadline), sent as the
   * user that owns the use's record (the seat it ran as: no other uid may signal it).
   */
  killGroup(taskId: string, pgid: number, useId: string): Promise<void>;
  /** Whether the task's cell lives on this host (its task directory exists here). */
  hostsCell(taskId: string): Promise<boolean>;
}

/** The cell streams of the event log (`<prefix>.cell.<cell_id>`), appended with the subject's optimistic concurrency. */
export interface CellLog {
  /** The cell's events in order (empty for a cell with none). */
  read(cellId: string): Promise<readonly EventEnvelope[]>;
  /** The cell's last task_seq (0 for none): one request, to tell whether a cached fold is current. */
  head(cellId: string): Promise<number>;
  /** Appends if the cell's last task_seq is `expectedSeq`; throws EVENTSTORE_CONFLICT otherwise. */
  append(cellId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<{ readonly head: number; readonly duplicate: boolean }>;
  /** Every cell id the log holds a stream for. */
  list(): Promise<readonly string[]>;
}

/** A checkpoint as the harness keeps it beside the cell (`.lazarus/checkpoints/<id>.json`). */
export interface CheckpointRecord {
  readonly checkpoint_id: string;
  readonly sha256: string;
  readonly artifact_ref: string;
  readonly byte_size: number;
  readonly final: boolean;
  readonly at: string;
}

/** What `restoreCheckpoint` brings back: everything, or everything but the homes (a substitute). */
export interface RestoreOptions {
  readonly homes: boolean;
  /** With `homes`: the seats whose homes come back, each to its own user; a home of any other seat in the tarball stays out. */
  readonly owners?: Readonly<Record<string, CellUser>>;
}

/**
 * This host's side of the cells (outbound/cells/cell-host.ts): CELL_HOME on disk, the
 * container, checkpoints captured and restored inside the cell, scrubbing. Cell ids
 * are task ids.
 */
export interface CellHostPort {
  /** Whether this host holds the cell's home (a running cell, a graveyard, or one being scrubbed). */
  holds(cellId: string): Promise<boolean>;
  /** Cells this host holds, and those whose scrub was cut short. */
  localCells(): Promise<readonly string[]>;
  /** The incarnation (`spawn_seq`) this host's `.lazarus/cell.json` records, or null. */
  incarnation(cellId: string): Promise<number | null>;
  /** The running container of the cell (warm pool, cold start, or the graveyard's started again) and its base layout. */
  open(cellId: string): Promise<void>;
  /** The graveyard: the container stopped and kept. True when this call stopped it. */
  stop(cellId: string): Promise<boolean>;
  /** `home/<participant>/`, owned by `owner` (the seat's own user), 0700. */
  ensureHome(cellId: string, participantId: string, owner: CellUser): Promise<void>;
  removeHome(cellId: string, participantId: string): Promise<void>;
  writeMetadata(cellId: string, metadata: Readonly<Record<string, unknown>>): Promise<void>;
  appendSpawnLog(cellId: string, entry: Readonly<Record<string, unknown>>): Promise<void>;
  appendDecision(cellId: string, entry: Readonly<Record<string, unknown>>): Promise<void>;
  writeCheckpointRecord(cellId: string, record: CheckpointRecord): Promise<void>;
  /** A tarball of the cell's workspace (project, shared area, homes), taken inside the running cell: each home by its own seat's user, the rest by the harness user. */
  captureCheckpoint(cellId: string): Promise<Uint8Array>;
  /** Empties the restored areas and extracts the tarball inside the running cell: each home as its seat's user, the rest as the harness user. */
  restoreCheckpoint(cellId: string, tarball: Uint8Array, options: RestoreOptions): Promise<void>;
  /** Before a scrub: a marker outside the cell, so a scrub cut short is finished (and archived) by a later sweep. */
  markScrubbing(cellId: string): Promise<void>;
  clearScrubbing(cellId: string): Promise<void>;
  /** Containers removed, the cell's directory deleted (mounts released first); checks nothing is left. */
  scrub(cellId: string): Promise<void>;
}

/** What `deleteOwned` did with an archived object. */
export type ArchivePurgeOutcome = 'deleted' | 'absent' | 'kept';

/** Content-addressed storage that checkpoints go to and come back from (the artifact bucket). */
export interface CheckpointStore {
  /**
   * Stores `bytes` under their SHA-256. `owner` (`cell:<cell_id>`) is noted on the object when
   * this call creates it; content already in the store (put first by a task, a service or
   * another cell) keeps its note or none, so it is never this owner's to delete.
   */
  put(bytes: Uint8Array, owner?: string): Promise<StoredObject>;
  /** The object's bytes, or null when the store has none under that hash. */
  get(sha256: string): Promise<Uint8Array | null>;
  /**
   * Deletes the object under `sha256` if its note names `owner`: 'deleted'; 'absent' when the
   * store has none (gone already); 'kept' when it has another owner or none.
   */
  deleteOwned(sha256: string, owner: string): Promise<ArchivePurgeOutcome>;
}

/** The executor's own heartbeat (core NATS, `<root>.hb.executor.<executor_id>`): liveness, not a fact of the log. */
export interface ExecutorBeacon {
  beat(beat: { readonly executor_id: string; readonly at: string; readonly cells_held: number }): void;
}

/** The seat an action runs under in its task's cell (application/cell-lifecycle.ts). */
export interface CellSessions {
  /**
   * Called in the task's serialized section before anything runs: the cell is ACTIVE with a
   * working seat for the principal. Throws (EXECUTOR_CELL_CLOSED, EXECUTOR_CELL_NOT_ACTIVE, a
   * cell or log failure) when the action must not run: the caller records it errored.
   */
  prepareForAction(cellId: string, principalId: string): Promise<{ readonly participant_id: string; readonly role: import('@writ/kernel').CellRole; readonly user?: CellUser }>;
}
