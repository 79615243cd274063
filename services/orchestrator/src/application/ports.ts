import type { EventDraft, EventEnvelope } from '@writ/contracts';
import type { ResolutionRefusal } from '@writ/runtime';
import type { CommandName } from './plan-task.js';

/** The task log as the orchestrator uses it (outbound: the event store). */
export interface TaskLog {
  /** The task's events in order (chain verified). */
  read(taskId: string): Promise<readonly EventEnvelope[]>;
  /**
   * The task's events at least through the one a consumer delivered (stored at `streamSeq`, with
   * `hash`): answered from what this process already read or wrote when that covers it, else `read`.
   * It may end before the log does; an append on it is guarded as any other.
   */
  readThrough(taskId: string, streamSeq: number, hash: string): Promise<readonly EventEnvelope[]>;
  /**
   * Appends `drafts` if the task's last `task_seq` is `expectedSeq`; a lost
   * race throws EVENTSTORE_CONFLICT. Returns how many the log already held.
   */
  append(taskId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<{ readonly duplicates: number }>;
}

export interface PublishedCommand {
  /** True when the bus already held a command with this msg id (JetStream dedupe). */
  readonly duplicate: boolean;
}

/** Where commands go (outbound: the bus, on the configured subjects). */
export interface CommandPublisher {
  publish(
    command: CommandName,
    payload: unknown,
    options: { readonly msgId: string; readonly causationId: string; readonly correlationId: string },
  ): Promise<PublishedCommand>;
}

/** The clock at the adapter edge; the kernel only ever sees its readings. */
export type Clock = () => Date;

/**
 * Which director decisions among a task's events fail their authority check
 * (`@writ/runtime`'s ResolutionAuthority over the principal registry): they resolve nothing.
 */
export interface ResolutionRefusals {
  refusals(events: readonly EventEnvelope[]): Promise<ReadonlyMap<string, ResolutionRefusal>>;
}

/** Where a stored pack's bytes are: the artifact store's answer. */
export interface StoredPack {
  readonly sha256: string;
  /** `nats-obj://<bucket>/sha256-<hex>`. */
  readonly uri: string;
  readonly byte_size: number;
}

/**
 * The content-addressed artifact store as the orchestrator uses it (outbound: the shared
 * NATS object bucket): the same bytes are stored once under their SHA-256, so storing a
 * pack again after a crash is a no-op.
 */
export interface ContextPackStore {
  put(bytes: Uint8Array): Promise<StoredPack>;
}
