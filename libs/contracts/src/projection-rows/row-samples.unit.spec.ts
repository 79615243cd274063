import { describe, expect, it } from 'vitest';
import { PROJECTION_ROW_SAMPLES, taskEventRow } from '../../test/samples.js';
import { PROJECTION_ROW_SCHEMAS, PUBLISHED_VIEWS, TaskEventRowSchema, projectionRowJsonSchema } from './index.js';

/**
 * The columns every row of a view must carry (null when they do not apply,
 * never absent): what the HTTP API's lists order and filter by and what a
 * dashboard keys on. (Carried over from the HTTP API's row contracts, issue 16.)
 */
const REQUIRED_COLUMNS: Record<(typeof PUBLISHED_VIEWS)[number], readonly string[]> = {
  actions: ['action_request_id', 'status', 'principal_id', 'task_id', 'action_class', 'risk_band', 'receipt_id', 'received_at', 'created_at', 'updated_at'],
  tasks: ['task_id', 'title', 'goal', 'status', 'owner_principal_id', 'policy_profile', 'created_at', 'updated_at'],
  approvals: ['approval_id', 'task_id', 'status', 'packet', 'requested_at', 'resolved_at', 'resolved_by', 'expires_at'],
  grants: ['grant_id', 'task_id', 'attempt_id', 'action_class', 'issued_to', 'expires_at', 'max_uses', 'uses', 'status'],
  receipts: ['receipt_id', 'task_id', 'result_code', 'receipt', 'jws', 'created_at'],
  principals: ['principal_id', 'type', 'roles', 'keys', 'revoked_kids'],
  steps: ['step_id', 'task_id', 'status', 'depends_on', 'current_attempt_id', 'planned_at'],
  attempts: ['attempt_id', 'task_id', 'step_id', 'attempt_no', 'status', 'grant_id', 'receipt_id'],
  artifacts: ['artifact_id', 'sha256', 'kind', 'uri', 'task_id', 'created_at'],
  decisions: ['task_id', 'task_seq', 'decision_id', 'source', 'decided_by', 'created_at'],
  cells: ['cell_id', 'source', 'task_id', 'status', 'participants', 'created_at', 'updated_at'],
  working_states: ['task_id', 'revision', 'limits', 'entries', 'updated_at'],
  beliefs: ['task_id', 'belief_id', 'claim', 'scope', 'trust_tier', 'status', 'confidence', 'version', 'evidence_refs', 'created_at'],
  memory: ['memory_id', 'task_id', 'claim', 'scope', 'trust_tier', 'status', 'evidence_refs', 'promotion_reason', 'policy_result_ref', 'approval_ref', 'receipt_ref', 'created_at'],
};

describe('the projection row samples', () => {
  it.each(PUBLISHED_VIEWS)('given a valid %s row, when parsed with its row schema, then it is accepted unchanged', (view) => {
    expect(PROJECTION_ROW_SCHEMAS[view].parse(PROJECTION_ROW_SAMPLES[view])).toEqual(PROJECTION_ROW_SAMPLES[view]);
  });

  it.each(PUBLISHED_VIEWS)('given the %s row schema, then its list and key columns and row_version are required', (view) => {
    const required = (projectionRowJsonSchema(view).required as string[] | undefined) ?? [];
    expect(required).toEqual(expect.arrayContaining([...REQUIRED_COLUMNS[view], 'row_version']));
  });

  it.each(PUBLISHED_VIEWS)('given a %s row with an unknown column, when parsed, then it is refused', (view) => {
    expect(PROJECTION_ROW_SCHEMAS[view].safeParse({ ...PROJECTION_ROW_SAMPLES[view], surprise: true }).success).toBe(false);
  });

  it('given a timeline row (task_events, read over HTTP only), then it parses and carries no row_version', () => {
    expect(TaskEventRowSchema.parse(taskEventRow)).toEqual(taskEventRow);
    expect(TaskEventRowSchema.safeParse({ ...taskEventRow, row_version: 1 }).success).toBe(false);
  });
});
