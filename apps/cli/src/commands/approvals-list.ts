import { ApprovalStatus } from '@writ/contracts';
import { CliError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';
import { cell, table } from '../format.js';
import type { WritApi } from '../http-api.js';
import { ApprovalList, type ApprovalView } from '../projection-api.js';

/** `--status` values: an approval status, or `all`. */
export const APPROVAL_STATUS_FILTERS = [...ApprovalStatus.options, 'all'] as const;

export interface ApprovalsListOptions {
  /** An approval status, or `all`; default `pending` (the inbox). */
  readonly status?: string;
  readonly limit?: string;
  readonly json?: boolean;
}

/**
 * `writ approvals [--status pending|granted|denied|expired|cancelled|invalidated|all]`:
 * the approval inbox (`GET /v1/approvals`), oldest request first.
 */
export async function approvalsList(options: ApprovalsListOptions, api: WritApi, io: CliIo): Promise<ApprovalList> {
  const status = options.status ?? 'pending';
  if (!(APPROVAL_STATUS_FILTERS as readonly string[]).includes(status)) {
    throw new CliError('CLI_USAGE', `--status must be one of ${APPROVAL_STATUS_FILTERS.join(', ')}`);
  }
  if (options.limit !== undefined && !/^\d{1,4}$/.test(options.limit)) throw new CliError('CLI_USAGE', '--limit must be a whole number (the API takes 1 to 1000)');
  const list = await api.get('/v1/approvals', ApprovalList, { status: status === 'all' ? undefined : status, limit: options.limit });
  if (options.json === true) {
    io.stdout(JSON.stringify(list));
    return list;
  }
  if (list.items.length === 0) {
    io.stdout(status === 'all' ? 'no approvals' : `no ${status} approvals`);
    return list;
  }
  const withStatus = status !== 'pending';
  const headers = ['APPROVAL', 'TASK', 'ACTION', 'RISK', 'REQUESTED_BY', 'EXPIRES_AT', ...(withStatus ? ['STATUS'] : [])];
  const rows = list.items.map((row) => [
    cell(row.approval_id),
    cell(row.task_id),
    cell(actionSummary(row), 60),
    cell(packetText(row, 'risk_band')),
    cell(row.requested_by),
    cell(row.expires_at ?? packetText(row, 'expires_at')),
    ...(withStatus ? [cell(row.status)] : []),
  ]);
  for (const line of table(headers, rows)) io.stdout(line);
  return list;
}

function packetText(row: ApprovalView, key: string): string | undefined {
  const value = row.packet?.[key];
  return typeof value === 'string' ? value : undefined;
}

/** The packet's own summary, else its action class, else the reference to the requested action. */
function actionSummary(row: ApprovalView): string | undefined {
  const summary = packetText(row, 'action_summary');
  const actionClass = packetText(row, 'action_class');
  if (summary !== undefined) return actionClass === undefined ? summary : `${actionClass}: ${summary}`;
  return actionClass ?? packetText(row, 'requested_action_ref');
}
