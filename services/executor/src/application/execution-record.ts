import type { Artifact, ArtifactClass, CellEnvironment as ContractCellEnvironment, ChangedFile, ExecutionCompleted } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import type { CellEnvironment, FileChange, WorkspaceDiff } from '../outbound/cells/index.js';
import type { StoredObject } from './ports.js';

/** SHA-256 of no bytes: the hash of an empty (or never captured) stream. */
export const EMPTY_SHA256 = sha256Hex(new Uint8Array());

/**
 * `execution.completed` of a use with nothing captured (no exit status, output,
 * diff or attestation), which `fields` then completes: the shape every path
 * starts from — a live run, a reconciled or fenced use, an unknown outcome.
 */
export function emptyCompletion(
  base: Pick<ExecutionCompleted, 'grant_id' | 'use_no' | 'executor_id' | 'at'>,
  fields: Partial<ExecutionCompleted> & Pick<ExecutionCompleted, 'outcome'>,
): ExecutionCompleted {
  return {
    ...base,
    exit_code: null,
    timed_out: false,
    duration_ms: 0,
    stdout_sha256: EMPTY_SHA256,
    stderr_sha256: EMPTY_SHA256,
    changed_files: [],
    artifacts: [],
    environment: null,
    ...fields,
  };
}

/** The largest `execution.completed` payload the executor sends (the log refuses events over 1 MiB). */
export const MAX_COMPLETION_PAYLOAD_BYTES = 768 * 1024;

/** At most this many changed files are listed in the event; the diff artifact lists them all. */
export const MAX_CHANGED_FILES = 256;

/** One thing to keep as an artifact. */
export interface ArtifactInput {
  /** Unique within one use: `stdout`, `stderr`, `diff`, `environment`, `file:<path>`. */
  readonly role: string;
  readonly bytes: Uint8Array;
  readonly class: ArtifactClass;
  readonly kind: string;
  readonly media_type: string;
  readonly alias?: string;
}

export interface ArtifactContext {
  readonly useId: string;
  readonly producer: string;
  readonly taskId: string;
  readonly stepId: string;
  readonly attemptId: string;
  readonly now: string;
}

/** The contracts `Artifact` record of a stored object. Ids derive from the use and role, so a retry names the same artifact. */
export function artifactRecord(stored: StoredObject, input: ArtifactInput, context: ArtifactContext): Artifact {
  return {
    artifact_id: `art-${sha256Hex(`${context.useId}:${input.role}`).slice(0, 40)}`,
    class: input.class,
    kind: input.kind,
    uri: stored.uri,
    content_hash: stored.sha256,
    media_type: input.media_type,
    byte_size: stored.byte_size,
    created_at: context.now,
    producer: context.producer,
    retention_class: 'task',
    // Captured by the executor from the cell it controls: observed, not asserted by anyone.
    trust_tier: 'observed',
    // Action output is not scanned for secrets: internal, never public by default.
    sensitivity_class: 'internal',
    ...(input.alias === undefined ? {} : { task_local_alias: input.alias }),
    task_id: context.taskId,
    step_id: context.stepId,
    attempt_id: context.attemptId,
  };
}

/** The diff as `execution.completed.changed_files` lists it (added, modified, deleted; each by path). */
export function changedFilesOf(diff: WorkspaceDiff): ChangedFile[] {
  const one = (change: FileChange, kind: ChangedFile['change']): ChangedFile => ({
    path: change.path,
    change: kind,
    before_sha256: change.before_sha256,
    after_sha256: change.after_sha256,
  });
  return [
    ...diff.added.map((c) => one(c, 'added')),
    ...diff.modified.map((c) => one(c, 'modified')),
    ...diff.deleted.map((c) => one(c, 'deleted')),
  ].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The diff artifact's JSON document: every change with its before/after entries (workspace-relative, no host path). */
export function diffDocument(diff: WorkspaceDiff): Record<string, unknown> {
  return { format: 'writ.workspace-diff/1', root: '/workspace', added: diff.added, modified: diff.modified, deleted: diff.deleted };
}

/** The attestation as the contract records it in the event. */
export function contractEnvironment(env: CellEnvironment): ContractCellEnvironment {
  return {
    image: env.image.slice(0, 256) || 'unknown',
    image_id: env.image_id.slice(0, 256) || 'unknown',
    network_mode: env.network_mode.slice(0, 64) || 'unknown',
    readonly_rootfs: env.readonly_rootfs,
    cap_drop: env.cap_drop.slice(0, 64).map((cap) => cap.slice(0, 64)),
    user: env.user.slice(0, 64),
    memory_bytes: Math.max(0, Math.trunc(env.memory)),
    pids_limit: Math.max(0, Math.trunc(env.pids_limit ?? 0)),
    mounts: env.mounts.slice(0, 16).map((mount) => ({ destination: mount.destination.slice(0, 1024), read_only: !mount.rw })),
    ...(env.egress_hosts === undefined ? {} : { egress_hosts: env.egress_hosts.slice(0, 64).map((host) => host.slice(0, 261)) }),
  };
}

/**
 * The environment artifact's JSON document: everything Docker reports it applied,
 * except where things live on the host (mount sources are host paths) and the
 * values of the environment (only variable names are ever read).
 */
export function environmentDocument(env: CellEnvironment): Record<string, unknown> {
  return {
    format: 'writ.cell-environment/1',
    container_id: env.container_id,
    running: env.running,
    image: env.image,
    image_id: env.image_id,
    spec_sha256: env.spec_sha256,
    network_mode: env.network_mode,
    readonly_rootfs: env.readonly_rootfs,
    privileged: env.privileged,
    cap_drop: env.cap_drop,
    cap_add: env.cap_add,
    security_opt: env.security_opt,
    user: env.user,
    memory: env.memory,
    memory_swap: env.memory_swap,
    pids_limit: env.pids_limit,
    nano_cpus: env.nano_cpus,
    ipc_mode: env.ipc_mode,
    tmpfs: env.tmpfs,
    mounts: env.mounts.map((mount) => ({ type: mount.type, destination: mount.destination, rw: mount.rw })),
    env_names: env.env_names,
    ...(env.egress_hosts === undefined ? {} : { egress_hosts: env.egress_hosts }),
  };
}

/** UTF-8 JSON bytes of a document. */
export function jsonBytes(document: unknown): Uint8Array {
  return Buffer.from(JSON.stringify(document), 'utf8');
}

/**
 * Keeps the payload under the log's event size: drops `changed_files` from the
 * end until it fits (the diff artifact still lists every change).
 */
export function fitCompletion(payload: ExecutionCompleted): ExecutionCompleted {
  let size = Buffer.byteLength(JSON.stringify(payload));
  if (size <= MAX_COMPLETION_PAYLOAD_BYTES) return payload;
  const files = [...payload.changed_files];
  while (files.length > 0 && size > MAX_COMPLETION_PAYLOAD_BYTES) {
    const dropped = files.pop() as ChangedFile;
    size -= Buffer.byteLength(JSON.stringify(dropped)) + 1;
  }
  return { ...payload, changed_files: files };
}
