import { ActionRequest, DecisionRecorded, ExecutionCompleted, PolicyEvaluated, type Decision, type EventEnvelope } from '@writ/contracts';
import { z } from 'zod';

/**
 * `writ decisions`: a task's decisions in the decisions-log format of seed 003
 * (`### [timestamp] title`, then Task, Classification, Decision, Rationale,
 * Falsifier), from the log: the Decision of every `policy.evaluated` and every
 * `decision.recorded` (approval resolutions). Pure.
 *
 * Two fields of the format are not recorded by Writ's deciders, and are
 * derived here only where the log makes that honest:
 * - Classification: seed 003's SIMPLE / MEDIUM / COMPLEX / EPIC sizes a piece
 *   of work; no Writ decider sizes work. What Writ records is the decision's
 *   class (Hermit 16.1) and risk band, printed as such.
 * - Falsifier: a decider does not state one. Where its own record names the
 *   scope it judged (policy's `affected_resources`, the approval packet's
 *   `impacted_resources`, an approval's expiry), the falsifier is that scope
 *   being exceeded, checked against what the executor then observed; where it
 *   does not (a deny, a denial), there is none: `—`.
 */

export const DECISION_LOG_FORMAT = 'writ.decisions/1';

/** Printed where the log holds nothing honest to say. */
export const NONE = '—';

/** `never_ran`: the attempt ended without running, so the scope can no longer be exceeded. */
export type FalsifierCheck = 'holds' | 'falsified' | 'not_observable_yet' | 'never_ran';

export interface DecisionEntry {
  readonly timestamp: string;
  readonly title: string;
  readonly task: string;
  readonly classification: string;
  readonly decision: string;
  readonly rationale: string;
  /** `—` when the log holds no scope the decision could be proven wrong against. */
  readonly falsifier: string;
  /** What the log says about the falsifier now; null when there is none. */
  readonly falsifier_check: FalsifierCheck | null;
  readonly decision_id: string;
  readonly decided_by: string;
  readonly attempt_id: string | null;
  /** What it decided on (`policy_result:<id>`, `approval:<id>`). */
  readonly subject: string;
  /** The event it was recorded with. */
  readonly recorded_with: string;
}

export interface DecisionLog {
  readonly format: typeof DECISION_LOG_FORMAT;
  readonly task_id: string;
  readonly decisions: readonly DecisionEntry[];
}

const TaskCreated = z.object({ title: z.string().optional(), goal: z.string().optional() });
const WithRequest = z.object({ action_request: ActionRequest });
const ApprovalRequested = z.object({
  approval_id: z.string(),
  attempt_id: z.string(),
  expires_at: z.string().optional(),
  packet: z.object({ impacted_resources: z.array(z.string()) }).loose().optional(),
});

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' / ').trim();
}

/** A resource pattern as policy writes them: a path, a directory (covering what is under it), or a glob (`*`, `**`). */
function covers(pattern: string, path: string): boolean {
  const bare = pattern.replace(/^\.\//, '').replace(/\/+$/, '');
  if (bare === '**' || bare === '') return true;
  if (!bare.includes('*')) return path === bare || path.startsWith(`${bare}/`);
  const regex = bare
    .split(/(\*\*\/?|\*)/)
    .map((part) => (part.startsWith('**') ? '.*' : part === '*' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${regex}(?:/.*)?$`).test(path);
}

interface AttemptFacts {
  request: ActionRequest | null;
  /** Paths the attempt's executions changed; null until one completed with an observed outcome. */
  changed: string[] | null;
  /** The attempt reached a terminal state. */
  ended: boolean;
  approvals: Map<string, { expires_at: string | null; impacted: readonly string[] | null; grantedAt: string | null }>;
}

const ATTEMPT_ENDS = new Set(['attempt.succeeded', 'attempt.failed', 'attempt.policy_denied', 'attempt.approval_denied', 'attempt.superseded', 'attempt.cancelled']);

function scopeCheck(scope: readonly string[], facts: AttemptFacts | undefined): FalsifierCheck {
  const changed = facts?.changed ?? null;
  if (changed === null) return facts?.ended === true ? 'never_ran' : 'not_observable_yet';
  return changed.every((path) => scope.some((pattern) => covers(pattern, path))) ? 'holds' : 'falsified';
}

export function decisionLog(taskId: string, events: readonly EventEnvelope[]): DecisionLog {
  let task: z.infer<typeof TaskCreated> = {};
  const attempts = new Map<string, AttemptFacts>();
  const attempt = (id: string): AttemptFacts => {
    let facts = attempts.get(id);
    if (facts === undefined) {
      facts = { request: null, changed: null, ended: false, approvals: new Map() };
      attempts.set(id, facts);
    }
    return facts;
  };
  // First pass: what each attempt asked for, and what its executions then changed.
  for (const event of events) {
    if (event.event_type === 'task.created') {
      const parsed = TaskCreated.safeParse(event.payload);
      if (parsed.success) task = parsed.data;
    } else if (event.event_type === 'attempt.awaiting_policy' && event.attempt_id !== undefined) {
      const parsed = WithRequest.safeParse(event.payload);
      const facts = attempt(event.attempt_id);
      if (parsed.success && facts.request === null) facts.request = parsed.data.action_request;
    } else if (event.event_type === 'approval.requested') {
      const parsed = ApprovalRequested.safeParse(event.payload);
      if (parsed.success) attempt(parsed.data.attempt_id).approvals.set(parsed.data.approval_id, { expires_at: parsed.data.expires_at ?? null, impacted: parsed.data.packet?.impacted_resources ?? null, grantedAt: null });
    } else if (event.event_type === 'approval.granted' && event.attempt_id !== undefined) {
      const approval = attempt(event.attempt_id).approvals.get(event.entity_id);
      if (approval !== undefined) approval.grantedAt = event.occurred_at;
    } else if (ATTEMPT_ENDS.has(event.event_type) && event.attempt_id !== undefined) {
      attempt(event.attempt_id).ended = true;
    } else if (event.event_type === 'execution.completed' && event.attempt_id !== undefined) {
      const parsed = ExecutionCompleted.safeParse(event.payload);
      if (parsed.success && parsed.data.outcome !== 'unknown') {
        const facts = attempt(event.attempt_id);
        facts.changed = [...(facts.changed ?? []), ...parsed.data.changed_files.map((change) => change.path)];
      }
    }
  }

  const asked = (attemptId: string | null): string => {
    const request = attemptId === null ? null : (attempts.get(attemptId)?.request ?? null);
    const about = task.title === undefined ? taskId : `${taskId} (${oneLine(task.title)})`;
    if (request === null) return about;
    return `${about}: ${request.action_class} of ${request.target_resources.join(', ') || 'nothing named'} proposed by ${request.proposed_by} — ${oneLine(request.reason)}`;
  };
  const base = (decision: Decision) => ({
    timestamp: decision.created_at,
    title: oneLine(decision.summary),
    task: asked(decision.attempt_id),
    classification: `${decision.decision_type}, risk ${decision.risk_level} (Writ's decision class and risk band; no SIMPLE…EPIC size is recorded)`,
    rationale: oneLine(decision.rationale),
    decision_id: decision.decision_id,
    decided_by: decision.decided_by,
    attempt_id: decision.attempt_id,
  });

  const decisions: DecisionEntry[] = [];
  for (const event of events) {
    if (event.event_type === 'policy.evaluated') {
      const parsed = PolicyEvaluated.safeParse(event.payload);
      if (!parsed.success) continue;
      const { policy_result: result, decision } = parsed.data;
      const facts = attempts.get(result.attempt_id);
      const runs = result.outcome !== 'deny';
      const scope = result.affected_resources;
      const falsifier = runs
        ? `the attempt's execution changes a path outside ${scope.join(', ') || 'the resources policy judged'} (derived from the policy result's affected_resources)` +
          (result.revalidation_conditions.length === 0 ? '' : `; or before the grant one of these no longer holds: ${result.revalidation_conditions.join('; ')}`)
        : NONE;
      decisions.push({
        ...base(decision),
        decision: `policy ${result.outcome} for ${result.action_class}, risk ${result.risk_band}, under ${result.policy_profile_ref}${result.approver_roles === undefined ? '' : `; approvers: ${result.approver_roles.join(', ')}`}${result.downgrade === undefined ? '' : `; ${result.downgrade.summary}`}`,
        falsifier,
        falsifier_check: runs ? scopeCheck(scope, facts) : null,
        subject: `policy_result:${result.policy_result_id}`,
        recorded_with: event.event_type,
      });
    } else if (event.event_type === 'decision.recorded') {
      const parsed = DecisionRecorded.safeParse(event.payload);
      if (!parsed.success) continue;
      const { decision, subject_ref: subject, outcome_event: outcome } = parsed.data;
      const approvalId = subject.startsWith('approval:') ? subject.slice('approval:'.length) : null;
      const facts = decision.attempt_id === null ? undefined : attempts.get(decision.attempt_id);
      const approval = approvalId === null ? undefined : facts?.approvals.get(approvalId);
      let falsifier: string = NONE;
      let check: FalsifierCheck | null = null;
      if (outcome === 'approval.granted' && approval !== undefined && approval.impacted !== null) {
        falsifier = `the approved action changes a path outside ${approval.impacted.join(', ') || 'the impacted resources'} (derived from the approval packet's impacted_resources)`;
        check = scopeCheck(approval.impacted, facts);
      } else if (outcome === 'approval.expired' && approval !== undefined && approval.expires_at !== null) {
        falsifier = `an approval.granted of ${approvalId} recorded before ${approval.expires_at} (derived from the approval's expires_at)`;
        check = approval.grantedAt !== null && approval.grantedAt < approval.expires_at ? 'falsified' : 'holds';
      }
      decisions.push({
        ...base(decision),
        decision: `${outcome.replace(/^approval\./, 'approval ')} by ${decision.decided_by}`,
        falsifier,
        falsifier_check: check,
        subject,
        recorded_with: outcome,
      });
    }
  }
  return { format: DECISION_LOG_FORMAT, task_id: taskId, decisions };
}

const CHECK_WORDS: Readonly<Record<FalsifierCheck, string>> = {
  holds: 'not falsified by the log',
  falsified: 'FALSIFIED by the log',
  not_observable_yet: 'not observable yet',
  never_ran: 'moot: the action never ran',
};

/** The seed 003 markdown: one `###` entry per decision, in log order. */
export function decisionLogMarkdown(log: DecisionLog, safe: (text: string) => string): string[] {
  const out: string[] = [];
  for (const entry of log.decisions) {
    const check = entry.falsifier_check === null ? '' : ` — ${CHECK_WORDS[entry.falsifier_check]}`;
    if (out.length > 0) out.push('');
    out.push(
      `### [${safe(entry.timestamp)}] ${safe(entry.title)}`,
      `- **Task:** ${safe(entry.task)}`,
      `- **Classification:** ${safe(entry.classification)}`,
      `- **Decision:** ${safe(entry.decision)}`,
      `- **Rationale:** ${safe(entry.rationale)}`,
      `- **Falsifier:** ${safe(entry.falsifier)}${check}`,
      `- **Recorded:** ${safe(entry.decision_id)} by ${safe(entry.decided_by)} with ${safe(entry.recorded_with)} on ${safe(entry.subject)}`,
    );
  }
  return out;
}
