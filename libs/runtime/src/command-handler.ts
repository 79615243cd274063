import { hasErrorCode, type EventDraft } from '@writ/contracts';

/**
 * What a command decided from the stream as read: nothing to append (`done`: the answer is
 * already in the log, or the command changes nothing), or drafts to append after exactly the
 * version read, and what to answer once they are in.
 */
export type CommandDecision<R> =
  | { readonly kind: 'done'; readonly result: R }
  | { readonly kind: 'append'; readonly drafts: readonly EventDraft[]; readonly result: R };

/** The two decisions: `decision.done(result)`, `decision.append(drafts, result)`. */
export const decision = {
  done: <R>(result: R): CommandDecision<R> => ({ kind: 'done', result }),
  append: <R>(drafts: readonly EventDraft[], result: R): CommandDecision<R> => ({ kind: 'append', drafts, result }),
};

/** A stream as the handler reads it: whatever the decision folds, and the version to append after. */
export interface VersionedRead {
  /** The stream's version as read (`task_seq` of its last event, 0 when empty): the append's expected version. */
  readonly seq: number;
}

export interface CommandStream<H extends VersionedRead> {
  read(): Promise<H>;
  /** Appends after `expectedSeq`; throws EVENTSTORE_CONFLICT when another writer got there first. */
  append(drafts: readonly EventDraft[], expectedSeq: number): Promise<{ readonly duplicate: boolean }>;
}

/** A log of many streams keyed by task (every service's `TaskLog` port has this shape). */
export interface TaskStreams<H extends VersionedRead> {
  read(taskId: string): Promise<H>;
  append(taskId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<{ readonly duplicate: boolean }>;
}

/** A task's events as read, with the version to append after (`task_seq` of the last, 0 when empty). */
export function versioned<E extends { readonly task_seq: number }>(events: readonly E[]): { readonly events: readonly E[]; readonly seq: number } {
  return { events, seq: events.at(-1)?.task_seq ?? 0 };
}

/** One task's stream of `log`, as `handleCommand` reads and appends it. */
export function taskStream<H extends VersionedRead>(log: TaskStreams<H>, taskId: string): CommandStream<H> {
  return { read: () => log.read(taskId), append: (drafts, expectedSeq) => log.append(taskId, drafts, expectedSeq) };
}

export interface HandleCommandOptions<H extends VersionedRead, R> {
  readonly stream: CommandStream<H>;
  /** Decides from the stream as read; may read more (keys, buckets) and may throw the command's own refusals. */
  readonly decide: (history: H) => CommandDecision<R> | Promise<CommandDecision<R>>;
  /** The error to throw when the stream kept changing under every round (a retryable, coded error of the caller's). */
  readonly exhausted: () => Error;
  /** Rounds of read → decide → append before giving up (default 5). */
  readonly maxRounds?: number;
}

export const COMMAND_MAX_ROUNDS = 5;

/**
 * One command against one stream (Emmett's command handler is the model): read the stream, decide
 * from what it holds, append the decision guarded by the version read. Only a lost race is
 * retried: the append conflicted (EVENTSTORE_CONFLICT), or every draft was already in the log
 * (`duplicate`: another delivery of the same command landed between our read and our append, so
 * our view was stale and the next read answers from what landed). Anything the decision throws
 * goes to the caller at once. Past `maxRounds` the caller's `exhausted` error is thrown.
 */
export async function handleCommand<H extends VersionedRead, R>(options: HandleCommandOptions<H, R>): Promise<R> {
  const rounds = options.maxRounds ?? COMMAND_MAX_ROUNDS;
  for (let round = 1; round <= rounds; round += 1) {
    const history = await options.stream.read();
    const decided = await options.decide(history);
    if (decided.kind === 'done') return decided.result;
    try {
      const { duplicate } = await options.stream.append(decided.drafts, history.seq);
      if (!duplicate) return decided.result;
    } catch (error) {
      if (!hasErrorCode(error, 'EVENTSTORE_CONFLICT')) throw error;
    }
  }
  throw options.exhausted();
}
