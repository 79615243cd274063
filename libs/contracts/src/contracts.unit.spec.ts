import { describe, expect, it } from 'vitest';
import { SAMPLES } from '../test/samples.js';
import { issuesOf, pathsOf } from '../test/issues.js';
import { CONTRACT_NAMES, CONTRACTS, jsonSchemaOf, parseNamedContract, type ContractName } from './index.js';

/**
 * Minimum fields of Hermit seed 004 section 8 (and 11.3 / 14.5 / 16.7 / the
 * Writ ActionRequest wire shape), by contract. Every one must be a required
 * property of the contract: nullable when it may not apply yet, never optional.
 */
const MINIMUM_FIELDS: Record<ContractName, readonly string[]> = {
  EventEnvelope: [
    'event_id', 'schema_version', 'event_type', 'entity_type', 'entity_id', 'task_id', 'task_seq', 'occurred_at',
    'actor_type', 'actor_id', 'payload', 'causation_id', 'correlation_id', 'prev_event_hash', 'hash',
  ],
  Principal: ['principal_id', 'principal_type', 'display_name', 'created_at'],
  Task: [
    'task_id', 'title', 'goal', 'status', 'priority', 'owner_principal_id', 'policy_profile_ref', 'task_contract_ref',
    'created_at', 'updated_at',
  ],
  Step: ['step_id', 'task_id', 'kind', 'title', 'contract_ref', 'status', 'depends_on', 'max_attempts', 'created_at', 'updated_at'],
  StepAttempt: [
    'attempt_id', 'task_id', 'step_id', 'attempt_no', 'status', 'context_pack_ref', 'working_state_ref',
    'workspace_lease_ref', 'idempotency_key', 'started_at', 'finished_at',
  ],
  IngressRecord: [
    'ingress_id', 'conversation_id', 'source_channel', 'raw_text', 'normalized_text', 'status', 'resolution',
    'created_at', 'updated_at',
  ],
  ActionRequest: [
    'action_request_id', 'action_class', 'target_resources', 'params', 'expected_effects', 'reversibility_hint', 'reason',
    'proposed_by', 'proposed_at',
  ],
  PolicyResult: [
    'outcome', 'action_summary', 'risk_summary', 'policy_profile_ref', 'policy_version', 'affected_resources',
    'reasoning_summary', 'revalidation_conditions',
  ],
  Decision: [
    'decision_id', 'task_id', 'step_id', 'attempt_id', 'decision_type', 'summary', 'rationale', 'evidence_refs',
    'risk_level', 'decided_by', 'reversible', 'created_at',
  ],
  Approval: [
    'approval_id', 'task_id', 'step_id', 'attempt_id', 'status', 'approval_type', 'requested_action_ref',
    'approval_packet_ref', 'requested_at', 'resolved_at', 'resolved_by',
  ],
  ApprovalPacket: [
    'action_summary', 'risk_summary', 'decision_rationale', 'evidence_refs', 'expected_effects', 'impacted_resources',
    'rollback_available', 'expires_at',
  ],
  // Not a Hermit object: the director's signed answer to an approval packet (its `packet_hash`).
  ApprovalResolution: ['approval_id', 'decision', 'packet_hash', 'resolved_by', 'resolved_at'],
  // 8.12 names → claims: grant_id = jti, issued_to_principal_id = sub, issued_at = iat, expires_at = exp.
  CapabilityGrantClaims: [
    'jti', 'task_id', 'step_id', 'attempt_id', 'sub', 'issued_by_principal_id', 'action_class', 'resource_scope', 'iat',
    'exp', 'max_uses',
  ],
  Artifact: [
    'artifact_id', 'class', 'kind', 'uri', 'content_hash', 'media_type', 'byte_size', 'created_at', 'producer',
    'retention_class', 'trust_tier', 'sensitivity_class',
  ],
  EvidenceRef: ['artifact_id', 'capture_method', 'trust_tier'],
  Receipt: [
    'receipt_id', 'task_id', 'step_id', 'attempt_id', 'receipt_class', 'action_request_ref', 'input_refs',
    'environment_ref', 'policy_result_ref', 'approval_ref', 'capability_grant_ref', 'output_refs', 'result_code',
    'result_summary', 'created_at',
  ],
  // Seed 003 (prompt-protocols): brief.json, done.json, blocked.json and the correction record.
  Brief: [
    'id', 'mission', 'purpose', 'context', 'whats_done', 'current_task', 'done_criteria', 'verify_command', 'key_decisions', 'spec',
    'relevant_memories', 'ship', 'audit_gates', 'lifecycle',
  ],
  DoneClaim: ['agent', 'status', 'started_at', 'finished_at', 'mission', 'evidence', 'regressions', 'pending_actions'],
  BlockedClaim: ['session', 'blocked_at', 'reason', 'question', 'best_guess', 'fallback_action', 'can_resume_without_answer', 'human_required_for'],
  Correction: ['corrects_claim_id', 'corrected_at', 'status', 'reason', 'regressions'],
  SpawnManifest: [
    'manifest_version', 'seed_id', 'parent_seed_id', 'anchor_id', 'mode', 'role', 'info_budget', 'constraints', 'capabilities',
    'handoff_channel', 'ttl', 'lineage', 'key_binding', 'oep', 'mission_id', 'actor_id', 'policy', 'resource_limits',
    'runtime_context', 'signature',
  ],
  LastWill: [
    'manifest_version', 'seed_id', 'parent_seed_id', 'anchor_id', 'mode', 'manifest_hash', 'status', 'retired_at', 'summary',
    'deltas', 'open_questions', 'governance', 'artifacts', 'heartbeat_last', 'lineage', 'reconstitution', 'signature',
  ],
  Heartbeat: ['heartbeat_version', 'seed_id', 'parent_seed_id', 'heartbeat_seq', 'last_event_seq', 'constraints', 'ttl', 'sent_at', 'signature'],
  CrashReport: ['report_version', 'seed_id', 'parent_seed_id', 'reason', 'observed_at', 'signature'],
  ReceiptBundle: ['bundle_version', 'task_id', 'events', 'receipts', 'tree_head', 'principals', 'keys', 'not_asserted', 'bundle_hash'],
  // RFC 9457 members and Writ's code (instance is optional there).
  ProblemDetails: ['type', 'title', 'status', 'detail', 'code'],
  // Hermit 15.2: not listed field by field in section 8; these are what the working state view needs.
  WorkingState: ['task_id', 'revision', 'limits', 'entries', 'updated_at'],
  Belief: ['belief_id', 'task_id', 'claim', 'scope', 'evidence_refs', 'confidence', 'trust_tier', 'status', 'created_at'],
  MemoryRecord: ['memory_id', 'claim', 'scope', 'evidence_refs', 'trust_tier', 'promotion_reason', 'status', 'created_at'],
  // Hermit 15.6: a pack for one attempt, with what was left out.
  ContextPack: ['kind', 'task_id', 'attempt_id', 'items', 'omitted'],
  // Which pack an attempt was proposed under: where its bytes are and what log prefix made them.
  ContextPackCompiled: ['attempt_id', 'sha256', 'uri', 'byte_size', 'through_task_seq', 'as_of'],
  // Hermit 17.3: a secret by reference; the name of where it lives is all there is.
  SecretReference: ['secret_ref'],
  // Issue 17: a policy profile's knowledge bounds, as every verdict records them.
  KnowledgeLimits: ['working_state', 'context_pack'],
};

function requiredKeys(contract: ContractName): string[] {
  return (jsonSchemaOf(contract).required as string[] | undefined) ?? [];
}

describe('CONTRACTS registry', () => {
  it.each(CONTRACT_NAMES)('given a valid %s, when parsed, then it is accepted unchanged', (contract) => {
    // given
    const sample = SAMPLES[contract];
    // when
    const parsed = parseNamedContract(contract, sample);
    // then
    expect(parsed).toEqual(sample);
  });

  it.each(CONTRACT_NAMES)('given %s, then every spec minimum field is a required property', (contract) => {
    // given
    const required = requiredKeys(contract);
    // then
    expect(required).toEqual(expect.arrayContaining([...MINIMUM_FIELDS[contract]]));
  });

  it.each(CONTRACT_NAMES)('given a %s missing any required field, when parsed, then that field is the offending path', (contract) => {
    for (const key of requiredKeys(contract)) {
      // given
      const input: Record<string, unknown> = { ...SAMPLES[contract] };
      delete input[key];
      // when
      const codes = issuesOf(contract, input)
        .filter((issue) => issue.path === key && issue.code !== 'custom')
        .map((issue) => issue.code);
      // then (a missing enum is an invalid_value, anything else an invalid_type; cross-field rules may add a custom issue)
      expect(codes, key).toEqual([expect.stringMatching(/^invalid_(type|value)$/)]);
    }
  });

  it.each(CONTRACT_NAMES.filter((name) => name !== 'EventEnvelope'))(
    'given a %s with an unknown top-level key, when parsed, then unrecognized_keys is reported at the root',
    (contract) => {
      // given
      const input = { ...SAMPLES[contract], surprise: true };
      // when
      const issues = issuesOf(contract, input);
      // then
      expect(issues).toEqual([{ path: '', code: 'unrecognized_keys' }]);
    },
  );

  it('given every registered schema, then each is a distinct zod schema with a JSON Schema title equal to its name', () => {
    // then
    expect(new Set(Object.values(CONTRACTS)).size).toBe(CONTRACT_NAMES.length);
    for (const name of CONTRACT_NAMES) expect(jsonSchemaOf(name).title).toBe(name);
  });

  it('given a non-object input, when parsed, then the root is the offending path', () => {
    for (const input of [null, 'x', 42, []]) expect(pathsOf('Receipt', input)).toEqual(['']);
  });
});
