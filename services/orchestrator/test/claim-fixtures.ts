import type { ActionRequest, BlockedClaim, Brief, DoneClaim, EventDraft } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { verifyIdsFor } from '../src/application/ids.js';
import { AGENT, T0, type TaskIds } from './task-fixtures.js';

/** A brief whose scope is `src/**` and whose verify command is `sh verify.sh`. */
export function briefOf(overrides: Partial<Brief> = {}): Brief {
  return {
    id: 'brief-1',
    mission: 'Write the greeting module.',
    purpose: 'The app needs a greeting.',
    context: {},
    whats_done: [],
    current_task: 'src/greeting.txt',
    done_criteria: 'verify.sh exits 0',
    verify_command: ['sh', 'verify.sh'],
    key_decisions: [],
    spec: { scope: { files_owned: ['src/**'] } },
    relevant_memories: [],
    ship: false,
    audit_gates: [],
    lifecycle: 'ephemeral',
    ...overrides,
  };
}

/** The first action of a briefed task: a command writing under src/. */
export function briefedRequest(ids: TaskIds, brief: Brief = briefOf()): ActionRequest {
  return {
    action_request_id: `ar-${ids.task_id}`,
    task: { title: brief.mission, goal: brief.purpose, policy_profile: 'local_edit_allowed', files_owned: [...brief.spec.scope.files_owned], brief },
    action_class: 'execute_command',
    target_resources: ['src/greeting.txt'],
    params: { argv: ['sh', '-c', 'echo hello > src/greeting.txt'] },
    expected_effects: ['src/greeting.txt written'],
    reversibility_hint: 'reversible',
    reason: 'The brief asks for it.',
    proposed_by: AGENT,
    proposed_at: T0,
  } as ActionRequest;
}

/** A done claim that holds against `briefOf()`. */
export function doneClaimOf(overrides: Partial<DoneClaim> = {}, brief: Brief = briefOf()): DoneClaim {
  return {
    agent: AGENT,
    status: 'done_clean',
    started_at: T0,
    finished_at: T0,
    mission: brief.mission,
    evidence: { verify_command: [...brief.verify_command], verify_exit_code: 0, verify_stdout: 'ok', verify_stderr: '', artefacts: [] },
    regressions: [],
    pending_actions: [],
    ...overrides,
  };
}

export function blockedClaimOf(overrides: Partial<BlockedClaim> = {}): BlockedClaim {
  return {
    session: 'worker-1',
    blocked_at: T0,
    reason: 'credential_missing',
    question: 'The staging key is missing from the vault; which key may the test use?',
    best_guess: 'The local stub.',
    fallback_action: 'Running the unit tests against the local stub.',
    can_resume_without_answer: true,
    human_required_for: 'credential',
    ...overrides,
  };
}

function claimDraft(ids: TaskIds, type: string, claimId: string, body: Record<string, unknown>, at: string): EventDraft {
  return {
    event_id: `fx-${claimId}-${type.replace('.', '_')}`,
    schema_version: 1,
    event_type: type,
    entity_type: 'task',
    entity_id: ids.task_id,
    occurred_at: at,
    actor_type: 'service',
    actor_id: 'writ-orchestrator',
    payload: { claim_id: claimId, claimed_by: AGENT, claimed_at: at, claim_jws_sha256: sha256Hex(claimId), ...body },
    causation_id: null,
    correlation_id: ids.task_id,
    idempotency_key: `${claimId}:${type}`,
  };
}

/** What the claim handler records for a signed done.json. */
export function doneSubmittedDraft(ids: TaskIds, claimId: string, claim: DoneClaim = doneClaimOf(), at = T0): EventDraft {
  return claimDraft(ids, 'claim.done_submitted', claimId, { claim }, at);
}

export function blockedSubmittedDraft(ids: TaskIds, claimId: string, claim: BlockedClaim = blockedClaimOf(), at = T0): EventDraft {
  return claimDraft(ids, 'claim.blocked_submitted', claimId, { claim }, at);
}

/** The TaskIds of a claim's verify run, to drive it with the task fixtures. */
export function verifyRunIds(ids: TaskIds, claimId: string): TaskIds {
  const verify = verifyIdsFor(ids.task_id, claimId);
  return { task_id: ids.task_id, step_id: verify.stepId, attempt_id: verify.attemptId };
}
