import { Id, parseContract } from '@writ/contracts';
import { z } from 'zod';
import type { CliIo } from '../cli-io.js';
import { cell, fields } from '../format.js';
import type { WritApi } from '../http-api.js';
import { ApprovalView } from '../projection-api.js';

const optionalText = z.string().nullish();

/** `GET /v1/approvals/<id>` (services/projection README): the row of the inbox plus what the log adds. */
export const ApprovalDetailView = ApprovalView.extend({
  packet_ref: optionalText,
  state_witness: z.looseObject({ ref: optionalText, fingerprints: z.record(z.string(), z.unknown()).nullish(), observed_at: optionalText }).nullish(),
  policy_result_ref: optionalText,
  resolution: z
    .looseObject({
      event_type: z.string(),
      status: z.string(),
      resolved_by: optionalText,
      resolved_at: optionalText,
      note: optionalText,
      cause: optionalText,
      drifted_resources: z.array(z.string()).nullish(),
      witness_validated: z.boolean().nullish(),
    })
    .nullish(),
  decisions: z.array(z.record(z.string(), z.unknown())).nullish(),
});
export type ApprovalDetailView = z.output<typeof ApprovalDetailView>;

export interface ApprovalsShowOptions {
  readonly json?: boolean;
}

function text(record: Readonly<Record<string, unknown>> | null | undefined, key: string): string | undefined {
  const value = record?.[key];
  return typeof value === 'string' ? value : undefined;
}

/**
 * `writ approvals show <approval_id> [--json]`: one approval (`GET /v1/approvals/<id>`) — what
 * the approver was asked (the packet, its artifact ref and the state witness), until when, and
 * how it ended: who resolved it, why (note, cause, drifted resources) and the Decisions recorded
 * with it. `--json` prints the API's document as is.
 */
export async function approvalsShow(id: string, options: ApprovalsShowOptions, api: WritApi, io: CliIo): Promise<ApprovalDetailView> {
  const approvalId = parseContract('approval id', Id, id);
  const view = await api.get(`/v1/approvals/${encodeURIComponent(approvalId)}`, ApprovalDetailView);
  if (options.json === true) {
    io.stdout(JSON.stringify(view));
    return view;
  }
  const packet = view.packet ?? undefined;
  const resolution = view.resolution ?? undefined;
  const witness = view.state_witness ?? undefined;
  io.stdout(`approval ${cell(view.approval_id)}: ${cell(view.status)}`);
  for (const line of fields([
    ['task', view.task_id],
    ['step', view.step_id],
    ['attempt', view.attempt_id],
    ['action', text(packet, 'action_summary')],
    ['risk', text(packet, 'risk_summary') ?? text(packet, 'risk_band')],
    ['rationale', text(packet, 'decision_rationale')],
    ['effects', Array.isArray(packet?.['expected_effects']) ? (packet['expected_effects'] as unknown[]).join('; ') : undefined],
    ['resources', Array.isArray(packet?.['impacted_resources']) ? (packet['impacted_resources'] as unknown[]).join(', ') : undefined],
    ['requested_by', view.requested_by],
    ['requested_at', view.requested_at],
    ['expires_at', view.expires_at ?? text(packet, 'expires_at')],
    ['policy', view.policy_result_ref ?? text(packet, 'policy_result_ref')],
    ['packet', view.packet_ref],
  ])) {
    io.stdout(line);
  }
  if (witness !== undefined) {
    io.stdout(`  state witness ${cell(witness.ref)} (observed ${cell(witness.observed_at)}):`);
    for (const [resource, fingerprint] of Object.entries(witness.fingerprints ?? {})) io.stdout(`    ${cell(resource, 100)}  ${cell(fingerprint, 100)}`);
  }
  if (resolution === undefined) {
    io.stdout(view.status === 'pending' ? '  resolution: - (pending)' : `  resolution: ${cell(view.status)} by ${cell(view.resolved_by)}`);
  } else {
    io.stdout(`  resolution: ${cell(resolution.status)} by ${cell(resolution.resolved_by)} at ${cell(resolution.resolved_at)}`);
    for (const line of fields(
      [
        ['cause', resolution.cause],
        ['drifted', resolution.drifted_resources !== undefined && resolution.drifted_resources !== null && resolution.drifted_resources.length > 0 ? resolution.drifted_resources.join(', ') : undefined],
        ['note', resolution.note],
        ['witness', resolution.witness_validated === true ? 'revalidated unchanged' : undefined],
      ],
      '    ',
    )) {
      io.stdout(line);
    }
  }
  for (const decision of view.decisions ?? []) {
    io.stdout(`  decision ${cell(text(decision, 'decision_id'))}: ${cell(text(decision, 'summary'), 120)}`);
    for (const line of fields(
      [
        ['type', text(decision, 'decision_type')],
        ['decided_by', text(decision, 'decided_by')],
        ['rationale', text(decision, 'rationale')],
      ],
      '    ',
    )) {
      io.stdout(line);
    }
  }
  return view;
}
