import type { Json, TaskEventRow } from '../api/rows.js';

/**
 * The explain view: for each action of a task, the answers `writ explain`
 * gives (Hermit section 21) — what was asked, why it was allowed or not, on
 * whose authority, what ran and changed, whether it is receipted and can be
 * rolled back — read from the task's timeline as the API serves it. Pure:
 * events in, stories out. (`writ explain` builds the same from the raw log
 * and also checks signatures; here the receipt page verifies each receipt.)
 */

export interface ActionStory {
  readonly attemptId: string;
  readonly stepId: string | null;
  readonly actionRequestId: string | null;
  /** The attempt's last status (`succeeded`, `awaiting_approval`, `denied`...), from its last `attempt.*` event. */
  readonly status: string;
  readonly what: {
    readonly actionClass: string | null;
    readonly summary: string;
    readonly targets: readonly string[];
    readonly reason: string | null;
    readonly proposedBy: string | null;
    readonly reversibility: string | null;
  };
  readonly why: {
    readonly outcome: string;
    readonly riskBand: string | null;
    readonly rules: readonly string[];
    readonly reasoning: string | null;
    readonly profile: string | null;
    readonly policyResultId: string | null;
  } | null;
  readonly approval: {
    readonly approvalId: string;
    readonly status: string;
    readonly requestedAt: string | null;
    readonly expiresAt: string | null;
    readonly resolvedBy: string | null;
    readonly note: string | null;
    readonly cause: string | null;
  } | null;
  readonly grant: {
    readonly grantId: string;
    readonly issuedBy: string | null;
    readonly paths: readonly string[];
    readonly hosts: readonly string[];
    readonly maxUses: number | null;
    readonly usesClaimed: number;
    readonly expiresAt: string | null;
    readonly revoked: boolean;
    readonly refused: readonly string[];
  } | null;
  readonly execution: {
    readonly outcome: string;
    readonly exitCode: number | null;
    readonly durationMs: number | null;
    readonly changedFiles: readonly { readonly path: string; readonly change: string }[];
    readonly network: string | null;
  } | null;
  readonly receipts: readonly {
    readonly receiptId: string;
    readonly resultCode: string | null;
    readonly summary: string | null;
    readonly rollback: string | null;
    readonly rollbackMethod: string | null;
  }[];
}

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const num = (value: unknown): number | null => (typeof value === 'number' ? value : null);
const obj = (value: unknown): Json => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {});
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);

/** `rm -rf build`, or the class and targets when the params are not a command line. */
export function summarizeRequest(request: Json): string {
  const params = obj(request['params']);
  const argv = strings(params['argv']);
  if (argv.length > 0) return argv.join(' ');
  const path = str(params['path']);
  const actionClass = str(request['action_class']) ?? 'action';
  return path === null ? `${actionClass} of ${strings(request['target_resources']).join(', ') || 'nothing named'}` : `${actionClass} ${path}`;
}

const APPROVAL_STATUS: Readonly<Record<string, string>> = {
  'approval.requested': 'pending',
  'approval.granted': 'granted',
  'approval.denied': 'denied',
  'approval.expired': 'expired',
  'approval.cancelled': 'cancelled',
  'approval.invalidated': 'invalidated',
};

const ATTEMPT_STATUS: Readonly<Record<string, string>> = {
  'attempt.awaiting_policy': 'awaiting_policy',
  'attempt.awaiting_approval': 'awaiting_approval',
  'attempt.authorized': 'authorized',
  'attempt.downgraded': 'authorized',
  'attempt.executing': 'executing',
  'attempt.observing': 'observing',
  'attempt.receipt_pending': 'receipt_pending',
  'attempt.policy_denied': 'denied',
  'attempt.approval_denied': 'denied',
  'attempt.approval_expired': 'denied',
  'attempt.succeeded': 'succeeded',
  'attempt.failed': 'failed',
  'attempt.cancelled': 'cancelled',
  'attempt.superseded': 'superseded',
  'attempt.unknown_outcome_receipted': 'unknown_outcome',
};

interface Draft {
  attemptId: string;
  stepId: string | null;
  actionRequestId: string | null;
  status: string;
  what: ActionStory['what'];
  why: ActionStory['why'];
  approval: ActionStory['approval'];
  grant: {
    grantId: string;
    issuedBy: string | null;
    paths: readonly string[];
    hosts: readonly string[];
    maxUses: number | null;
    usesClaimed: number;
    expiresAt: string | null;
    revoked: boolean;
    refused: string[];
  } | null;
  execution: ActionStory['execution'];
  receipts: ActionStory['receipts'][number][];
}

/** One story per attempt, in the order the attempts were opened. */
export function actionStories(events: readonly TaskEventRow[]): ActionStory[] {
  const byAttempt = new Map<string, Draft>();
  const draft = (event: TaskEventRow): Draft | undefined => {
    const attemptId = event.attempt_id ?? str(event.payload['attempt_id']) ?? str(obj(event.payload['claims'])['attempt_id']) ?? str(obj(event.payload['receipt'])['attempt_id']);
    if (attemptId === null) return undefined;
    let story = byAttempt.get(attemptId);
    if (story === undefined) {
      story = {
        attemptId,
        stepId: event.step_id,
        actionRequestId: null,
        status: 'created',
        what: { actionClass: null, summary: '', targets: [], reason: null, proposedBy: null, reversibility: null },
        why: null,
        approval: null,
        grant: null,
        execution: null,
        receipts: [],
      };
      byAttempt.set(attemptId, story);
    }
    return story;
  };

  for (const event of [...events].sort((a, b) => a.task_seq - b.task_seq)) {
    const payload = event.payload;
    const type = event.event_type;
    if (!type.startsWith('attempt.') && !type.startsWith('policy.') && !type.startsWith('approval.') && !type.startsWith('grant.') && !type.startsWith('execution.') && type !== 'receipt.issued') continue;
    const story = draft(event);
    if (story === undefined) continue;
    const attemptStatus = ATTEMPT_STATUS[type];
    if (attemptStatus !== undefined) story.status = attemptStatus;
    if (type === 'attempt.awaiting_policy') {
      const request = obj(payload['action_request']);
      story.actionRequestId = str(request['action_request_id']);
      story.what = {
        actionClass: str(request['action_class']),
        summary: summarizeRequest(request),
        targets: strings(request['target_resources']),
        reason: str(request['reason']),
        proposedBy: str(request['proposed_by']),
        reversibility: str(request['reversibility_hint']),
      };
    } else if (type === 'policy.evaluated') {
      const result = obj(payload['policy_result']);
      story.why = {
        outcome: str(result['outcome']) ?? 'unknown',
        riskBand: str(result['risk_band']),
        rules: strings(result['matched_rules']),
        reasoning: str(result['reasoning_summary']) ?? str(obj(payload['decision'])['rationale']),
        profile: str(result['policy_profile_ref']),
        policyResultId: str(result['policy_result_id']),
      };
    } else if (type in APPROVAL_STATUS) {
      const before = story.approval;
      story.approval = {
        approvalId: str(payload['approval_id']) ?? before?.approvalId ?? event.entity_id,
        status: APPROVAL_STATUS[type] as string,
        requestedAt: type === 'approval.requested' ? event.occurred_at : (before?.requestedAt ?? null),
        expiresAt: str(payload['expires_at']) ?? before?.expiresAt ?? null,
        resolvedBy: type === 'approval.requested' ? null : str(payload['resolved_by']),
        note: str(payload['note']),
        cause: str(payload['cause']),
      };
    } else if (type === 'grant.issued') {
      const claims = obj(payload['claims']);
      const scope = obj(claims['resource_scope']);
      story.grant = {
        grantId: str(claims['jti']) ?? event.entity_id,
        issuedBy: str(claims['issued_by_principal_id']) ?? str(claims['iss']),
        paths: strings(scope['paths']),
        hosts: strings(scope['hosts']),
        maxUses: num(claims['max_uses']),
        usesClaimed: 0,
        expiresAt: typeof claims['exp'] === 'number' ? new Date(claims['exp'] * 1000).toISOString() : null,
        revoked: false,
        refused: [],
      };
    } else if (type === 'grant.use_claimed' && story.grant !== null) {
      story.grant.usesClaimed += 1;
    } else if (type === 'grant.revoked' && story.grant !== null) {
      story.grant.revoked = true;
    } else if (type === 'grant.refused' && story.grant !== null) {
      story.grant.refused.push(str(payload['code']) ?? str(payload['reason_code']) ?? 'refused');
    } else if (type === 'execution.completed' || type === 'execution.outcome_resolved') {
      const environment = obj(payload['environment']);
      story.execution = {
        outcome: str(payload['outcome']) ?? 'unknown',
        exitCode: num(payload['exit_code']),
        durationMs: num(payload['duration_ms']),
        changedFiles: (Array.isArray(payload['changed_files']) ? payload['changed_files'] : []).map((file) => ({ path: str(obj(file)['path']) ?? '?', change: str(obj(file)['change']) ?? '?' })),
        network: str(environment['network_mode']),
      };
    } else if (type === 'receipt.issued') {
      const receipt = obj(payload['receipt']);
      const rollback = obj(receipt['rollback']);
      story.receipts.push({
        receiptId: str(receipt['receipt_id']) ?? event.entity_id,
        resultCode: str(receipt['result_code']),
        summary: str(receipt['result_summary']),
        rollback: str(rollback['statement']),
        rollbackMethod: str(rollback['method']),
      });
    }
  }
  return [...byAttempt.values()].map((story) => ({ ...story, grant: story.grant === null ? null : { ...story.grant } }));
}

/** The receipts of a task in log order, as `receipt.issued` carries them: the chain a receipt is checked against. */
export function timelineReceipts(events: readonly TaskEventRow[]): Json[] {
  return [...events]
    .sort((a, b) => a.task_seq - b.task_seq)
    .filter((event) => event.event_type === 'receipt.issued')
    .map((event) => obj(event.payload['receipt']))
    .filter((receipt) => typeof receipt['receipt_id'] === 'string');
}
