import { setTimeout as delay } from 'node:timers/promises';
import { GrantConstraints, hasErrorCode, safeParseCapabilityGrantClaims, ExecutionCompleted, ExecutionStarted, LIMITS, type CapabilityGrantClaims, type EventDraft, type EventEnvelope, type MemoryWriteParams, type RollbackParams, type RunAction } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { grantDecider, type CellRole } from '@writ/kernel';
import type { Logger } from '@writ/telemetry';
import type { CellExecResult, CellUser, WorkspaceDiff, WorkspaceSnapshot } from '../outbound/cells/index.js';
import { diffSnapshots } from '../outbound/cells/index.js';
import { execLimits, planAction, requestedSecretHandles, useCapabilities, useResources, type ActionPlan } from './action-plan.js';
import { claimDraft, completionDraft, refusalDraft, releaseDraft, startedDraft, useIdFor, type DraftContext } from './event-drafts.js';
import {
  artifactRecord,
  changedFilesOf,
  contractEnvironment,
  diffDocument,
  EMPTY_SHA256,
  emptyCompletion,
  environmentDocument,
  fitCompletion,
  jsonBytes,
  MAX_CHANGED_FILES,
  type ArtifactInput,
} from './execution-record.js';
import { ExecutorError } from './executor-errors.js';
import { cellSecretHandles, grantStateFor, readGrantHistory, type ClaimRecord, type GrantHistory } from './grant-history.js';
import { verifyGrant, type ExecutorRefusalCode } from './grant-verification.js';
import { checkCellAccess } from './cell-areas.js';
import type { GitHead } from '../outbound/git-head.js';
import type { ArtifactStore, CellPort, CellSessions, IssuerKeys, MemoryLog, ProposerDirectory, TaskLog, UseJournal, UseRecords } from './ports.js';
import { performMemoryWrite } from './run-memory-write.js';
import { httpExchangeProblem, httpResponseDocument, parseHttpResponse, type HttpResponse } from './http-exchange.js';
import { findStarted, reconcileStep } from './reconcile-use.js';
import { describeDrift, preimageTargets, receiptMismatch, rollbackDrift, rollbackExec, type RollbackExec } from './rollback-run.js';
import { TaskSerializer } from './task-serializer.js';

export interface RunActionSettings {
  /** `execution.completed.executor_id`: this process. */
  readonly executorId: string;
  /** The host holding this executor's cells (named in its claims; absent: one host per executor id). */
  readonly hostId?: string;
  /** The executor service principal: actor of its events, producer of its artifacts. */
  readonly principalId: string;
  readonly grantIssuer: string;
  readonly grantAudience: string;
  readonly actionTimeoutMs: number;
  readonly outputCapBytes: number;
  /** How long past the in-cell kill the cell layer waits before it restarts the cell. */
  readonly hostGraceMs: number;
  readonly claimGraceMs: number;
  readonly claimPollMs: number;
  readonly artifactFileMaxBytes: number;
  readonly artifactFilesMax: number;
  /**
   * Largest file kept as a `file.preimage` before a write_local, delete_local or rollback changes it
   * (`WRIT_EXECUTOR_PREIMAGE_MAX_BYTES`); absent or 0: none are kept, and such changes name no rollback.
   */
  readonly preimageMaxBytes?: number;
  /** `WRIT_EXECUTOR_EXTRA_CA_FILE`'s certificates (PEM), handed to https network actions in the cell. */
  readonly extraCaPem?: string;
}

export interface RunActionDeps {
  readonly log: TaskLog;
  readonly keys: IssuerKeys;
  readonly cells: CellPort;
  readonly artifacts: ArtifactStore;
  /** The adapter's clock: the kernel gets its reading as `metadata.now`. */
  readonly clock: () => Date;
  /** Waits between reads of the log while another process holds a use (default: a timer). */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly logger?: Logger;
  /** Per-task serialization of cell work, shared with the close-cell handler (default: this handler's own). */
  readonly serializer?: TaskSerializer;
  /**
   * Crash safety (both or neither): the host journal of uses in flight, and the per-use
   * records of recorded execs. Without them an exec keeps no record and a claimed, never
   * completed use can only become unknown at its deadline.
   */
  readonly journal?: UseJournal;
  readonly records?: UseRecords;
  /**
   * The task's cell as a Lazarus cell: created, joined, revived before an action runs (cell
   * events on its own stream), and the seat whose role bounds a file action. Without it the
   * proposer acts as an `executor` seat of an unrecorded cell.
   */
  readonly cellSessions?: CellSessions;
  /**
   * Several hosts (application/cell-routing.ts): before a use is claimed, where the task's cell is.
   * Without it every action runs here (one host).
   */
  readonly routing?: RunRouting;
  /**
   * memory_write (issue 17): the memory records' streams and the proposers' registrations.
   * Without them a granted memory_write is recorded errored (EXECUTOR_ACTION_UNSUPPORTED).
   */
  readonly memory?: { readonly log: MemoryLog; readonly proposers: ProposerDirectory };
}

/** The router's part the handler needs (application/cell-routing.ts). */
export interface RunRouting {
  placeRun(command: RunAction, useId: string, hops: number): Promise<{ readonly kind: 'here' } | { readonly kind: 'forwarded'; readonly host_id: string }>;
}

/** How a delivery reached this executor. */
export interface DeliveryInfo {
  /** Forwards the command has taken between hosts (0: straight from its publisher). */
  readonly hops?: number;
}

/** What one delivery of a RunAction came to (for logs and tests; every outcome that matters is an event). */
export type RunActionOutcome =
  | { readonly status: 'refused'; readonly code: ExecutorRefusalCode }
  | { readonly status: 'executed'; readonly outcome: ExecutionCompleted['outcome']; readonly use_no: number; readonly duration_ms: number }
  | { readonly status: 'unknown-recorded'; readonly use_no: number }
  | { readonly status: 'already-done'; readonly reason: 'completed' | 'refused' }
  /** Another host holds the task's cell: the command was stored on that host's subject, nothing claimed here. */
  | { readonly status: 'forwarded'; readonly host_id: string };

type Decision =
  | { readonly kind: 'refuse'; readonly code: ExecutorRefusalCode; readonly message: string }
  | { readonly kind: 'claim'; readonly claims: CapabilityGrantClaims; readonly data: { readonly use_no: number } & Record<string, unknown> };

/** Lost append races one delivery absorbs by re-reading before it hands the conflict to the bus. */
const MAX_ROUNDS = 5;
/** Attempts to record a completion once the action ran (its result exists only in memory). */
const COMPLETION_ATTEMPTS = 20;

/**
 * `writ.cmd.executor.run`: load → verify → decide (kernel) → claim → run → record
 * (docs/governed-path.md step 5; DESIGN invariants 3, 5, 6, 7).
 *
 * 1. The task stream says whether this use (see `useIdFor`) is already settled:
 *    completed or refused → nothing to do; claimed but never completed → it is
 *    never run again: once the claim's deadline has passed, `execution.completed`
 *    with outcome `unknown` is recorded (Hermit 19.3, 19.4).
 * 2. The grant is verified by the executor itself (`verifyGrant`), then the
 *    kernel's grant decider decides the use (`checkGrantUse` with the uses
 *    folded from the log): `grant.refused`, or `grant.use_claimed` appended with
 *    the expected sequence read in 1 — the first claim wins; a lost race re-reads.
 * 3. Only then does anything happen in a cell; the outcome, with content-addressed
 *    artifacts and the attestation read back from Docker, is `execution.completed`.
 */
export class RunActionHandler {
  readonly #deps: RunActionDeps;
  readonly #settings: RunActionSettings;
  readonly #sleep: (ms: number) => Promise<void>;
  /**
   * Uses this process is working on, each with the work that settles it. A second delivery of
   * one of them waits for that work, then reads the log again: it resolves (and the bus acks
   * it) only once the use is recorded, or once it has settled the use itself.
   */
  readonly #inFlight = new Map<string, Promise<unknown>>();
  readonly #stopping = new AbortController();
  /** Per task, one action at a time in its cell (so each diff is its own), and no close under it. */
  readonly #serializer: TaskSerializer;

  constructor(deps: RunActionDeps, settings: RunActionSettings) {
    this.#deps = deps;
    this.#settings = settings;
    this.#serializer = deps.serializer ?? new TaskSerializer();
    this.#sleep = deps.sleep ?? ((ms) => delay(ms, undefined, { signal: this.#stopping.signal }).catch(() => undefined));
  }

  /**
   * The service is shutting down: a delivery waiting on another process's claim
   * stops waiting and hands its message back (EXECUTOR_NOT_READY, retried), so
   * the drain is not held up. Actions already running finish and are recorded.
   */
  stop(): void {
    this.#stopping.abort();
  }

  async handle(command: RunAction, delivery: DeliveryInfo = {}): Promise<RunActionOutcome> {
    const useId = useIdFor(command);
    // Never answered before the use is recorded: acked here, a delivery whose use the other work
    // then fails to settle (a crash of it, a failed append) would leave the use claimed forever.
    // The bus keeps this message ours (working()) while it waits.
    return this.#exclusive(useId, () => this.#handle(command, useId, delivery.hops ?? 0));
  }

  /**
   * Runs `work` as the only work of this process on `useId`: after whatever work on it is in
   * flight has ended (however it ended), so that `work` starts from a fresh read of the log.
   */
  async #exclusive<T>(useId: string, work: () => Promise<T>): Promise<T> {
    for (let earlier = this.#inFlight.get(useId); earlier !== undefined; earlier = this.#inFlight.get(useId)) {
      await earlier.catch(() => undefined);
    }
    const running = work();
    this.#inFlight.set(useId, running);
    try {
      return await running;
    } finally {
      if (this.#inFlight.get(useId) === running) this.#inFlight.delete(useId);
    }
  }

  async #handle(command: RunAction, useId: string, hops: number): Promise<RunActionOutcome> {
    for (let round = 1; ; round += 1) {
      const history = readGrantHistory(await this.#deps.log.read(command.task_id), command.grant_id, useId);
      if (history.completion !== undefined) return { status: 'already-done', reason: 'completed' };
      if (history.refusal !== undefined) return { status: 'already-done', reason: 'refused' };
      if (history.claim !== undefined) return this.#settleClaim(command, useId, history.claim);

      const now = this.#deps.clock();
      const decision = await this.#decide(command, useId, history, now);
      const context = this.#context(now);
      try {
        if (decision.kind === 'refuse') {
          const data = { use_id: useId, code: decision.code, message: decision.message, at: now.toISOString() };
          await this.#deps.log.append(command.task_id, [refusalDraft(command, useId, data, context)], history.head);
          this.#deps.logger?.info({ task_id: command.task_id, grant_id: command.grant_id, use_id: useId, code: decision.code }, 'grant use refused');
          return { status: 'refused', code: decision.code };
        }
        const plan = planAction(command.action_request, execLimits(command.action_request, decision.claims, this.#settings));
        // Before the claim, and only for what runs in the cell: the use is claimed (and run) by the host
        // holding the task's cell, so the claim keeps guaranteeing at most one run wherever it lands.
        if (plan.kind === 'run' && this.#deps.routing !== undefined) {
          const placed = await this.#deps.routing.placeRun(command, useId, hops);
          if (placed.kind === 'forwarded') return { status: 'forwarded', host_id: placed.host_id };
        }
        // Before the claim: a missing image or an unreachable Docker is retried by the bus, not recorded.
        if (plan.kind === 'run') await this.#deps.cells.ensureImage();
        // Journaled on this host before the claim: a crash after it leaves something to reconcile.
        if (plan.kind === 'run') await this.#deps.journal?.write(useId, command);
        // Named in the claim: after a crash, this executor (same id, same host) can prove the use never started here.
        const host = this.#settings.hostId === undefined ? {} : { host_id: this.#settings.hostId };
        const claimData = { ...decision.data, executor_id: this.#settings.executorId, ...host };
        const claimed = await this.#deps.log.append(command.task_id, [claimDraft(command, useId, claimData, context)], history.head);
        // The log already held this very claim: another delivery got there first; the next round settles it.
        if (claimed.duplicate) continue;
        const claim: ClaimRecord = { use_id: useId, use_no: decision.data.use_no, at: now.toISOString(), event_id: `${useId}-claimed`, executor_id: this.#settings.executorId, ...host };
        return await this.#runClaimed(command, useId, claim, plan, claimed.head);
      } catch (error) {
        // Someone appended to the task since our read: re-read and decide again.
        if (hasErrorCode(error, 'EVENTSTORE_CONFLICT') && round < MAX_ROUNDS) continue;
        throw error;
      }
    }
  }

  /** Verify the grant, then let the kernel decide the use against the uses the log holds. */
  async #decide(command: RunAction, useId: string, history: GrantHistory, now: Date): Promise<Decision> {
    const keys = await this.#deps.keys.verificationKeys(this.#settings.grantIssuer);
    const verification = await verifyGrant({
      jws: command.grant_jws,
      grantId: command.grant_id,
      stepId: command.step_id,
      params: command.action_request.params,
      keys,
      issuer: this.#settings.grantIssuer,
      audience: this.#settings.grantAudience,
      now,
      ...(history.recorded === undefined ? {} : { recorded: history.recorded }),
    });
    if (!verification.ok) return { kind: 'refuse', code: verification.code, message: verification.message };
    // A signature is only as good as the key's registration: it must chain to the trust anchor.
    const unauthorized = await this.#deps.keys.unauthorized(this.#settings.grantIssuer, verification.kid);
    if (unauthorized !== undefined) {
      return { kind: 'refuse', code: 'GRANT_ISSUER_UNAUTHORIZED', message: `grant ${command.grant_id} is signed by key ${verification.kid} of ${this.#settings.grantIssuer}, whose registration is not authorized: ${unauthorized}`.slice(0, 4_096) };
    }

    const request = command.action_request;
    const events = grantDecider.decide(
      {
        type: 'claim-grant-use',
        data: {
          use_id: useId,
          use: { task_id: command.task_id, attempt_id: command.attempt_id, action_class: request.action_class, resources: useResources(request), ...useCapabilities(request) },
        },
        metadata: { now: now.toISOString() },
      },
      grantStateFor(history, verification.claims),
    );
    const event = events[0];
    if (event?.type === 'grant.refused') return { kind: 'refuse', code: event.data.code, message: event.data.message };
    if (event?.type === 'grant.use_claimed') return { kind: 'claim', claims: verification.claims, data: event.data };
    throw new ExecutorError('EXECUTOR_INTERNAL', `the grant decider answered claim-grant-use with ${event?.type ?? 'nothing'} for an unclaimed use`, {
      details: { grant_id: command.grant_id, use_id: useId },
    });
  }

  /** The use is ours: run it, whatever happens record how it ended. */
  async #runClaimed(command: RunAction, useId: string, claim: ClaimRecord, plan: ActionPlan, head: number): Promise<RunActionOutcome> {
    this.#deps.logger?.debug({ task_id: command.task_id, grant_id: command.grant_id, use_id: useId, use_no: claim.use_no }, 'grant use claimed; running');
    const payload = plan.kind === 'memory' ? await this.#writeMemory(command, useId, claim, plan.memory) : await this.#serialized(command.task_id, () => this.#execute(command, useId, claim, plan));
    await this.#recordCompletion(command, useId, claim, payload, undefined, payload.outcome === 'not_run' ? payload.error : undefined);
    await this.#forget(command.task_id, useId);
    void head;
    return { status: 'executed', outcome: payload.outcome, use_no: claim.use_no, duration_ms: payload.duration_ms };
  }

  /** Runs `work` after every earlier run (or close) of this process in the task's cell. */
  #serialized<T>(taskId: string, work: () => Promise<T>): Promise<T> {
    return this.#serializer.run(taskId, work);
  }

  /**
   * A claim of this use exists and no completion. If this process were running it,
   * `handle` would not be here; another process may still be, until the use's
   * deadline (its timeout, the cell's host grace, and the claim grace after the
   * claim). Until then the log is re-read; after it, the outcome is recorded as
   * unknown. The action is never run again.
   */
  async #settleClaim(command: RunAction, useId: string, claim: ClaimRecord, journaled = false): Promise<RunActionOutcome> {
    if (command.action_request.action_class === 'memory_write') return this.#settleMemoryWrite(command, useId, claim);
    const claimedAt = Date.parse(claim.at);
    let deadline = (Number.isFinite(claimedAt) ? claimedAt : 0) + this.#useWindowMs(command);
    let reason = 'claimed and never recorded as completed';
    let pgid: number | undefined;
    for (;;) {
      const stream = await this.#deps.log.read(command.task_id);
      if (readGrantHistory(stream, command.grant_id, useId).completion !== undefined) {
        await this.#forget(command.task_id, useId);
        return { status: 'already-done', reason: 'completed' };
      }
      const now = this.#deps.clock();
      if (this.#deps.records !== undefined) {
        const started = findStarted(stream, useId);
        // Claimed by this executor id on this host: a duplicated WRIT_EXECUTOR_ID on another host is not "us".
        const ours = claim.executor_id === this.#settings.executorId && (claim.host_id === undefined || this.#settings.hostId === undefined || claim.host_id === this.#settings.hostId);
        // The record is ours to read when this executor journaled the use, claimed it, or made the exec (same id, same host).
        const hostsCell = await this.#deps.records.hostsCell(command.task_id);
        const local = (journaled || ours || started?.data.executor_id === this.#settings.executorId) && hostsCell;
        // Claimed by this executor (an earlier run of it: this process is not running it), and no cell
        // here: nothing was started, since an exec is only ever made in the task's cell on the claimer's host.
        if (ours && !hostsCell && started === undefined) {
          return this.#recordReconciled(command, useId, claim, { kind: 'not-run', how: 'its claimer stopped before the task cell existed on its host' }, undefined);
        }
        if (started !== undefined) {
          const journaledDeadline = Date.parse(started.data.deadline) + this.#settings.claimPollMs;
          if (Number.isFinite(journaledDeadline)) deadline = Math.min(deadline, journaledDeadline);
        }
        const record = local ? await this.#deps.records.read(command.task_id, useId, this.#settings.outputCapBytes) : undefined;
        pgid = record?.pgid ?? pgid;
        const step = reconcileStep({ record, local, now: now.getTime(), deadline });
        const fenced = { kind: 'not-run', how: 'it was fenced before its process started, so it never runs' } as const;
        if (step.kind === 'fence' && (await this.#deps.records.fence(command.task_id, useId))) return this.#recordReconciled(command, useId, claim, fenced, started?.data.started_at);
        if (step.kind === 'not-run') return this.#recordReconciled(command, useId, claim, fenced, started?.data.started_at);
        if (step.kind === 'from-record') return this.#recordReconciled(command, useId, claim, step, started?.data.started_at);
        if (step.kind === 'unknown') reason = step.reason;
        if (step.kind === 'fence') continue; // the wrapper's run/ was there first: it started; read again
      }
      if (now.getTime() >= deadline) break;
      if (this.#stopping.signal.aborted) {
        throw new ExecutorError('EXECUTOR_NOT_READY', `shutting down while use ${claim.use_no} of grant ${command.grant_id} may still run elsewhere; handed back`, {
          details: { grant_id: command.grant_id, use_no: claim.use_no },
        });
      }
      await this.#sleep(Math.max(1, Math.min(this.#settings.claimPollMs, deadline - now.getTime())));
    }
    // Past its deadline and still without an exit status: stop what may be left of it, never run it again.
    if (pgid !== undefined) await this.#deps.records?.killGroup(command.task_id, pgid, useId);
    const now = this.#deps.clock();
    const payload = emptyCompletion(this.#completionBase(command, claim, now), {
      outcome: 'unknown',
      error: {
        code: 'EXECUTOR_OUTCOME_UNKNOWN',
        message: `use ${claim.use_no} of grant ${command.grant_id} was claimed at ${claim.at}: ${reason}; it is not run again`,
      },
    });
    this.#deps.logger?.warn({ task_id: command.task_id, grant_id: command.grant_id, use_id: useId, use_no: claim.use_no }, 'claimed use never completed: outcome unknown');
    const recorded = await this.#recordCompletion(command, useId, claim, payload, undefined);
    await this.#forget(command.task_id, useId);
    return recorded ? { status: 'unknown-recorded', use_no: claim.use_no } : { status: 'already-done', reason: 'completed' };
  }

  /**
   * A memory_write claimed and never completed: its effect is an append keyed by the use, so it
   * is performed now, by whoever settles it — the append already made is found and reported,
   * a missing one is made — and never waits for a deadline nor turns unknown. Done once, and
   * the completion says which memory event it was.
   */
  async #settleMemoryWrite(command: RunAction, useId: string, claim: ClaimRecord): Promise<RunActionOutcome> {
    const plan = planAction(command.action_request, { timeoutMs: this.#settings.actionTimeoutMs, maxOutputBytes: this.#settings.outputCapBytes });
    const payload =
      plan.kind === 'memory'
        ? await this.#writeMemory(command, useId, claim, plan.memory)
        : emptyCompletion(this.#completionBase(command, claim, this.#deps.clock()), { outcome: 'errored', error: { code: plan.kind === 'cannot-run' ? plan.code : 'EXECUTOR_INTERNAL', message: 'the memory_write could not be planned; nothing was written' } });
    const recorded = await this.#recordCompletion(command, useId, claim, payload, undefined);
    return recorded ? { status: 'executed', outcome: payload.outcome, use_no: claim.use_no, duration_ms: payload.duration_ms } : { status: 'already-done', reason: 'completed' };
  }

  /** Performs a claimed memory_write (run-memory-write.ts) and builds its `execution.completed`; a kernel refusal is `errored` with its code: nothing was written. */
  async #writeMemory(command: RunAction, useId: string, claim: ClaimRecord, params: MemoryWriteParams): Promise<ExecutionCompleted> {
    const started = performance.now();
    const completion = (fields: Partial<ExecutionCompleted> & Pick<ExecutionCompleted, 'outcome'>) =>
      emptyCompletion(this.#completionBase(command, claim, this.#deps.clock()), { duration_ms: elapsed(started), ...fields });
    const memory = this.#deps.memory;
    if (memory === undefined) return completion({ outcome: 'errored', error: { code: 'EXECUTOR_ACTION_UNSUPPORTED', message: 'this executor has no memory log: memory_write is not performed here' } });
    const result = await performMemoryWrite({ log: this.#deps.log, memory: memory.log, proposers: memory.proposers }, command, useId, claim.event_id, params, this.#context(this.#deps.clock()));
    if (result.kind === 'refused') return completion({ outcome: 'errored', error: { code: result.code.slice(0, 64), message: result.message.slice(0, 2_000) } });
    this.#deps.logger?.info({ task_id: command.task_id, use_id: useId, memory_id: result.memory.memory_id, outcome: result.memory.outcome }, 'memory write performed');
    return completion({ outcome: 'completed', exit_code: 0, memory: result.memory });
  }

  /**
   * Journal reconciliation, at start and then on the journal sweep: every use this executor
   * journaled on this host and left behind (a crash, kill -9, a delivery that failed past the
   * bus's retries) is settled — from its record, as not run, awaited to its deadline, or
   * unknown. Uses never claimed are dropped from the journal (a redelivery decides them). A
   * use some work of this process is on is left to that work (which records it, or leaves
   * it to the next sweep); the others run like a delivery would, under the same guard.
   */
  async reconcileJournal(): Promise<{ readonly settled: number }> {
    const entries = (await this.#deps.journal?.list()) ?? [];
    let settled = 0;
    await Promise.all(
      entries.map(async ({ useId, command }) => {
        if (this.#inFlight.has(useId)) return;
        try {
          await this.#exclusive(useId, async () => {
            const history = readGrantHistory(await this.#deps.log.read(command.task_id), command.grant_id, useId);
            if (history.claim === undefined || history.completion !== undefined) {
              await this.#forget(command.task_id, useId);
              return;
            }
            await this.#settleClaim(command, useId, history.claim, true);
            settled += 1;
          });
        } catch (error) {
          this.#deps.logger?.error({ err: error, use_id: useId, task_id: command.task_id }, 'reconciliation of a journaled use failed; a redelivery or the next start retries it');
        }
      }),
    );
    return { settled };
  }

  /** `execution.completed` of a use reconciled from its record (or fenced before it ran). */
  async #recordReconciled(
    command: RunAction,
    useId: string,
    claim: ClaimRecord,
    step: { readonly kind: 'not-run'; readonly how: string } | Extract<ReturnType<typeof reconcileStep>, { kind: 'from-record' }>,
    startedAt: string | undefined,
  ): Promise<RunActionOutcome> {
    const now = this.#deps.clock();
    const base = this.#completionBase(command, claim, now);
    let payload: ExecutionCompleted;
    let released: { readonly code: string; readonly message: string } | undefined;
    if (step.kind === 'not-run') {
      // Not a result of the action: nothing ran. The use is given back to the grant in the same
      // append, and the attempt goes on with a new use (the orchestrator's next run).
      released = {
        code: 'CELL_USE_FENCED',
        message: `use ${claim.use_no} of grant ${command.grant_id} never started: ${step.how}; it was released, and the action goes on with a new use`,
      };
      payload = emptyCompletion(base, { outcome: 'not_run', error: released });
    } else {
      const { record } = step;
      // Secret values are redacted only on the live path (the cell port resolves them): a
      // reconciled use that asked for secrets, or of a cell that held some, keeps no output artifacts, only the exit status.
      const keepOutput = requestedSecretHandles(command.action_request.params).length === 0 && cellSecretHandles(await this.#deps.log.read(command.task_id)).length === 0;
      const inputs: ArtifactInput[] = keepOutput
        ? [
            { role: 'stdout', bytes: record.stdout, class: 'evidence', kind: 'command.transcript', media_type: 'application/octet-stream', alias: 'stdout' },
            { role: 'stderr', bytes: record.stderr, class: 'evidence', kind: 'command.transcript', media_type: 'application/octet-stream', alias: 'stderr' },
          ]
        : [];
      if (keepOutput) inputs.push(...(await this.#reconciledEvidence(command, record)));
      const environment = await this.#deps.cells.environment(command.task_id).catch(() => undefined);
      if (environment !== undefined) {
        inputs.push({ role: 'environment', bytes: jsonBytes(environmentDocument(environment)), class: 'evidence', kind: 'environment.snapshot', media_type: 'application/json', alias: 'environment' });
      }
      const stored = await this.#store(inputs, { useId, producer: this.#settings.principalId, taskId: command.task_id, stepId: command.step_id, attemptId: command.attempt_id, now: now.toISOString() });
      const started = startedAt === undefined ? Number.NaN : Date.parse(startedAt);
      payload = emptyCompletion(base, {
        outcome: 'completed',
        exit_code: record.exit_code,
        timed_out: record.timed_out,
        duration_ms: Number.isFinite(started) ? Math.max(0, now.getTime() - started) : 0,
        stdout_sha256: stored.hashes.get('stdout') ?? EMPTY_SHA256,
        stderr_sha256: stored.hashes.get('stderr') ?? EMPTY_SHA256,
        artifacts: stored.artifacts,
        environment: environment === undefined ? null : contractEnvironment(environment),
        error: stored.error ?? {
          code: 'EXECUTOR_DIFF_UNAVAILABLE',
          message: 'reconciled from the use record after the executor restarted: exit status and output are the record\'s; the workspace diff was not taken (duration is an upper bound)',
        },
      });
    }
    this.#deps.logger?.warn({ task_id: command.task_id, use_id: useId, outcome: payload.outcome, exit_code: payload.exit_code }, 'claimed use reconciled');
    const recorded = await this.#recordCompletion(command, useId, claim, payload, undefined, released);
    await this.#forget(command.task_id, useId);
    return recorded ? { status: 'executed', outcome: payload.outcome, use_no: claim.use_no, duration_ms: payload.duration_ms } : { status: 'already-done', reason: 'completed' };
  }

  /**
   * What a live run would also have kept, rebuilt after a restart from the use record and
   * the cell as it is now: a network action's response (its stdout is the relayed
   * response), a vcs_mutation's HEAD after (before is `null`: nobody read it before the
   * crash, and it is not guessed). The plan is made again from the grant the claim was
   * verified against: the same request gives the same plan.
   */
  async #reconciledEvidence(command: RunAction, record: { readonly stdout: Buffer; readonly stdout_rest: number | undefined }): Promise<ArtifactInput[]> {
    const claims = claimsOfClaimedGrant(command.grant_jws);
    if (claims === undefined) return [];
    const plan = planAction(command.action_request, execLimits(command.action_request, claims, this.#settings));
    if (plan.kind !== 'run') return [];
    const inputs: ArtifactInput[] = [];
    if (plan.vcsRepo !== undefined && this.#deps.cells.gitHead !== undefined) {
      const headAfter = await this.#deps.cells.gitHead(command.task_id, plan.vcsRepo).catch(() => undefined);
      const document = { format: 'writ.vcs-head/1', repo: plan.vcsRepo, before: null, after: headAfter ?? null };
      inputs.push({ role: 'vcs.head', bytes: jsonBytes(document), class: 'evidence', kind: 'vcs.head', media_type: 'application/json', alias: 'vcs.head' });
    }
    if (plan.http !== undefined) {
      const response = parseHttpResponse(record.stdout, (record.stdout_rest ?? 0) > 0);
      if (response !== undefined) {
        const bodySha256 = sha256Hex(response.body);
        inputs.push({ role: 'http.body', bytes: response.body, class: 'evidence', kind: 'http.body', media_type: 'application/octet-stream', alias: 'http.body' });
        inputs.push({ role: 'http.response', bytes: jsonBytes(httpResponseDocument(plan.http, response, bodySha256)), class: 'evidence', kind: 'http.response', media_type: 'application/json', alias: 'http.response' });
      }
    }
    return inputs;
  }

  /** The exec exists and has not started: journal it in the log (explainable after the fact). */
  async #journalStarted(command: RunAction, useId: string, claim: ClaimRecord, plan: ActionPlan, exec: { readonly container_id: string; readonly exec_id: string }): Promise<void> {
    if (plan.kind !== 'run') return;
    const now = this.#deps.clock();
    const data = ExecutionStarted.parse({
      use_id: useId,
      grant_id: command.grant_id,
      use_no: claim.use_no,
      executor_id: this.#settings.executorId,
      container_id: exec.container_id,
      exec_id: exec.exec_id,
      started_at: now.toISOString(),
      deadline: new Date(now.getTime() + plan.timeoutMs + this.#settings.hostGraceMs).toISOString(),
    });
    const draft = startedDraft(command, useId, claim.event_id, data, this.#context(now));
    for (let attempt = 1; ; attempt += 1) {
      const stream = await this.#deps.log.read(command.task_id);
      if (findStarted(stream, useId) !== undefined) return;
      try {
        await this.#deps.log.append(command.task_id, [draft], stream.at(-1)?.task_seq ?? 0);
        return;
      } catch (error) {
        if (!hasErrorCode(error, 'EVENTSTORE_CONFLICT') || attempt >= COMPLETION_ATTEMPTS) throw error;
      }
    }
  }

  /** The use is settled in the log: its host journal entry and record go. */
  async #forget(taskId: string, useId: string): Promise<void> {
    await this.#deps.journal?.remove(useId).catch(() => undefined);
    await this.#deps.records?.remove(taskId, useId).catch(() => undefined);
  }

  /** How long after its claim a use may still be running somewhere: its timeout, the host grace, the claim grace. */
  /** Who completed which use, and when: the fields every `execution.completed` of this executor starts from. */
  #completionBase(command: RunAction, claim: ClaimRecord, now: Date): Pick<ExecutionCompleted, 'grant_id' | 'use_no' | 'executor_id' | 'at'> {
    return { grant_id: command.grant_id, use_no: claim.use_no, executor_id: this.#settings.executorId, at: now.toISOString() };
  }

  #useWindowMs(command: RunAction): number {
    const constraints = GrantConstraints.safeParse(unverifiedClaims(command.grant_jws)?.['constraints']);
    const granted = constraints.success ? constraints.data?.timeout_ms : undefined;
    return (granted ?? this.#settings.actionTimeoutMs) + this.#settings.hostGraceMs + this.#settings.claimGraceMs;
  }

  /** Runs the plan in the task's cell and builds `execution.completed`; never throws for a failure of the action or the cell. */
  async #execute(command: RunAction, useId: string, claim: ClaimRecord, plan: ActionPlan): Promise<ExecutionCompleted> {
    const taskId = command.task_id;
    const started = performance.now();
    const outcome = (fields: Partial<ExecutionCompleted> & Pick<ExecutionCompleted, 'outcome'>): ExecutionCompleted =>
      emptyCompletion(this.#completionBase(command, claim, this.#deps.clock()), fields);
    const errored = (error: unknown, extra: Partial<ExecutionCompleted> = {}) => outcome({ outcome: 'errored', error: errorOf(error), ...extra });
    // Before the exec, an outage (the log, Docker, a timeout) says nothing about the action: the use is
    // released and the action goes on with a new one (chaos run, issue 13: "errored" here failed the
    // action and its receipt said it did not complete, for a command that never started).
    const notStarted = (error: unknown) => (unavailable(error) ? outcome({ outcome: 'not_run', error: errorOf(error), duration_ms: elapsed(started) }) : errored(error));

    if (plan.kind === 'cannot-run') return outcome({ outcome: 'errored', error: { code: plan.code, message: plan.message.slice(0, 2_000) } });
    if (plan.kind === 'memory') return outcome({ outcome: 'errored', error: { code: 'EXECUTOR_INTERNAL', message: 'a memory_write runs in no cell' } });

    // Nothing has run yet: a failure up to the exec is "errored" (known not to have happened).
    const proposer = command.action_request.proposed_by;
    let seat: { readonly participant_id: string; readonly role: CellRole; readonly user?: CellUser } = { participant_id: proposer, role: 'executor' };
    try {
      if (this.#deps.cellSessions !== undefined) seat = await this.#deps.cellSessions.prepareForAction(taskId, proposer);
    } catch (error) {
      return notStarted(error);
    }
    // The seat's role bounds what a file action may touch (its own home, the shared area, the project), before any side effect.
    const accesses: [string, 'read' | 'write'][] = [];
    if (plan.filePath !== undefined && plan.fileAccess !== undefined) accesses.push([plan.filePath, plan.fileAccess]);
    for (const step of plan.rollback?.steps ?? []) accesses.push([step.path, 'write']);
    for (const [path, access] of accesses) {
      const check = checkCellAccess(path, access, seat);
      if (!check.ok) return outcome({ outcome: 'errored', error: { code: check.code, message: check.message.slice(0, 2_000) } });
    }
    let before: WorkspaceSnapshot;
    let headBefore: GitHead | undefined;
    let run: RollbackExec = { argv: plan.argv, stdin: plan.stdin ?? new Uint8Array() };
    let preimages: ArtifactInput[];
    try {
      await this.#deps.cells.openCell(taskId);
      // Before anything is read back from the workspace (pre-images, then outputs and changed files): the
      // secrets earlier uses may have left in it are redacted from this use's captures too (invariant 6).
      if (this.#deps.cells.holdSecrets !== undefined) await this.#deps.cells.holdSecrets(taskId, cellSecretHandles(await this.#deps.log.read(taskId)));
      for (const [path] of accesses) await this.#deps.cells.assertPlainPath(taskId, path);
      before = await this.#deps.cells.snapshotWorkspace(taskId);
      if (plan.vcsRepo !== undefined) headBefore = await this.#deps.cells.gitHead?.(taskId, plan.vcsRepo);
      if (plan.rollback !== undefined) {
        const prepared = await this.#prepareRollback(command, useId, plan.rollback, before);
        if ('code' in prepared) return outcome({ outcome: 'errored', error: { code: prepared.code, message: prepared.message.slice(0, 2_000) }, duration_ms: elapsed(started) });
        run = prepared;
      }
      // What the action is about to change, read before it runs: the pre-images its rollback writes back.
      preimages = await this.#preimageInputs(taskId, plan, before);
    } catch (error) {
      return notStarted(error);
    }

    let result: CellExecResult | undefined;
    let execError: unknown;
    try {
      result = await this.#deps.cells.exec(taskId, {
        argv: run.argv,
        ...(plan.cwd === undefined ? {} : { cwd: plan.cwd }),
        ...(plan.stdin === undefined && run.stdin.byteLength === 0 ? {} : { stdin: run.stdin }),
        timeoutMs: plan.timeoutMs,
        maxOutputBytes: plan.maxOutputBytes,
        // As the seat's own uid: its home and processes are out of every other seat's reach.
        ...(seat.user === undefined ? {} : { user: seat.user }),
        ...(this.#deps.records === undefined ? {} : { record: { useId, onCreated: (exec) => this.#journalStarted(command, useId, claim, plan, exec) } }),
        // Checked against the grant by the kernel before the claim; resolved and redacted by the cell port.
        secretHandles: requestedSecretHandles(command.action_request.params),
        // The grant names hosts: the cell port runs this exec on an egress-only network (else network none).
        ...(plan.egressHosts === undefined ? {} : { egressHosts: plan.egressHosts }),
      });
    } catch (error) {
      // Fenced by a reconciler before it started: never ran, never will; the reconciler records the same `not_run`.
      if (hasErrorCode(error, 'CELL_USE_FENCED')) return outcome({ outcome: 'not_run', error: errorOf(error), duration_ms: elapsed(started) });
      if (hasErrorCode(error, ...NOT_STARTED)) return errored(error, { duration_ms: elapsed(started) });
      execError = error;
    }

    // The action ran (or may have): read the workspace back, whatever happened.
    let diff: WorkspaceDiff | undefined;
    let diffError: unknown;
    try {
      diff = diffSnapshots(before, await this.#deps.cells.snapshotWorkspace(taskId));
    } catch (error) {
      diffError = error;
    }
    const environment = await this.#deps.cells.environment(taskId).catch(() => undefined);

    const now = this.#deps.clock().toISOString();
    const stdout = result?.stdout ?? Buffer.alloc(0);
    const stderr = result?.stderr ?? Buffer.alloc(0);
    const inputs: ArtifactInput[] = [];
    if (result !== undefined) {
      inputs.push({ role: 'stdout', bytes: stdout, class: 'evidence', kind: 'command.transcript', media_type: 'application/octet-stream', alias: 'stdout' });
      inputs.push({ role: 'stderr', bytes: stderr, class: 'evidence', kind: 'command.transcript', media_type: 'application/octet-stream', alias: 'stderr' });
    }
    // A vcs_mutation: HEAD of its repository before and after, as the repository's own files say.
    if (plan.vcsRepo !== undefined && this.#deps.cells.gitHead !== undefined) {
      const headAfter = await this.#deps.cells.gitHead(taskId, plan.vcsRepo).catch(() => undefined);
      const document = { format: 'writ.vcs-head/1', repo: plan.vcsRepo, before: headBefore ?? null, after: headAfter ?? null };
      inputs.push({ role: 'vcs.head', bytes: jsonBytes(document), class: 'evidence', kind: 'vcs.head', media_type: 'application/json', alias: 'vcs.head' });
    }
    // A network action: its stdout is the response the proxy relayed; status, headers and body are kept on their own.
    let response: HttpResponse | undefined;
    if (result !== undefined && plan.http !== undefined) {
      response = parseHttpResponse(stdout, result.stdout_truncated);
      if (response !== undefined) {
        const bodySha256 = sha256Hex(response.body);
        inputs.push({ role: 'http.body', bytes: response.body, class: 'evidence', kind: 'http.body', media_type: 'application/octet-stream', alias: 'http.body' });
        inputs.push({ role: 'http.response', bytes: jsonBytes(httpResponseDocument(plan.http, response, bodySha256)), class: 'evidence', kind: 'http.response', media_type: 'application/json', alias: 'http.response' });
      }
    }
    if (diff !== undefined) {
      inputs.push({ role: 'diff', bytes: jsonBytes(diffDocument(diff)), class: 'evidence', kind: 'diff', media_type: 'application/json', alias: 'workspace.diff' });
    }
    if (environment !== undefined) {
      inputs.push({ role: 'environment', bytes: jsonBytes(environmentDocument(environment)), class: 'evidence', kind: 'environment.snapshot', media_type: 'application/json', alias: 'environment' });
    }
    inputs.push(...preimages);
    if (diff !== undefined) inputs.push(...(await this.#changedFileInputs(taskId, diff)));
    const stored = await this.#store(inputs, { useId, producer: this.#settings.principalId, taskId, stepId: command.step_id, attemptId: command.attempt_id, now });

    const common = {
      duration_ms: result?.duration_ms ?? elapsed(started),
      stdout_sha256: stored.hashes.get('stdout') ?? EMPTY_SHA256,
      stderr_sha256: stored.hashes.get('stderr') ?? EMPTY_SHA256,
      changed_files: diff === undefined ? [] : changedFilesOf(diff).slice(0, MAX_CHANGED_FILES),
      artifacts: stored.artifacts,
      environment: environment === undefined ? null : contractEnvironment(environment),
      at: now,
    };
    if (result === undefined) {
      // The exec failed after it may have started: a timeout that outlived the in-cell kill
      // ran and was stopped (errored, timed out); anything else may or may not have happened.
      const timedOut = hasErrorCode(execError, 'CELL_EXEC_TIMEOUT');
      return outcome({ outcome: timedOut ? 'errored' : 'unknown', timed_out: timedOut, error: errorOf(execError), ...common });
    }
    const truncated = result.stdout_truncated || result.stderr_truncated;
    const noResponse = plan.http === undefined ? undefined : httpExchangeProblem(plan.http, result.exit_code, response);
    const problem =
      diffError !== undefined
        ? { code: 'EXECUTOR_DIFF_UNAVAILABLE', message: `the workspace could not be read back: ${messageOf(diffError)}`.slice(0, 2_000) }
        : (stored.error ??
          noResponse ??
          (truncated
            ? {
                code: 'EXECUTOR_OUTPUT_TRUNCATED',
                message: `output over the ${plan.maxOutputBytes}-byte cap was dropped (stdout ${result.stdout_bytes} bytes, stderr ${result.stderr_bytes} bytes); the artifacts hold the first ${plan.maxOutputBytes}`,
              }
            : undefined));
    return outcome({
      outcome: 'completed',
      exit_code: result.exit_code,
      timed_out: result.timed_out,
      ...common,
      ...(problem === undefined ? {} : { error: problem }),
    });
  }

  /**
   * A granted rollback, checked before anything runs: the task's log holds the receipt its
   * params name, with that hash and those steps; every path still holds what the rolled-back
   * action left; every pre-image is in the artifact store with its SHA-256. Then the exec.
   * Otherwise the refusal's code and message (the caller records it errored: nothing ran).
   */
  async #prepareRollback(command: RunAction, useId: string, params: RollbackParams, before: WorkspaceSnapshot): Promise<RollbackExec | { readonly code: string; readonly message: string }> {
    const mismatch = receiptMismatch(params, await this.#deps.log.read(command.task_id));
    if (mismatch !== undefined) return { code: 'EXECUTOR_ROLLBACK_RECEIPT_MISMATCH', message: `the rollback is not backed by the log: ${mismatch}; nothing was changed` };
    const drifted = rollbackDrift(params.steps, before);
    if (drifted.length > 0) {
      return {
        code: 'EXECUTOR_ROLLBACK_PRECONDITION_FAILED',
        message: `the rollback of receipt ${params.receipt_id} would lose later changes, so nothing was changed: ${describeDrift(drifted)}`,
      };
    }
    const fetched = new Map<string, Uint8Array>();
    for (const step of params.steps) {
      const sha256 = step.restore_sha256;
      if (sha256 === undefined || fetched.has(sha256)) continue;
      const bytes = await this.#deps.artifacts.get(sha256);
      if (bytes === null || sha256Hex(bytes) !== sha256) {
        return { code: 'EXECUTOR_ROLLBACK_PREIMAGE_MISSING', message: `the pre-image of ${step.path} (${step.restore_artifact_ref ?? 'no artifact'}, sha256 ${sha256}) is not in the artifact store; nothing was changed` };
      }
      fetched.set(sha256, bytes);
    }
    // The use id's hex keeps this use's staged files apart from any other's.
    return rollbackExec(params.steps, fetched, useId.slice(-12));
  }

  /** Pre-images (`file.preimage`) of the regular files a write_local, delete_local or rollback is about to change, within the configured bounds. */
  async #preimageInputs(taskId: string, plan: ActionPlan, before: WorkspaceSnapshot): Promise<ArtifactInput[]> {
    if (plan.kind !== 'run' || plan.preimagePaths === undefined) return [];
    const maxBytes = this.#settings.preimageMaxBytes ?? 0;
    // Four artifacts describe every run (stdout, stderr, diff, environment), and the after-images have their own budget.
    const maxFiles = Math.max(0, Math.min(this.#settings.artifactFilesMax, LIMITS.listItems - 4 - this.#settings.artifactFilesMax));
    const inputs: ArtifactInput[] = [];
    for (const target of preimageTargets(plan.preimagePaths, before, { maxBytes, maxFiles })) {
      const bytes = await this.#deps.cells.readChangedFile(taskId, target.path, target.sha256, maxBytes).catch(() => undefined);
      if (bytes === undefined) continue;
      inputs.push({ role: `preimage:${target.path}`, bytes, class: 'working', kind: 'file.preimage', media_type: 'application/octet-stream' });
    }
    return inputs;
  }

  /** Contents of files the action added or modified, within the configured bounds. */
  async #changedFileInputs(taskId: string, diff: WorkspaceDiff): Promise<ArtifactInput[]> {
    const inputs: ArtifactInput[] = [];
    for (const change of [...diff.added, ...diff.modified]) {
      if (inputs.length >= this.#settings.artifactFilesMax) break;
      const after = change.after;
      if (after === null || after.kind !== 'file' || after.size > this.#settings.artifactFileMaxBytes) continue;
      const bytes = await this.#deps.cells.readChangedFile(taskId, change.path, after.sha256, this.#settings.artifactFileMaxBytes).catch(() => undefined);
      if (bytes === undefined) continue;
      inputs.push({ role: `file:${change.path}`, bytes, class: 'working', kind: 'file.snapshot', media_type: 'application/octet-stream' });
    }
    return inputs;
  }

  /** Stores each artifact; a store failure stops there and is reported, it does not lose the outcome. */
  async #store(inputs: readonly ArtifactInput[], context: Parameters<typeof artifactRecord>[2]) {
    const artifacts: ExecutionCompleted['artifacts'] = [];
    const hashes = new Map<string, string>();
    let error: { code: string; message: string } | undefined;
    for (const input of inputs) {
      try {
        const stored = await this.#deps.artifacts.put(input.bytes);
        artifacts.push(artifactRecord(stored, input, context));
        hashes.set(input.role, stored.sha256);
      } catch (cause) {
        error = { code: 'EXECUTOR_ARTIFACTS_INCOMPLETE', message: `artifact ${input.role} was not stored: ${messageOf(cause)}`.slice(0, 2_000) };
        this.#deps.logger?.error({ err: cause, role: input.role }, 'artifact not stored');
        break;
      }
    }
    return { artifacts, hashes, error };
  }

  /**
   * Appends `execution.completed` (at most once per use: the key dedupes, and a
   * re-read finds one already there). The action already ran, so a lost race is
   * retried here rather than handed to the bus. Resolves false when another
   * completion of the use was there first.
   */
  async #recordCompletion(
    command: RunAction,
    useId: string,
    claim: ClaimRecord,
    payload: ExecutionCompleted,
    head: number | undefined,
    release?: { readonly code: string; readonly message: string },
  ): Promise<boolean> {
    const parsed = ExecutionCompleted.safeParse(fitCompletion(payload));
    if (!parsed.success) {
      throw new ExecutorError('EXECUTOR_INTERNAL', `the executor built an invalid execution.completed for use ${claim.use_no} of grant ${command.grant_id}`, {
        cause: parsed.error,
        details: { grant_id: command.grant_id, use_no: claim.use_no },
      });
    }
    const context = this.#context(this.#deps.clock());
    const draft = completionDraft(command, useId, claim.event_id, parsed.data, context);
    let drafts: EventDraft[] = [draft];
    let expected = release === undefined ? head : undefined;
    let lastError: unknown;
    for (let attempt = 1; attempt <= COMPLETION_ATTEMPTS; attempt += 1) {
      if (expected === undefined) {
        let stream: readonly EventEnvelope[];
        try {
          stream = await this.#deps.log.read(command.task_id);
        } catch (error) {
          lastError = error;
          await this.#sleep(Math.min(2_000, 50 * attempt));
          continue;
        }
        const history = readGrantHistory(stream, command.grant_id, useId);
        if (history.completion !== undefined) return false;
        if (release !== undefined) drafts = [...this.#releaseDrafts(command, useId, claim, history, release, context), draft];
        expected = stream.at(-1)?.task_seq ?? 0;
      }
      try {
        const appended = await this.#deps.log.append(command.task_id, drafts, expected);
        return !appended.duplicate;
      } catch (error) {
        lastError = error;
        expected = undefined;
        if (!hasErrorCode(error, 'EVENTSTORE_CONFLICT')) await this.#sleep(Math.min(2_000, 50 * attempt));
      }
    }
    throw new ExecutorError('EXECUTOR_COMPLETION_NOT_RECORDED', `execution.completed of use ${claim.use_no} of grant ${command.grant_id} could not be appended`, {
      cause: lastError,
      details: { task_id: command.task_id, grant_id: command.grant_id, use_no: claim.use_no },
    });
  }

  /**
   * `grant.use_released` of a use proven never started, as the kernel decides it from the grant's
   * history (none when the kernel has no such use to release: the completion still says `not_run`).
   */
  #releaseDrafts(command: RunAction, useId: string, claim: ClaimRecord, history: GrantHistory, release: { readonly code: string; readonly message: string }, context: DraftContext): EventDraft[] {
    const claims = history.recorded ?? claimsOfClaimedGrant(command.grant_jws);
    if (claims === undefined) return [];
    try {
      const events = grantDecider.decide(
        { type: 'release-grant-use', data: { use_id: useId, reason_code: release.code, reason: release.message }, metadata: { now: context.occurredAt } },
        grantStateFor(history, claims),
      );
      return events.map((event) => releaseDraft(command, useId, claim.event_id, event.data as Record<string, unknown>, context));
    } catch (error) {
      this.#deps.logger?.warn({ err: error, task_id: command.task_id, use_id: useId }, 'the kernel released nothing for a use that never started');
      return [];
    }
  }

  #context(now: Date): DraftContext {
    return { actorId: this.#settings.principalId, occurredAt: now.toISOString() };
  }
}

/**
 * A failure that is an outage, not a verdict on the action: the log or Docker unavailable, a timeout,
 * or a failure that carries no Writ code (a socket error). A use released for one is run again with a
 * new use, at most MAX_RUNS_PER_GRANT times (the orchestrator's bound), so a misread failure cannot loop.
 */
function unavailable(error: unknown): boolean {
  return !hasErrorCode(error) || /_(UNAVAILABLE|TIMEOUT|TIMED_OUT)$/.test(error.code) || error.code === 'EVENTSTORE_CONFLICT';
}

/** Cell failures that happen before the action's process starts: nothing ran. */
const NOT_STARTED = ['CELL_USE_FENCED', 'EXECUTOR_SECRET_UNAVAILABLE', 'EXECUTOR_EGRESS_UNAVAILABLE', 'CELL_ARGUMENT_INVALID', 'CELL_PATH_ESCAPE', 'CELL_CWD_INVALID', 'CELL_NOT_FOUND', 'CELL_TASK_ID_INVALID'];

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 1000) / 1000;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `{ code, message }` of a failure as the event records it; codes are kept, untyped failures are EXECUTOR_INTERNAL. */
function errorOf(error: unknown): { code: string; message: string } {
  const code = hasErrorCode(error) ? error.code : 'EXECUTOR_INTERNAL';
  return { code: code.slice(0, 64), message: messageOf(error).slice(0, 2_000) };
}

/** The claims of a compact JWS, read without verification (to bound a wait, or of a grant already verified). */
function unverifiedClaims(jws: string): Record<string, unknown> | undefined {
  try {
    const payload = JSON.parse(Buffer.from(jws.split('.')[1] ?? '', 'base64url').toString('utf8')) as unknown;
    return typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The claims of a grant this executor already verified (its use is claimed in the log, which
 * happens only after verification): read from the JWS payload without verifying again, since
 * the issuer's key may have been retired since. Undefined when the payload is not claims.
 */
function claimsOfClaimedGrant(jws: string): CapabilityGrantClaims | undefined {
  const parsed = safeParseCapabilityGrantClaims(unverifiedClaims(jws));
  return parsed.ok ? parsed.value : undefined;
}
