import type { CellEnvironment } from '@writ/contracts';
import { cell } from '../format.js';
import type { ActionExplanation, ReceiptView, TaskExplanation } from './task-explanation.js';

/**
 * The human layout of `writ explain`: the task, then per action the sections
 * of Hermit 21's questions, one fact per line (`label: value`). Every value
 * goes through `cell`, so nothing recorded by an agent can drive the terminal.
 */

const WIDE = 200;

function line(indent: string, label: string, value: unknown): string {
  return `${indent}${`${label}:`.padEnd(18)} ${cell(value, WIDE)}`;
}

function short(hash: string | null | undefined): string {
  if (hash === null || hash === undefined) return '-';
  return hash.length > 16 ? `${hash.slice(0, 16)}…` : hash;
}

function mebibytes(bytes: number): string {
  return bytes % 1_048_576 === 0 ? `${bytes / 1_048_576} MiB` : `${bytes} bytes`;
}

function cellLines(indent: string, environment: CellEnvironment): string[] {
  return [
    line(indent, 'cell image', `${environment.image} @ ${environment.image_id}`),
    line(indent, 'cell network', environment.egress_hosts === undefined ? environment.network_mode : `${environment.network_mode}, egress to ${environment.egress_hosts.join(', ')}`),
    line(indent, 'cell hardening', `${environment.readonly_rootfs ? 'read-only rootfs' : 'writable rootfs'}, user ${environment.user || '-'}, cap_drop ${environment.cap_drop.join(',') || 'none'}`),
    line(indent, 'cell limits', `memory ${mebibytes(environment.memory_bytes)}, pids ${environment.pids_limit}`),
    ...environment.mounts.map((mount) => line(indent, 'cell mount', `${mount.destination} ${mount.read_only ? 'ro' : 'rw'}`)),
  ];
}

function receiptLines(indent: string, receipt: ReceiptView): string[] {
  const signature =
    receipt.signature === null
      ? `signed by ${receipt.signer_ref ?? '-'} (signature not checked)`
      : receipt.signature.ok
        ? `signature verified: key ${receipt.signature.kid ?? '-'} of the signer as the log records it`
        : `signature NOT verified: ${receipt.signature.problem ?? 'failed'}`;
  const tlog =
    receipt.transparency_log === 'not_read'
      ? 'transparency log not read'
      : receipt.transparency_log === null
        ? 'not in the transparency log (no tlog.entry_appended for it)'
        : `in transparency log ${receipt.transparency_log.log_id} at leaf ${receipt.transparency_log.leaf_index}`;
  const out = [
    line(indent, 'receipt', `${receipt.receipt_id} ${receipt.result_code} (${receipt.receipt_class}${receipt.cause === null ? '' : `, ${receipt.cause}`}) at ${receipt.created_at}`),
    line(indent, '  summary', receipt.result_summary),
    line(indent, '  signature', signature),
    line(indent, '  hash', receipt.hash_recomputes ? 'receipt_hash recomputes from the RFC 8785 body' : 'receipt_hash does NOT recompute from the body'),
    line(indent, '  chain', receipt.chained ? 'chained to the task\'s previous receipt' : 'NOT chained to the task\'s previous receipt'),
    line(indent, '  tlog', tlog),
  ];
  const binds = receipt.binds;
  if (binds.request_hash !== null) out.push(line(indent, '  binds request', `sha256 ${binds.request_hash}`));
  if (binds.policy_result_hash !== null) out.push(line(indent, '  binds policy', `sha256 ${binds.policy_result_hash}`));
  if (binds.approval_resolution_ref !== null) out.push(line(indent, '  binds approval', binds.approval_resolution_ref));
  if (binds.grant_hash !== null) out.push(line(indent, '  binds grant', `sha256 ${binds.grant_hash}`));
  if (binds.state_witness_ref !== null) out.push(line(indent, '  binds witness', binds.state_witness_ref));
  if (binds.environment_ref !== null) out.push(line(indent, '  binds cell', binds.environment_ref));
  for (const statement of receipt.not_asserted) out.push(line(indent, '  not asserted', statement));
  return out;
}

function actionLines(action: ActionExplanation): string[] {
  const i = '    ';
  const { what, why, evidence, authority } = action;
  const out: string[] = [`action ${cell(action.action_request_id)} (attempt ${cell(action.attempt_id)}, step ${cell(action.step_id)})`];

  out.push('  What happened');
  out.push(line(i, 'class', what.action_class));
  if (what.downgraded_to !== null) out.push(line(i, 'downgraded to', `${what.downgraded_to.action_class} (${what.downgraded_to.action_request_id})`));
  if (what.supersedes !== null) out.push(line(i, 'supersedes', what.supersedes));
  out.push(line(i, 'proposed by', `${what.proposed_by} at ${what.proposed_at}`));
  out.push(line(i, 'reason', what.reason));
  out.push(line(i, 'targets', what.target_resources.join(', ') || '-'));
  for (const effect of what.expected_effects) out.push(line(i, 'expected effect', effect));
  out.push(line(i, 'reversibility', `${what.reversibility_hint} (the proposer's claim)`));
  for (const param of what.params) out.push(line(i, 'param', param));
  out.push(line(i, 'attempt status', what.status));
  const summary = what.result_summary ?? '';
  out.push(line(i, 'outcome', what.result_code === null ? 'no receipt yet' : summary.startsWith(`${what.result_code}:`) ? summary : `${what.result_code}: ${summary}`));

  out.push('  Why');
  if (why.policy === null) out.push(line(i, 'policy', 'no policy result recorded'));
  else {
    const policy = why.policy;
    out.push(line(i, 'policy', `${policy.outcome}, risk ${policy.risk_band} (${policy.policy_result_id})`));
    out.push(line(i, 'profile', policy.profile));
    if (policy.matched_rules.length > 0) out.push(line(i, 'rules', policy.matched_rules.join(', ')));
    out.push(line(i, 'reasoning', policy.reasoning));
    for (const factor of policy.risk_factors) out.push(line(i, 'risk factor', factor));
    if (policy.downgrade !== null) out.push(line(i, 'downgrade', policy.downgrade));
    for (const condition of policy.revalidation_conditions) out.push(line(i, 'revalidate', condition));
    out.push(line(i, 'evaluated', `${policy.evaluated_at} by ${policy.evaluated_by}`));
  }
  const pack = why.context_pack;
  if (pack === null) out.push(line(i, 'context pack', 'none recorded'));
  else if (pack.status === 'refused') out.push(line(i, 'context pack', `none: ${pack.code} (${pack.message})`));
  else {
    out.push(line(i, 'context pack', `sha256:${pack.sha256}, as of ${pack.as_of} (task events 1-${pack.through_task_seq}): ${pack.items} items, ${pack.omitted} left out, secrets ${pack.secrets}`));
    out.push(line(i, '  shown by', `writ context ${action.attempt_id} (--verify recompiles it from the log)`));
  }
  for (const decision of why.decisions) {
    out.push(line(i, 'decision', `${decision.decision_id}: ${decision.summary}`));
    out.push(line(i, '  by', `${decision.decided_by} at ${decision.created_at} (${decision.decision_type}, risk ${decision.risk_level}, ${decision.reversible ? 'reversible' : 'final'})`));
    out.push(line(i, '  rationale', decision.rationale));
  }

  out.push('  Evidence');
  if (evidence.state_witness === null) out.push(line(i, 'state witness', authority.approval === null ? 'none: no approval was required' : 'none captured'));
  else {
    out.push(line(i, 'state witness', `${evidence.state_witness.ref} observed ${evidence.state_witness.observed_at ?? '-'}`));
    for (const [resource, fingerprint] of Object.entries(evidence.state_witness.fingerprints)) out.push(line(i, '  fingerprint', `${resource} = ${fingerprint}`));
  }
  if (evidence.approval_packet_ref !== null) out.push(line(i, 'approval packet', evidence.approval_packet_ref));
  const execution = evidence.execution;
  if (execution === null) out.push(line(i, 'execution', 'nothing ran'));
  else {
    const ran =
      execution.outcome === 'unknown'
        ? 'outcome unknown'
        : execution.outcome === 'not_run'
          ? 'never started (proven not run; its use was released for a new one)'
          : `${execution.outcome}, exit ${execution.exit_code ?? '-'}${execution.timed_out ? ', timed out' : ''}, ${Math.round(execution.duration_ms)} ms`;
    out.push(line(i, 'execution', `${ran} (event ${execution.event_id}, executor ${execution.executor_id}, ${execution.at})`));
    if (execution.error !== null) out.push(line(i, 'executor said', `${execution.error.code}: ${execution.error.message}`));
    out.push(line(i, 'stdout', `sha256 ${execution.stdout_sha256}`));
    out.push(line(i, 'stderr', `sha256 ${execution.stderr_sha256}`));
  }
  if (evidence.outcome_resolution !== null) {
    const resolution = evidence.outcome_resolution;
    out.push(line(i, 'resolved', `${resolution.outcome} by ${resolution.resolved_by} at ${resolution.resolved_at}${resolution.note === null ? '' : `: ${resolution.note}`} (not observed by Writ)`));
  }
  for (const artifact of evidence.artifacts) {
    out.push(line(i, 'artifact', `${artifact.artifact_id} ${artifact.kind}${artifact.alias === null ? '' : ` (${artifact.alias})`}, ${artifact.byte_size} bytes, sha256 ${short(artifact.content_hash)}`));
  }
  if (evidence.cell !== null) out.push(...cellLines(i, evidence.cell));

  out.push('  Authority');
  out.push(line(i, 'proposer', authority.proposer));
  const approval = authority.approval;
  if (approval === null) out.push(line(i, 'approval', why.policy?.outcome === 'deny' ? 'none: policy denied' : 'none: policy allowed it without approval'));
  else {
    out.push(line(i, 'approval', `${approval.approval_id} ${approval.status}`));
    out.push(line(i, '  requested', `${approval.requested_at}${approval.requested_by === null ? '' : ` for ${approval.requested_by}`}, expires ${approval.expires_at ?? '-'}`));
    if (approval.resolved_by !== null) out.push(line(i, '  resolved by', `${approval.resolved_by} at ${approval.resolved_at ?? '-'}`));
    if (approval.note !== null) out.push(line(i, '  note', approval.note));
    if (approval.witness_validated !== null) out.push(line(i, '  witness', approval.witness_validated ? 'revalidated unchanged before the grant' : 'not revalidated'));
    if (approval.invalidation_cause !== null) out.push(line(i, '  invalidated', approval.invalidation_cause));
  }
  const grant = authority.grant;
  if (grant === null) out.push(line(i, 'grant', 'none minted'));
  else {
    out.push(line(i, 'grant', `${grant.grant_id} (${grant.action_class}) issued by ${grant.issuer} at ${grant.issued_at}`));
    out.push(line(i, '  scope', `paths ${grant.paths.join(', ') || 'none'}; hosts ${grant.hosts.join(', ') || 'none'}; secret handles ${grant.secret_handles.join(', ') || 'none'}`));
    out.push(line(i, '  uses', `${grant.uses_claimed} of ${grant.max_uses} claimed`));
    out.push(line(i, '  expires', grant.expires_at));
    if (grant.jws_sha256 !== null) out.push(line(i, '  jws', `sha256 ${grant.jws_sha256}`));
    if (grant.revoked !== null) out.push(line(i, '  revoked', `by ${grant.revoked.by}: ${grant.revoked.reason}`));
    for (const refusal of grant.refusals) out.push(line(i, '  refused', `${refusal.code}: ${refusal.message}`));
    if (grant.renews !== null) {
      const uses = grant.renews.not_run_uses.length === 0 ? 'no use of it claimed' : `use ${grant.renews.not_run_uses.join(', ')} of it never started (proven not run, released)`;
      out.push(line(i, '  renews', `${grant.renews.grant_id} while executing: ${uses}; it expired at ${grant.renews.expired_at}`));
    }
  }

  out.push('  What changed');
  if (action.changed.length === 0) out.push(line(i, 'files', execution === null ? 'nothing ran' : 'no file in the workspace changed'));
  for (const change of action.changed) {
    out.push(line(i, change.change, `${change.path} (before ${short(change.before_sha256)}, after ${short(change.after_sha256)})`));
  }

  out.push('  Can it be verified');
  if (action.verification.receipts.length === 0) out.push(line(i, 'receipt', 'none issued yet'));
  for (const receipt of action.verification.receipts) out.push(...receiptLines(i, receipt));

  out.push('  Can it be replayed or rolled back');
  out.push(line(i, 'replay', action.replay_class ?? '-'));
  const rollback = action.rollback;
  if (rollback === null) out.push(line(i, 'rollback', 'no receipt yet'));
  else {
    out.push(line(i, 'rollback', `${rollback.supported ? 'supported' : 'not supported'}${rollback.method === null ? '' : ` (${rollback.method})`}: ${rollback.statement}`));
    if ('steps' in rollback) {
      for (const step of rollback.steps) {
        const from = step.restore_artifact_ref === undefined ? '' : ` from ${step.restore_artifact_ref}`;
        out.push(line(i, '  step', `${step.action_class} ${step.path}${from}, if it still ${step.expected_sha256 === null ? 'is absent' : `hashes to ${short(step.expected_sha256)}`}`));
      }
      for (const prerequisite of rollback.prerequisites) out.push(line(i, '  requires', prerequisite));
    }
  }
  for (const by of action.rolled_back_by) {
    const result = by.receipt_id === null ? by.status : `${by.result_code ?? by.status}, receipt ${by.receipt_id}`;
    out.push(line(i, 'rolled back by', `${by.action_request_id} (${result}), naming receipt ${by.rolled_back_receipt_id}`));
  }
  return out;
}

export function explanationLines(explanation: TaskExplanation): string[] {
  const { task } = explanation;
  const out: string[] = [`task ${cell(task.task_id)}${task.title === null ? '' : ` — ${cell(task.title, WIDE)}`}`];
  const i = '  ';
  if (task.goal !== null) out.push(line(i, 'goal', task.goal));
  out.push(line(i, 'status', task.status));
  out.push(line(i, 'owner', task.owner));
  out.push(line(i, 'policy profile', task.policy_profile_ref));
  out.push(line(i, 'files owned', task.files_owned.join(', ') || '-'));
  out.push(line(i, 'created', task.created_at));
  out.push(line(i, 'log', task.head === null ? 'no events' : `${task.events} events, hash chain verified up to seq ${task.head.task_seq} (${short(task.head.hash)})`));
  if (explanation.action_request_id !== null) out.push(line(i, 'showing', `the attempts of action ${explanation.action_request_id}`));
  if (explanation.actions.length === 0) out.push(line(i, 'actions', 'none'));
  for (const action of explanation.actions) out.push('', ...actionLines(action));
  return out;
}
