import { DeliverPolicy, jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { ActionRequest, EventEnvelope, Timestamp, hasErrorCode, type PolicyOutcome } from '@writ/contracts';
import { evaluatePolicy, type PreparedPolicyProfile } from '@writ/kernel';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { attachEventLog, connectNats } from '../event-log.js';
import { cell, table } from '../format.js';
import { readProfileFile, shortVersion, validateProfileLocally } from './policy-common.js';

export interface PolicySimulateOptions {
  /** The candidate profile document (YAML or JSON). */
  readonly profile: string;
  /** RFC 3339, or relative to now: `30m`, `2h`, `7d`, `1w`. */
  readonly since: string;
  /** Same forms; default now. */
  readonly until?: string;
  /** Apply the candidate to every task, not only those whose profile id is the candidate's. */
  readonly allTasks?: boolean;
  readonly json?: boolean;
}

/** One request that went through policy, as the log recorded it. */
export interface RecordedPolicyRequest {
  readonly task_id: string;
  readonly attempt_id: string;
  readonly occurred_at: string;
  readonly action_request: ActionRequest;
  /** The task's profile id (its policy_profile_ref without `@version`). */
  readonly profile_id: string;
  readonly files_owned: readonly string[];
  readonly sacred_exceptions?: readonly string[];
  /** The `policy.evaluated` that answered it, or null if none was recorded (yet). */
  readonly recorded: { readonly outcome: PolicyOutcome; readonly matched_rules: readonly string[]; readonly policy_version: string } | null;
}

/** A candidate profile, validated and prepared. */
export interface SimulationCandidate {
  readonly profile_id: string;
  readonly version: string;
  readonly prepared: PreparedPolicyProfile;
}

export interface SimulatedChange {
  readonly task_id: string;
  readonly attempt_id: string;
  readonly action_request_id: string;
  readonly action_class: string;
  readonly was: PolicyOutcome;
  readonly would_be: PolicyOutcome;
  /** The rule that decides the candidate's outcome. */
  readonly rule: string;
  readonly recorded_version: string;
}

export interface SimulationReport {
  readonly profile_id: string;
  readonly version: string;
  readonly since: string;
  readonly until: string;
  readonly all_tasks: boolean;
  /** Requests evaluated with the candidate. */
  readonly evaluated: number;
  readonly unchanged: number;
  readonly changed: number;
  /** Evaluated, but the log records no decision for them (yet): neither changed nor unchanged. */
  readonly unrecorded: number;
  /** Requests of tasks under another profile (without --all-tasks). */
  readonly skipped: number;
  /** `was → would_be` → count. */
  readonly by_transition: Readonly<Record<string, number>>;
  readonly changes: readonly SimulatedChange[];
}

const RELATIVE = /^(\d+)(s|m|h|d|w)$/;
const UNIT_MS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `--since` / `--until`: RFC 3339 with an offset, or a duration back from now (`2h`, `7d`). CLI_USAGE otherwise. */
export function parseInstant(value: string, now: Date, flag: string): Date {
  const relative = RELATIVE.exec(value.trim());
  if (relative !== null) return new Date(now.getTime() - Number(relative[1]) * (UNIT_MS[relative[2] as string] ?? 0));
  if (Timestamp.safeParse(value).success) return new Date(value);
  throw new CliError('CLI_USAGE', `${flag} must be RFC 3339 (2030-01-01T00:00:00Z) or a duration back from now (30m, 2h, 7d, 1w), not ${JSON.stringify(value)}`);
}

/** `policy:local_edit_allowed@sha256:…` → `local_edit_allowed` (the orchestrator's reading of a task's profile reference). */
export function profileIdOf(ref: string): string {
  const bare = ref.replace(/^(?:policy_profile|policy):/, '');
  const at = bare.indexOf('@');
  return at > 0 ? bare.slice(0, at) : bare;
}

const strings = (value: unknown): string[] | undefined => (Array.isArray(value) && value.every((item) => typeof item === 'string') ? (value as string[]) : undefined);

/**
 * The requests of one task's events that entered policy (`attempt.awaiting_policy`)
 * inside [since, until], each with the task's facts (from `task.created`)
 * and the outcome the log recorded for it (the attempt's next `policy.evaluated`).
 */
export function collectPolicyRequests(events: readonly EventEnvelope[], since: Date, until: Date): RecordedPolicyRequest[] {
  const created = events.find((event) => event.event_type === 'task.created');
  if (created === undefined) return [];
  const task = created.payload as { policy_profile_ref?: unknown; files_owned?: unknown; sacred_exceptions?: unknown };
  const profileRef = typeof task.policy_profile_ref === 'string' ? task.policy_profile_ref : '';
  const requests: RecordedPolicyRequest[] = [];
  events.forEach((event, index) => {
    if (event.event_type !== 'attempt.awaiting_policy') return;
    const at = Date.parse(event.occurred_at);
    if (at < since.getTime() || at > until.getTime()) return;
    const parsed = ActionRequest.safeParse((event.payload as { action_request?: unknown }).action_request);
    const attemptId = event.attempt_id ?? event.entity_id;
    if (!parsed.success) return;
    const request = parsed.data;
    const answer = events.slice(index + 1).find((later) => {
      if (later.event_type !== 'policy.evaluated') return false;
      const result = (later.payload as { policy_result?: { attempt_id?: unknown; action_request_id?: unknown } }).policy_result;
      return result?.attempt_id === attemptId && result.action_request_id === request.action_request_id;
    });
    const result = (answer?.payload as { policy_result?: { outcome: PolicyOutcome; matched_rules?: string[]; policy_version?: string } } | undefined)?.policy_result;
    const sacred = strings(task.sacred_exceptions) ?? request.task?.sacred_exceptions;
    requests.push({
      task_id: event.task_id,
      attempt_id: attemptId,
      occurred_at: event.occurred_at,
      action_request: request,
      profile_id: profileIdOf(profileRef),
      files_owned: strings(task.files_owned) ?? [],
      ...(sacred === undefined ? {} : { sacred_exceptions: sacred }),
      recorded: result === undefined ? null : { outcome: result.outcome, matched_rules: result.matched_rules ?? [], policy_version: result.policy_version ?? 'unknown' },
    });
  });
  return requests;
}

/** The candidate's outcome and deciding rule for one request (facts policy cannot use are a deny, as the service records them). */
function candidateDecision(request: RecordedPolicyRequest, candidate: SimulationCandidate): { outcome: PolicyOutcome; rule: string } {
  try {
    const evaluation = evaluatePolicy(request.action_request, candidate.prepared, {
      files_owned: request.files_owned,
      ...(request.sacred_exceptions === undefined ? {} : { sacred_exceptions: request.sacred_exceptions }),
    });
    return { outcome: evaluation.outcome, rule: evaluation.matched_rules[0] ?? evaluation.reasons[0]?.code ?? '-' };
  } catch (error) {
    if (hasErrorCode(error, 'POLICY_FACTS_INVALID')) return { outcome: 'deny', rule: 'policy_facts_invalid' };
    throw error;
  }
}

/**
 * Evaluates the candidate against recorded requests with the kernel — the
 * tasks whose profile id is the candidate's, or every task with `allTasks` —
 * and reports each request whose outcome would change. Pure: runs nothing,
 * records nothing.
 */
export function simulatePolicy(
  requests: readonly RecordedPolicyRequest[],
  candidate: SimulationCandidate,
  window: { readonly since: Date; readonly until: Date; readonly allTasks?: boolean },
): SimulationReport {
  let evaluated = 0;
  let unchanged = 0;
  let unrecorded = 0;
  let skipped = 0;
  const changes: SimulatedChange[] = [];
  const byTransition: Record<string, number> = {};
  for (const request of requests) {
    if (window.allTasks !== true && request.profile_id !== candidate.profile_id) {
      skipped++;
      continue;
    }
    evaluated++;
    const decision = candidateDecision(request, candidate);
    if (request.recorded === null) {
      unrecorded++;
    } else if (request.recorded.outcome === decision.outcome) {
      unchanged++;
    } else {
      const transition = `${request.recorded.outcome} → ${decision.outcome}`;
      byTransition[transition] = (byTransition[transition] ?? 0) + 1;
      changes.push({
        task_id: request.task_id,
        attempt_id: request.attempt_id,
        action_request_id: request.action_request.action_request_id,
        action_class: request.action_request.action_class,
        was: request.recorded.outcome,
        would_be: decision.outcome,
        rule: decision.rule,
        recorded_version: request.recorded.policy_version,
      });
    }
  }
  return {
    profile_id: candidate.profile_id,
    version: candidate.version,
    since: window.since.toISOString(),
    until: window.until.toISOString(),
    all_tasks: window.allTasks === true,
    evaluated,
    unchanged,
    changed: changes.length,
    unrecorded,
    skipped,
    by_transition: byTransition,
    changes,
  };
}

/** Ids of the tasks with an `attempt.awaiting_policy` stored since `since` (a scan of `<events>.task.>` from that time up to the end seen). */
async function tasksEnteringPolicy(nc: NatsConnection, conn: Connection, since: Date, until: Date): Promise<string[]> {
  const tasks = new Set<string>();
  const consumer = await jetstream(nc).consumers.get(conn.eventsStream, {
    filter_subjects: `${conn.eventsPrefix}.task.>`,
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: since.toISOString(),
  });
  try {
    if ((await consumer.info(true)).num_pending === 0) return [];
    for (let caughtUp = false; !caughtUp; ) {
      let received = 0;
      for await (const message of await consumer.fetch({ max_messages: 256, expires: 5_000 })) {
        received++;
        caughtUp = message.info.pending === 0;
        let envelope: EventEnvelope | undefined;
        try {
          envelope = message.json<EventEnvelope>();
        } catch {
          envelope = undefined; // not an envelope: `writ verify` reports it; the simulation skips it
        }
        if (envelope?.event_type === 'attempt.awaiting_policy' && typeof envelope.task_id === 'string') {
          const at = Date.parse(envelope.occurred_at);
          if (at >= since.getTime() && at <= until.getTime()) tasks.add(envelope.task_id);
        }
        if (caughtUp) break;
      }
      if (received === 0) throw new CliError('CLI_FAILED', `reading ${conn.eventsStream} stalled: no events arrived before the deadline`);
    }
  } finally {
    await consumer.delete().catch(() => undefined);
  }
  return [...tasks];
}

/**
 * `writ policy simulate --profile <file> --since <time> [--until <time>] [--all-tasks] [--json]`:
 * reads from the event log the requests that entered policy in the window,
 * their tasks' facts and the recorded outcome, evaluates the candidate
 * profile on each with the kernel, and prints each request whose outcome
 * would change (task, request, class, was → would be, deciding rule) and a
 * summary. Executes nothing and appends nothing.
 */
export async function policySimulate(options: PolicySimulateOptions, conn: Connection, io: CliIo): Promise<SimulationReport> {
  const now = io.now();
  const since = parseInstant(options.since, now, '--since');
  const until = options.until === undefined ? now : parseInstant(options.until, now, '--until');
  if (until.getTime() < since.getTime()) throw new CliError('CLI_USAGE', '--until is before --since');
  const input = await readProfileFile(io.cwd, options.profile);
  const { document, version, prepared } = validateProfileLocally(input, options.profile, io);
  const candidate: SimulationCandidate = { profile_id: document.id, version, prepared };

  const nc = await connectNats(conn);
  const requests: RecordedPolicyRequest[] = [];
  try {
    const store = await attachEventLog(nc, conn);
    for (const taskId of await tasksEnteringPolicy(nc, conn, since, until)) {
      const events = (await store.read(taskId)).map((stored) => stored.event);
      requests.push(...collectPolicyRequests(events, since, until));
    }
  } finally {
    await nc.drain().catch(() => undefined);
  }
  requests.sort((a, b) => a.occurred_at.localeCompare(b.occurred_at) || a.task_id.localeCompare(b.task_id));
  const report = simulatePolicy(requests, candidate, { since, until, allTasks: options.allTasks === true });
  if (options.json === true) {
    io.stdout(JSON.stringify(report));
    return report;
  }
  io.stdout(`candidate ${cell(report.profile_id)} ${shortVersion(report.version)} over ${report.since} .. ${report.until}${report.all_tasks ? ' (all tasks)' : ''}`);
  if (report.changes.length > 0) {
    const rows = report.changes.map((change) => [
      cell(change.task_id, 40),
      cell(change.action_request_id, 40),
      cell(change.action_class),
      `${change.was} → ${change.would_be}`,
      cell(change.rule),
    ]);
    for (const line of table(['TASK', 'ACTION REQUEST', 'CLASS', 'WAS → WOULD BE', 'RULE'], rows)) io.stdout(line);
  }
  io.stdout(
    `evaluated ${report.evaluated}, unchanged ${report.unchanged}, changed ${report.changed}` +
      (report.unrecorded > 0 ? `, no recorded decision ${report.unrecorded}` : '') +
      (report.skipped > 0 ? `, other profiles skipped ${report.skipped}` : ''),
  );
  for (const [transition, count] of Object.entries(report.by_transition).sort()) io.stdout(`  ${transition}: ${count}`);
  return report;
}
