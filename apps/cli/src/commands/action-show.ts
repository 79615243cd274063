import { Id, parseContract } from '@writ/contracts';
import type { CliIo } from '../cli-io.js';
import { cell, fields } from '../format.js';
import type { WritApi } from '../http-api.js';
import { ActionView } from '../projection-api.js';

/** `writ action <action_request_id> [--json]`: the action's status row (`GET /v1/actions/<id>`). */
export async function actionShow(id: string, options: { readonly json?: boolean }, api: WritApi, io: CliIo): Promise<ActionView> {
  const actionRequestId = parseContract('action request id', Id, id);
  const view = await api.get(`/v1/actions/${encodeURIComponent(actionRequestId)}`, ActionView);
  if (options.json === true) {
    io.stdout(JSON.stringify(view));
    return view;
  }
  const policy = [view.policy_outcome, view.risk_band === null || view.risk_band === undefined ? undefined : `risk ${view.risk_band}`].filter(Boolean).join(', ');
  io.stdout(`action ${cell(view.action_request_id)}: ${cell(view.status)}`);
  for (const line of fields([
    ['principal', view.principal_id],
    ['class', view.action_class],
    ['task', view.task_id],
    ['step', view.step_id],
    ['attempt', view.attempt_id],
    ['policy', policy],
    ['policy result', view.policy_result_id],
    ['approval', view.approval_id],
    ['grant', view.grant_id],
    ['receipt', view.receipt_id],
    ['reason', view.reason_code],
    ['ingress', view.ingress_id],
    ['received', view.received_at],
    ['updated', view.updated_at],
  ])) {
    io.stdout(line);
  }
  return view;
}
