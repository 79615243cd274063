import type { EventDraft, PolicyProfileRecord } from '@writ/contracts';
import type { KeySet } from '@writ/crypto';
import type { ParticipantRecord, ParticipantScope } from '@writ/kernel';
import type { PrincipalRecord, TaskAppendResult, TaskHistory } from '@writ/runtime';
import type { LoadedProfile } from './profile-documents.js';

/** The task log as policy uses it (outbound: `@writ/runtime`'s `EventStoreTaskLog`). */
export interface TaskLog {
  /** The task's events in order (chain verified), and the `task_seq` to append after. */
  read(taskId: string): Promise<TaskHistory>;
  /** Appends if the task's last `task_seq` is `expectedSeq`; a lost race throws EVENTSTORE_CONFLICT. */
  append(taskId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<TaskAppendResult>;
}

/** The clock at the adapter edge; the kernel only ever sees its readings. */
export type Clock = () => Date;

/** The profiles evaluation uses now (kept current from the bucket: hot reload). */
export interface ProfileLookup {
  get(profileId: string): LoadedProfile | undefined;
}

/** The latest `policy.profile_applied` of one profile in the log, and the sequence to append after. */
export interface ProfileHead {
  readonly seq: number;
  readonly record: PolicyProfileRecord | null;
}

/**
 * The log of profile changes: `<events>.policy.<profile_id>`, one
 * `policy.profile_applied` per applied version (outbound: the EventStore).
 * The log is the truth; the bucket is its current view.
 */
export interface ProfileLog {
  head(profileId: string): Promise<ProfileHead>;
  /** Appends if the profile's last sequence is `expectedSeq`; a lost race throws EVENTSTORE_CONFLICT. */
  append(profileId: string, draft: EventDraft, expectedSeq: number): Promise<void>;
  /** The latest record of every profile the log holds. */
  latestOfAll(): Promise<ReadonlyMap<string, PolicyProfileRecord>>;
}

/** One entry of the bucket: its raw value (not trusted) and the revision an update is guarded by. */
export interface StoredProfileEntry {
  readonly revision: number;
  readonly value: unknown;
}

/** The profile bucket (outbound: NATS KV): key = profile id, value = canonical JSON of a PolicyProfileRecord. */
export interface ProfileBucket {
  /** The current entry, or null when the key is absent or deleted. */
  get(profileId: string): Promise<StoredProfileEntry | null>;
  /**
   * Writes the record if the key is still at `revision` (null: still absent);
   * false when someone else wrote it first.
   */
  write(profileId: string, record: PolicyProfileRecord, revision: number | null): Promise<boolean>;
}

/** Principals and their keys, folded from the log (`@writ/runtime`'s PrincipalRegistry). */
export interface PrincipalDirectory {
  lookup(principalId: string): Promise<PrincipalRecord | undefined>;
  verificationKeys(principalId: string): Promise<KeySet>;
}

/** A participant (a spawned seed) as its stream `writ.evt.participant.<seed_id>` says at one sequence. */
export interface ParticipantSnapshot {
  readonly state: ParticipantRecord;
  /** `participantScope(state.manifest)`, prepared once per manifest. */
  readonly scope: ParticipantScope;
  /** The stream's last sequence this snapshot folds: the guard of a call record. */
  readonly seq: number;
  /** `<attempt_id>:<policy_entry>` of every call recorded (`participant.call_recorded`). */
  readonly callKeys: ReadonlySet<string>;
}

/**
 * Participants' scopes folded from the log (outbound: followed over the
 * participant subjects, checked against the stream's head on every use).
 */
export interface ParticipantScopes {
  /** The participant as its stream says now; undefined when the id names no participant (a principal's actions). */
  current(seedId: string): Promise<ParticipantSnapshot | undefined>;
  /** Appends if the stream's last sequence is `expectedSeq`; a lost race throws EVENTSTORE_CONFLICT. */
  append(seedId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<void>;
}
