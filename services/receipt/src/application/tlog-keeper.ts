import {
  ConsistencyProofReply,
  InclusionProofReply,
  SignedTreeHead,
  hasErrorCode,
  parseContract,
  type EventDraft,
  type EventEnvelope,
  type GetConsistencyProof,
  type GetInclusionProof,
  type TransparencyLogEntryAppended,
  type TransparencyLogReceiptRefused,
} from '@writ/contracts';
import { serviceDraft } from '@writ/runtime';
import type { Clock } from './ports.js';
import { TlogError } from './tlog-errors.js';
import type { StoredTlogEvent, TlogEventLog } from './tlog-ports.js';
import type { ReceiptRefusal } from './receipt-admission.js';
import { TLOG_EVENTS, TransparencyLog, receiptNotInLog, receiptRefused, type IssuedReceipt, type LastLeaf } from './transparency-log.js';
import { signTreeHead, type TreeHeadSigner } from './tree-head.js';

export interface TlogKeeperDeps {
  readonly log: TlogEventLog;
  readonly logId: string;
  /** The key that signs heads now: the one that signs receipts (a rotation switches both). */
  readonly signer: () => TreeHeadSigner;
  readonly clock: Clock;
  /** The receipt service principal: actor of the log's events. */
  readonly principalId: string;
  /** How long to wait for the follower to bring the memory up to the log's head (default 10 s). */
  readonly catchUpTimeoutMs?: number;
}

export type SequenceOutcome = 'appended' | 'already_sequenced';
/** What became of a `receipt.issued`: a leaf (now or before), or refused (now or before). */
export type ReceiptOutcome = SequenceOutcome | 'refused' | 'already_refused';

/** Appends lost to another writer in a row before an operation gives up (and is retried by its caller). */
const MAX_LOST_RACES = 64;
const DEFAULT_CATCH_UP_TIMEOUT_MS = 10_000;

interface Waiter {
  readonly seq: number;
  readonly resolve: () => void;
}

/**
 * The transparency log of one receipt service instance: the tree in memory,
 * kept equal to the log's stream, and every append to that stream.
 *
 * - `open` rebuilds the tree from the log alone and verifies it (leaf hashes,
 *   dense indices, one leaf per receipt, heads matching the tree); any break
 *   is a TLOG_* error and start-up refuses.
 * - `ingest` folds what the follower reads from the stream (appends of other
 *   instances, and this one's own, which it skips).
 * - `sequence`, `publishTreeHead` and the queries run one at a time. An append
 *   is guarded by the stream's sequence: when another instance got there first
 *   (EVENTSTORE_CONFLICT), or the event is already stored, the keeper waits
 *   until the follower has caught up with the stream's head and decides again.
 *   So the log has one writer at a time, a receipt is one leaf, and indices
 *   are dense whatever the number of instances.
 *
 * Once a corruption is found (start-up or later), the keeper refuses every
 * operation with TLOG_UNAVAILABLE naming it; a running log never serves a
 * proof from a tree it cannot vouch for.
 */
export class TlogKeeper {
  readonly #state: TransparencyLog;
  readonly #waiters = new Set<Waiter>();
  #lastHash: string | null = null;
  #streamSeq = 0;
  #failure: TlogError | undefined;
  #closed = false;
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(private readonly deps: TlogKeeperDeps) {
    this.#state = new TransparencyLog(deps.logId);
  }

  /** Rebuilds the log from its stream and verifies it; throws the TLOG_* code of the first break. */
  static async open(deps: TlogKeeperDeps): Promise<TlogKeeper> {
    const keeper = new TlogKeeper(deps);
    const stored = await deps.log.readAll();
    for (const { event } of stored) keeper.#fold(event);
    keeper.#streamSeq = stored.at(-1)?.streamSeq ?? 0;
    return keeper;
  }

  get logId(): string {
    return this.deps.logId;
  }

  /** The last event folded (its task_seq and hash): where the follower's chain goes on from. */
  get head(): { readonly taskSeq: number; readonly hash: string | null } {
    return { taskSeq: this.#state.seq, hash: this.#lastHash };
  }

  /** Stream sequence of the last event folded: the follower starts after it. */
  get streamSeq(): number {
    return this.#streamSeq;
  }

  /** Leaves in memory. */
  get size(): number {
    return this.#state.size;
  }

  get latestHead(): SignedTreeHead | undefined {
    return this.#state.latestHead;
  }

  /** Where the last leaf came from: the sequencer resumes after that `receipt.issued`. */
  get lastLeaf(): LastLeaf | undefined {
    return this.#state.lastLeaf;
  }

  /** `receipt.issued` events refused so far (`tlog.receipt_refused`). */
  get refusals(): number {
    return this.#state.refusals;
  }

  /** The corruption that stopped the log, if any. */
  get failure(): TlogError | undefined {
    return this.#failure;
  }

  /**
   * Folds one event the follower read from the stream, in stream order.
   * Events already folded (this instance's own appends) are skipped; a
   * break in the chain or a corrupt event stops the log (and is thrown).
   */
  ingest(stored: StoredTlogEvent): void {
    if (this.#failure !== undefined || this.#closed) return;
    const { event } = stored;
    if (event.task_seq <= this.#state.seq) {
      if (event.task_seq === this.#state.seq && event.hash !== this.#lastHash) {
        this.#fail(new TlogError('TLOG_CHAIN_BROKEN', `task_seq ${event.task_seq} of log ${this.logId} is stored with another hash than the one appended`, { details: { task_seq: event.task_seq } }));
      }
      return;
    }
    try {
      this.#fold(event);
    } catch (error) {
      this.#fail(error);
    }
    this.#streamSeq = Math.max(this.#streamSeq, stored.streamSeq);
  }

  /** Makes the receipt the next leaf unless it already is one. */
  sequence(receipt: IssuedReceipt): Promise<SequenceOutcome> {
    return this.#exclusive(async () => {
      for (let lost = 0; ; lost++) {
        this.#usable();
        const entry = this.#state.planEntry(receipt);
        if (entry === null) return 'already_sequenced';
        if (await this.#append(this.#entryDraft(entry))) return 'appended';
        this.#giveUpAfter(lost, `sequence receipt ${receipt.receipt_id}`);
      }
    });
  }

  /**
   * Records that a `receipt.issued` will never be a leaf, and why
   * (`tlog.receipt_refused`), unless that event is already recorded refused.
   * Appended like a leaf, guarded by the log's sequence, so every instance
   * records it once.
   */
  refuse(refusal: ReceiptRefusal): Promise<'refused' | 'already_refused'> {
    return this.#exclusive(async () => {
      for (let lost = 0; ; lost++) {
        this.#usable();
        const planned = this.#state.planRefusal(refusal);
        if (planned === null) return 'already_refused';
        if (await this.#append(this.#refusalDraft(planned))) return 'refused';
        this.#giveUpAfter(lost, `record the refusal of ${refusal.receipt_event_id}`);
      }
    });
  }

  /**
   * Signs and appends a tree head when the tree grew since the latest one
   * (`grown`: only if it has leaves; `current`: also the first head of an
   * empty log). Returns the latest head afterwards (undefined: none yet).
   */
  publishTreeHead(mode: 'grown' | 'current'): Promise<SignedTreeHead | undefined> {
    return this.#exclusive(() => this.#publishTreeHead(mode));
  }

  /** `writ.qry.receipt.tree-head`: the latest signed head, signing a fresh one first when the tree grew. */
  treeHead(): Promise<SignedTreeHead> {
    return this.#exclusive(async () => {
      await this.#catchUp();
      return this.#currentHead();
    });
  }

  /**
   * `writ.qry.receipt.inclusion-proof`: against the signed head of `tree_size`
   * (TLOG_TREE_HEAD_NOT_FOUND unless one was published at that size), by
   * default the current head. RECEIPT_NOT_IN_LOG while not yet sequenced.
   */
  inclusionProof(query: GetInclusionProof): Promise<InclusionProofReply> {
    return this.#exclusive(async () => {
      this.#usable();
      if (this.#state.leafIndexOf(query.receipt_id) === undefined) await this.#catchUp();
      // Checked before a head is signed: asking about an unknown or refused receipt publishes nothing.
      if (this.#state.leafIndexOf(query.receipt_id) === undefined) {
        const refusal = this.#state.refusalOf(query.receipt_id);
        throw refusal === undefined ? receiptNotInLog(this.logId, query.receipt_id, this.#state.size) : receiptRefused(this.logId, query.receipt_id, refusal);
      }
      const head = query.tree_size === undefined ? await this.#currentHead() : await this.#publishedHead(query.tree_size);
      const proof = this.#state.inclusionProof(query.receipt_id, head.tree_size);
      return parseContract('InclusionProofReply', InclusionProofReply, { proof, tree_head: head });
    });
  }

  /** `writ.qry.receipt.consistency-proof`: from `first_size` to the signed head of `second_size` (default: the current head). */
  consistencyProof(query: GetConsistencyProof): Promise<ConsistencyProofReply> {
    return this.#exclusive(async () => {
      this.#usable();
      let head: SignedTreeHead;
      if (query.second_size === undefined) {
        await this.#catchUp();
        head = await this.#currentHead();
      } else {
        head = await this.#publishedHead(query.second_size);
      }
      const proof = this.#state.consistencyProof(query.first_size, head.tree_size);
      return parseContract('ConsistencyProofReply', ConsistencyProofReply, { proof, tree_head: head });
    });
  }

  /** Stops: pending and later operations fail with TLOG_UNAVAILABLE. */
  close(): void {
    this.#closed = true;
    for (const waiter of this.#waiters) waiter.resolve();
    this.#waiters.clear();
  }

  async #publishTreeHead(mode: 'grown' | 'current'): Promise<SignedTreeHead | undefined> {
    for (let lost = 0; ; lost++) {
      this.#usable();
      if (mode === 'grown' && this.#state.size === 0) return this.#state.latestHead;
      const head = this.#state.planTreeHead(this.deps.clock().toISOString());
      if (head === null) return this.#state.latestHead;
      const signed = await signTreeHead(head, this.deps.signer());
      if (await this.#append(this.#treeHeadDraft(signed))) return this.#state.latestHead;
      this.#giveUpAfter(lost, 'publish a tree head');
    }
  }

  async #currentHead(): Promise<SignedTreeHead> {
    const head = await this.#publishTreeHead('current');
    // 'current' signs the first head of an empty log, so there always is one here.
    if (head === undefined) throw new TlogError('TLOG_UNAVAILABLE', `transparency log ${this.logId} has no tree head`);
    return head;
  }

  async #publishedHead(treeSize: number): Promise<SignedTreeHead> {
    let head = this.#state.headAt(treeSize);
    if (head === undefined) {
      await this.#catchUp();
      head = this.#state.headAt(treeSize);
    }
    if (head === undefined) {
      throw new TlogError('TLOG_TREE_HEAD_NOT_FOUND', `no signed tree head of size ${treeSize} was published in log ${this.logId}: ask without a size (the current head), or with the size of a head you hold`, {
        details: { log_id: this.logId, tree_size: treeSize, latest_size: this.#state.latestHead?.tree_size ?? null },
      });
    }
    return head;
  }

  /**
   * Appends one event at the log's current sequence. True when it was stored
   * now; false when another writer (or an earlier try) got there first: the
   * memory has then caught up and the caller decides again.
   */
  async #append(draft: EventDraft): Promise<boolean> {
    const expectedSeq = this.#state.seq;
    let result;
    try {
      result = await this.deps.log.append(draft, expectedSeq);
    } catch (error) {
      if (!hasErrorCode(error, 'EVENTSTORE_CONFLICT')) throw error;
      await this.#catchUp();
      return false;
    }
    if (result.duplicate) {
      await this.#catchUp();
      return false;
    }
    // The follower may have folded it already; otherwise fold it now, as stored.
    if (result.taskSeq > this.#state.seq) {
      this.#fold({ ...draft, task_id: this.logId, task_seq: result.taskSeq, prev_event_hash: this.#lastHash, hash: result.hash } as EventEnvelope);
    }
    this.#streamSeq = Math.max(this.#streamSeq, result.streamSeq);
    return true;
  }

  /** Waits until the memory holds every event the log's stream holds now. */
  async #catchUp(): Promise<void> {
    this.#usable();
    const head = await this.deps.log.headSeq();
    if (head <= this.#state.seq) return;
    const timeoutMs = this.deps.catchUpTimeoutMs ?? DEFAULT_CATCH_UP_TIMEOUT_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let waiter: Waiter | undefined;
    try {
      await new Promise<void>((resolve) => {
        waiter = { seq: head, resolve };
        this.#waiters.add(waiter);
        timer = setTimeout(resolve, timeoutMs);
      });
    } finally {
      clearTimeout(timer);
      if (waiter !== undefined) this.#waiters.delete(waiter);
    }
    this.#usable();
    if (this.#state.seq < head) {
      throw new TlogError('TLOG_UNAVAILABLE', `transparency log ${this.logId} did not catch up with its stream (at ${this.#state.seq} of ${head}) within ${timeoutMs} ms`, {
        details: { log_id: this.logId, seq: this.#state.seq, head },
      });
    }
  }

  #fold(event: EventEnvelope): void {
    if (event.prev_event_hash !== this.#lastHash) {
      throw new TlogError('TLOG_CHAIN_BROKEN', `event task_seq ${event.task_seq} of log ${this.logId} does not link to the event before it`, {
        details: { log_id: this.logId, task_seq: event.task_seq },
      });
    }
    this.#state.apply(event);
    this.#lastHash = event.hash;
    for (const waiter of this.#waiters) if (waiter.seq <= this.#state.seq) waiter.resolve();
  }

  #fail(error: unknown): never {
    const failure =
      error instanceof TlogError
        ? error
        : new TlogError('TLOG_CHAIN_BROKEN', `transparency log ${this.logId} could not be folded`, { cause: error, details: { log_id: this.logId } });
    this.#failure ??= failure;
    for (const waiter of this.#waiters) waiter.resolve();
    throw failure;
  }

  #usable(): void {
    if (this.#failure !== undefined) {
      throw new TlogError('TLOG_UNAVAILABLE', `transparency log ${this.logId} failed verification (${this.#failure.code}: ${this.#failure.message}); no proof is served from it`, {
        cause: this.#failure,
        details: { log_id: this.logId, failure: this.#failure.code },
      });
    }
    if (this.#closed) throw new TlogError('TLOG_UNAVAILABLE', `transparency log ${this.logId} is closing`, { details: { log_id: this.logId } });
  }

  #giveUpAfter(lost: number, what: string): void {
    if (lost + 1 >= MAX_LOST_RACES) {
      throw new TlogError('TLOG_UNAVAILABLE', `could not ${what}: ${MAX_LOST_RACES} appends in a row lost to other writers of log ${this.logId}`, {
        details: { log_id: this.logId },
      });
    }
  }

  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work, work);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  #entryDraft(entry: TransparencyLogEntryAppended): EventDraft {
    return serviceDraft({
      key: `${this.logId}:${entry.receipt_id}:${TLOG_EVENTS.entryAppended}`,
      eventType: TLOG_EVENTS.entryAppended,
      entityType: 'transparency_log',
      entityId: this.logId,
      occurredAt: this.deps.clock().toISOString(),
      actorId: this.deps.principalId,
      payload: entry,
      causationId: entry.receipt_event_id,
      correlationId: entry.task_id,
    });
  }

  #refusalDraft(refusal: TransparencyLogReceiptRefused): EventDraft {
    return serviceDraft({
      key: `${this.logId}:${TLOG_EVENTS.receiptRefused}:${refusal.receipt_event_id}`,
      eventType: TLOG_EVENTS.receiptRefused,
      entityType: 'transparency_log',
      entityId: this.logId,
      occurredAt: this.deps.clock().toISOString(),
      actorId: this.deps.principalId,
      payload: refusal,
      causationId: refusal.receipt_event_id,
      correlationId: refusal.task_id,
    });
  }

  #treeHeadDraft(head: SignedTreeHead): EventDraft {
    return serviceDraft({
      key: `${this.logId}:${TLOG_EVENTS.treeHeadSigned}:${head.tree_size}`,
      eventType: TLOG_EVENTS.treeHeadSigned,
      entityType: 'transparency_log',
      entityId: this.logId,
      occurredAt: head.timestamp,
      actorId: this.deps.principalId,
      payload: head,
      causationId: null,
      correlationId: this.logId,
    });
  }
}
