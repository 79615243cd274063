import { DEFAULT_KNOWLEDGE_LIMITS, WorkingStateEntry, WorkingStateLimits, type WorkingStateEntryKind } from '@writ/contracts';
import type { Anomaly, Command, Decider } from '../shared/decider.js';
import { totalEvolve } from '../shared/decider.js';
import { emit } from '../shared/events.js';
import { commandNowMs, unknownCommand } from '../shared/instant.js';
import { KernelError, type KernelCommandErrorCode } from '../shared/kernel-error.js';
import { jsonByteSize } from './json-size.js';
import { KnowledgeError } from './knowledge.errors.js';
import { entryHoldsSecretByValue, secretByValue } from './secret-by-reference.js';
import { WorkingStateEvent } from './working-state.events.js';

/** The limits a task gets when its profile names none: small on purpose, large content belongs in artifacts. */
export const DEFAULT_WORKING_STATE_LIMITS: WorkingStateLimits = DEFAULT_KNOWLEDGE_LIMITS.working_state;

/** Entry kinds a compaction always keeps: what the task is for and what is still open. The rest goes unless referenced. */
export const COMPACTION_ROOT_KINDS: readonly WorkingStateEntryKind[] = Object.freeze(['objective', 'constraint', 'pending_question', 'uncertainty']);

export type WorkingStateCommand =
  | Command<'open-working-state', { readonly task_id: string; readonly limits?: WorkingStateLimits }>
  /** An agent's revision, from its signed request on the bus (the service checks the signature; `request_id` names it). */
  | Command<
      'revise-working-state',
      {
        readonly task_id: string;
        readonly request_id: string;
        readonly revised_by: string;
        readonly expected_revision: number;
        readonly set?: readonly WorkingStateEntry[];
        readonly remove?: readonly string[];
      }
    >
  /** Drops what nothing references; `references` are the keys held from outside (the current plan, pending attempts). */
  | Command<
      'compact-working-state',
      { readonly task_id: string; readonly compaction_id: string; readonly compacted_by: string; readonly expected_revision: number; readonly references?: readonly string[] }
    >;

export interface NoWorkingState {
  readonly status: 'initial';
  readonly anomalies: readonly Anomaly[];
}

export interface WorkingStateRecord {
  readonly status: 'open';
  readonly task_id: string;
  readonly limits: WorkingStateLimits;
  readonly revision: number;
  /** Sorted by key, so equal content folds to an equal state whatever the order of the sets. */
  readonly entries: readonly WorkingStateEntry[];
  readonly total_bytes: number;
  readonly last_request_id: string | null;
  readonly updated_at: string;
  readonly anomalies: readonly Anomaly[];
}

export type WorkingStateState = NoWorkingState | WorkingStateRecord;

export function initialState(): WorkingStateState {
  return { status: 'initial', anomalies: [] };
}

/** Why `entries` break `limits`, or undefined when they fit. */
export function workingStateOverLimit(
  entries: readonly WorkingStateEntry[],
  limits: WorkingStateLimits,
): { limit: keyof WorkingStateLimits; allowed: number; actual: number; key?: string } | undefined {
  if (entries.length > limits.max_entries) return { limit: 'max_entries', allowed: limits.max_entries, actual: entries.length };
  let total = 0;
  for (const entry of entries) {
    const size = jsonByteSize(entry) ?? Number.POSITIVE_INFINITY;
    if (size > limits.max_entry_bytes) return { limit: 'max_entry_bytes', allowed: limits.max_entry_bytes, actual: size, key: entry.key };
    total += size;
  }
  if (total > limits.max_total_bytes) return { limit: 'max_total_bytes', allowed: limits.max_total_bytes, actual: total };
  return undefined;
}

function totalBytes(entries: readonly WorkingStateEntry[]): number {
  return entries.reduce((sum, entry) => sum + (jsonByteSize(entry) ?? 0), 0);
}

/** The entries after a revision, sorted by key. */
function applyRevision(entries: readonly WorkingStateEntry[], set: readonly WorkingStateEntry[], removed: readonly string[]): WorkingStateEntry[] {
  const byKey = new Map(entries.map((entry) => [entry.key, entry]));
  for (const key of removed) byKey.delete(key);
  for (const entry of set) byKey.set(entry.key, entry);
  return [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The first `refs` key naming no entry, or undefined. */
function danglingRef(entries: readonly WorkingStateEntry[]): { key: string; ref: string } | undefined {
  const keys = new Set(entries.map((entry) => entry.key));
  for (const entry of entries) for (const ref of entry.refs ?? []) if (!keys.has(ref)) return { key: entry.key, ref };
  return undefined;
}

/**
 * The keys a compaction keeps: every root (pinned, a root kind, or named in
 * `references`) and everything reachable from one through `refs`.
 */
export function compactionKeeps(entries: readonly WorkingStateEntry[], references: readonly string[]): Set<string> {
  const byKey = new Map(entries.map((entry) => [entry.key, entry]));
  const kept = new Set<string>();
  const queue = [
    ...entries.filter((entry) => entry.pinned === true || COMPACTION_ROOT_KINDS.includes(entry.kind)).map((entry) => entry.key),
    ...references,
  ];
  for (let key = queue.pop(); key !== undefined; key = queue.pop()) {
    if (kept.has(key) || !byKey.has(key)) continue;
    kept.add(key);
    queue.push(...(byKey.get(key)?.refs ?? []));
  }
  return kept;
}

function openRecord(state: WorkingStateState, taskId: string, what: string): WorkingStateRecord {
  if (state.status === 'initial') throw new KnowledgeError('KNOWLEDGE_WORKING_STATE_NOT_OPEN', `${what} needs an open working state: open-working-state first`);
  if (state.task_id !== taskId) {
    throw new KnowledgeError('KNOWLEDGE_WRONG_TASK', `this working state belongs to task ${state.task_id}, not ${taskId}`, { details: { task_id: state.task_id } });
  }
  return state;
}

function checkRevision(state: WorkingStateRecord, expected: number): void {
  if (expected !== state.revision) {
    throw new KnowledgeError('KNOWLEDGE_WORKING_STATE_REVISION_CONFLICT', `expected revision ${expected}, the working state is at ${state.revision}: reload and retry`, {
      details: { expected_revision: expected, revision: state.revision },
    });
  }
}

function parseEntries(set: readonly unknown[]): WorkingStateEntry[] {
  const parsed = WorkingStateEntry.array().safeParse(set);
  if (!parsed.success) {
    throw new KernelError<KernelCommandErrorCode>('KERNEL_COMMAND_INVALID', 'the working state entries are not valid WorkingStateEntry values', { cause: parsed.error });
  }
  return parsed.data;
}

export function decide(command: WorkingStateCommand, state: WorkingStateState): WorkingStateEvent[] {
  commandNowMs(command);
  const at = command.metadata.now;
  switch (command.type) {
    case 'open-working-state': {
      if (state.status !== 'initial') throw new KnowledgeError('KNOWLEDGE_WORKING_STATE_ALREADY_OPEN', `task ${state.task_id} already has a working state`);
      return emit(WorkingStateEvent, [{ type: 'working_state.opened', data: { task_id: command.data.task_id, limits: command.data.limits ?? DEFAULT_WORKING_STATE_LIMITS, at } }]);
    }
    case 'revise-working-state': {
      const record = openRecord(state, command.data.task_id, 'revise-working-state');
      // A redelivered request that was already applied produces nothing (the bus may deliver twice).
      if (record.last_request_id === command.data.request_id) return [];
      checkRevision(record, command.data.expected_revision);
      const set = parseEntries(command.data.set ?? []);
      const bySecretValue = set.find(entryHoldsSecretByValue);
      if (bySecretValue !== undefined) throw secretByValue(`entry ${bySecretValue.key}`, 'value', { key: bySecretValue.key });
      const removed = [...(command.data.remove ?? [])];
      const touched = [...set.map((entry) => entry.key), ...removed];
      if (new Set(touched).size !== touched.length) {
        throw new KnowledgeError('KNOWLEDGE_WORKING_STATE_REVISION_INVALID', 'a key is set twice, or set and removed, in one revision: send one change per key');
      }
      const unknown = removed.find((key) => !record.entries.some((entry) => entry.key === key));
      if (unknown !== undefined) throw new KnowledgeError('KNOWLEDGE_WORKING_STATE_ENTRY_UNKNOWN', `cannot remove ${unknown}: the working state holds no such entry`, { details: { key: unknown } });
      const next = applyRevision(record.entries, set, removed);
      const dangling = danglingRef(next);
      if (dangling !== undefined) {
        throw new KnowledgeError('KNOWLEDGE_WORKING_STATE_DANGLING_REF', `entry ${dangling.key} references ${dangling.ref}, which would not exist`, { details: dangling });
      }
      const over = workingStateOverLimit(next, record.limits);
      if (over !== undefined) {
        throw new KnowledgeError(
          'KNOWLEDGE_WORKING_STATE_TOO_LARGE',
          `the revision would pass ${over.limit} (${over.actual} > ${over.allowed}${over.key === undefined ? '' : `, entry ${over.key}`}): compact the working state, or store large content as an artifact and reference it`,
          { details: over },
        );
      }
      return emit(WorkingStateEvent, [
        { type: 'working_state.revised', data: { revision: record.revision + 1, request_id: command.data.request_id, revised_by: command.data.revised_by, set, removed, at } },
      ]);
    }
    case 'compact-working-state': {
      const record = openRecord(state, command.data.task_id, 'compact-working-state');
      checkRevision(record, command.data.expected_revision);
      const references = [...new Set(command.data.references ?? [])].sort();
      const unknown = references.find((key) => !record.entries.some((entry) => entry.key === key));
      if (unknown !== undefined) {
        throw new KnowledgeError('KNOWLEDGE_WORKING_STATE_ENTRY_UNKNOWN', `the compaction references ${unknown}, which the working state does not hold`, { details: { key: unknown } });
      }
      const keeps = compactionKeeps(record.entries, references);
      const kept = record.entries.filter((entry) => keeps.has(entry.key)).map((entry) => entry.key);
      const removed = record.entries.filter((entry) => !keeps.has(entry.key)).map((entry) => entry.key);
      if (removed.length === 0) return [];
      return emit(WorkingStateEvent, [
        {
          type: 'working_state.compacted',
          data: { revision: record.revision + 1, compaction_id: command.data.compaction_id, compacted_by: command.data.compacted_by, references, kept, removed, at },
        },
      ]);
    }
    default:
      return unknownCommand((command as { type?: unknown }).type, 'the working state decider');
  }
}

/**
 * Total, and as strict as `decide`: a revision that would pass the recorded
 * limits, leave a dangling ref or set a secret entry by value, and a compaction that would drop a kept
 * (referenced) entry, are not applied, even when they sit in the log.
 */
export const evolve = totalEvolve<WorkingStateState, WorkingStateEvent>(WorkingStateEvent, (state, event) => {
  if (event.type === 'working_state.opened') {
    if (state.status !== 'initial') return undefined;
    const { task_id, limits, at } = event.data;
    return { status: 'open', task_id, limits, revision: 0, entries: [], total_bytes: 0, last_request_id: null, updated_at: at, anomalies: state.anomalies };
  }
  if (state.status === 'initial' || event.data.revision !== state.revision + 1) return undefined;
  if (event.type === 'working_state.revised') {
    const { set, removed, at, request_id } = event.data;
    const keys = [...set.map((entry) => entry.key), ...removed];
    if (new Set(keys).size !== keys.length || removed.some((key) => !state.entries.some((entry) => entry.key === key))) return undefined;
    // A secret recorded by value is not folded either: a replay holds the log to the rule decide holds a request to.
    if (set.some(entryHoldsSecretByValue)) return undefined;
    const entries = applyRevision(state.entries, set, removed);
    if (danglingRef(entries) !== undefined || workingStateOverLimit(entries, state.limits) !== undefined) return undefined;
    return { ...state, revision: event.data.revision, entries, total_bytes: totalBytes(entries), last_request_id: request_id, updated_at: at };
  }
  const { kept, removed, references, at } = event.data;
  const keeps = compactionKeeps(state.entries, references);
  const all = state.entries.map((entry) => entry.key);
  const claimed = [...kept, ...removed].sort();
  // The event must partition the entries exactly as the rule does: nothing referenced removed, nothing invented.
  if (claimed.length !== all.length || claimed.some((key, i) => key !== [...all].sort()[i])) return undefined;
  if (removed.some((key) => keeps.has(key)) || kept.some((key) => !keeps.has(key))) return undefined;
  const entries = state.entries.filter((entry) => keeps.has(entry.key));
  return { ...state, revision: event.data.revision, entries, total_bytes: totalBytes(entries), updated_at: at };
});

export const workingStateDecider: Decider<WorkingStateCommand, WorkingStateEvent, WorkingStateState> = Object.freeze({ initialState, decide, evolve });
