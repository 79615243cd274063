import { LIMITS, type ActionRequest, type EventEnvelope } from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import type { StateWitness } from '@writ/kernel';
import { ApprovalServiceError } from './approval-errors.js';
import type { WorkspaceObservation } from './ports.js';
import { findPolicyEvaluation } from './task-history.js';

/**
 * What a state witness covers (Hermit 16.8): the request's target resources and
 * `params.path` (the same resources the grant's scope will name), each once.
 */
export function witnessResources(request: ActionRequest): string[] {
  const resources = new Set(request.target_resources);
  if (typeof request.params.path === 'string') resources.add(request.params.path);
  if (resources.size > LIMITS.targetResources) {
    throw new ApprovalServiceError('APPROVAL_WITNESS_TOO_LARGE', `a state witness fingerprints at most ${LIMITS.targetResources} resources; the request names ${resources.size}`, {
      details: { resources: resources.size, max: LIMITS.targetResources },
    });
  }
  return [...resources];
}

/**
 * Whether the policy result the approval answers asked for a state witness. A result that
 * cannot be found in the task's log counts as asking for one: capturing a witness that was
 * not needed only adds a check, leaving out one that was needed would let drift through.
 */
export function witnessRequired(events: readonly EventEnvelope[], policyResultId: string): boolean {
  return findPolicyEvaluation(events, policyResultId)?.policy_result.witness_required ?? true;
}

/** The kernel's StateWitness for an observation; its ref is the content address of what was observed. */
export function stateWitness(taskId: string, observation: WorkspaceObservation): StateWitness {
  const fingerprints = { ...observation.fingerprints };
  const ref = `sha256:${sha256Hex(canonicalJson({ task_id: taskId, fingerprints, observed_at: observation.observed_at }))}`;
  return { ref, fingerprints, observed_at: observation.observed_at };
}
