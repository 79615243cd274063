import { Id, type ApprovalDetail, type ApprovalResolutionView } from '@writ/contracts';
import { ProjectionError } from './projection-errors.js';
import type { ApprovalRow, TaskEventRow } from './views/index.js';

/** What `GET /v1/approvals/<id>` reads: the approval's row and its events in the task timeline. */
export interface ApprovalDetailModel {
  approval(approvalId: string): Promise<ApprovalRow | undefined>;
  /** The task's events about the approval (entity `approval`), and the decisions recorded about it (`subject_ref` = `approval:<id>`), in task order. */
  approvalEvents(taskId: string, approvalId: string): Promise<TaskEventRow[]>;
}


/**
 * `GET /v1/approvals/<id>`: everything an approver or an auditor asks about one approval — its
 * status, the packet shown (and `packet_ref`, the approval.packet artifact in the artifact
 * bucket), the state witness, the expiry, the resolution with its resolver and cause, and the
 * Decisions recorded with it. Read from the projection: it authorizes nothing.
 */
export type { ApprovalDetail, ApprovalResolutionView };

function record(value: unknown): Readonly<Record<string, unknown>> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function str(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

const RESOLUTIONS: Readonly<Record<string, string>> = {
  'approval.granted': 'granted',
  'approval.denied': 'denied',
  'approval.expired': 'expired',
  'approval.cancelled': 'cancelled',
  'approval.invalidated': 'invalidated',
};

function resolutionOf(events: readonly TaskEventRow[]): ApprovalResolutionView | null {
  // The last resolution the row reflects: a granted approval may still be invalidated later.
  const event = events.filter((candidate) => candidate.entity_type === 'approval' && RESOLUTIONS[candidate.event_type] !== undefined).at(-1);
  if (event === undefined) return null;
  const data = event.payload;
  const drifted = data['drifted_resources'];
  return {
    event_type: event.event_type,
    status: RESOLUTIONS[event.event_type] as string,
    resolved_by: str(data['resolved_by']) ?? event.actor_id,
    resolved_at: str(data['at']) ?? event.occurred_at,
    note: str(data['note']) ?? str(data['reason']),
    cause: str(data['cause']),
    drifted_resources: Array.isArray(drifted) ? drifted.filter((item): item is string => typeof item === 'string') : [],
    witness_validated: typeof data['witness_validated'] === 'boolean' ? data['witness_validated'] : null,
    event_id: event.event_id,
    task_seq: event.task_seq,
  };
}

/** The approval and what its events add to the row; PROJECTION_NOT_FOUND before the projection has seen it. */
export async function approvalDetail(model: ApprovalDetailModel, id: string, visible: (row: ApprovalRow) => Promise<boolean> = async () => true): Promise<ApprovalDetail> {
  if (!Id.safeParse(id).success) {
    throw new ProjectionError('PROJECTION_REQUEST_INVALID', 'the approval id must be 1-128 characters of A-Z, a-z, 0-9, "_" or "-"', { details: { parameter: 'id' } });
  }
  const row = await model.approval(id);
  // Another principal's approval answers exactly as a missing one: its id leaks nothing.
  if (row === undefined || !(await visible(row))) {
    throw new ProjectionError('PROJECTION_NOT_FOUND', `no approval ${id} in the projection; it appears once approval.requested is projected: retry shortly, or subscribe to <root>.proj.approvals.${id}`, {
      details: { approval: id },
    });
  }
  const events = await model.approvalEvents(row.task_id, id);
  const requested = events.find((event) => event.entity_type === 'approval' && event.event_type === 'approval.requested');
  return {
    ...row,
    packet_ref: str(requested?.payload['approval_packet_ref']),
    state_witness: record(requested?.payload['state_witness']),
    policy_result_ref: str(requested?.payload['policy_result_ref']),
    resolution: resolutionOf(events),
    decisions: events.flatMap((event) => {
      const decision = event.event_type === 'decision.recorded' ? record(event.payload['decision']) : null;
      return decision === null ? [] : [decision];
    }),
  };
}
