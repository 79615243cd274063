// Valid examples of every contract, shared by the unit tests. Each test copies
// what it changes (`{ ...sample.x, field: ... }`), never mutates these.
const T0 = '2026-01-15T10:00:00Z';
const T1 = '2026-01-15T10:05:00.250+01:00';
const HASH_A = 'a'.repeat(64);
const HASH_B = 'b'.repeat(64);

export const actionRequest = {
  action_request_id: 'ar-01',
  task_id: 'task-01',
  action_class: 'execute_command',
  target_resources: ['workspace/'],
  params: { argv: ['npm', 'test'], cwd: 'workspace', timeout_ms: 60_000 },
  expected_effects: ['test report written to workspace/report.xml'],
  reversibility_hint: 'reversible',
  reason: 'Run the tests before proposing the patch.',
  proposed_by: 'agent-7',
  proposed_at: T0,
} as const;

export const actionRequestWithNewTask = {
  action_request_id: 'ar-02',
  task: { title: 'Fix flaky test', goal: 'Make the retry test deterministic.', policy_profile: 'local_edit_allowed', files_owned: ['src/retry/**'] },
  step: { kind: 'edit', title: 'Patch retry.ts' },
  action_class: 'write_local',
  target_resources: ['src/retry/retry.ts'],
  params: { path: 'src/retry/retry.ts', content: 'export const retries = 3;\n', mode: 420, note: { by: 'agent' } },
  expected_effects: ['src/retry/retry.ts rewritten'],
  reversibility_hint: 'reversible',
  reason: 'The retry count is read from the wall clock.',
  proposed_by: 'agent-7',
  proposed_at: T0,
} as const;

export const capabilityGrantClaims = {
  iss: 'writ-approval',
  sub: 'executor-1',
  aud: 'writ-executor',
  jti: 'grant-01',
  iat: 1_768_471_200,
  nbf: 1_768_471_200,
  exp: 1_768_471_500,
  task_id: 'task-01',
  step_id: 'step-01',
  attempt_id: 'attempt-01',
  action_class: 'execute_command',
  resource_scope: { paths: ['workspace/**'], hosts: [] },
  max_uses: 1,
  issued_by_principal_id: 'policy-engine',
  policy_result_ref: 'policy_result:pr-01',
  constraints: { execution_mode: 'isolated', params_sha256: HASH_A, timeout_ms: 60_000 },
} as const;

export const receipt = {
  receipt_id: 'rcpt-01',
  task_id: 'task-01',
  step_id: 'step-01',
  attempt_id: 'attempt-01',
  receipt_class: 'command_execution',
  action_request_ref: 'artifact:ar-01',
  input_refs: ['artifact:ctx-01'],
  environment_ref: 'artifact:env-01',
  policy_result_ref: 'policy_result:pr-01',
  approval_ref: null,
  capability_grant_ref: 'grant:grant-01',
  output_refs: ['artifact:transcript-01'],
  result_code: 'succeeded',
  result_summary: 'npm test exited 0',
  created_at: T1,
  replay_class: 'idempotent_replay',
  verifiability: 'signed',
  signer_ref: 'receipt-key-2026-01',
  signature: 'c2lnbmF0dXJl',
  rollback_supported: false,
  prev_receipt_hash: null,
  receipt_hash: HASH_B,
} as const;

export const eventEnvelope = {
  event_id: 'evt-01',
  schema_version: 1,
  event_type: 'task.created',
  entity_type: 'task',
  entity_id: 'task-01',
  task_id: 'task-01',
  task_seq: 1,
  occurred_at: T0,
  actor_type: 'service',
  actor_id: 'writ-orchestrator',
  payload: { title: 'Fix flaky test' },
  causation_id: null,
  correlation_id: 'corr-01',
  prev_event_hash: null,
  hash: HASH_A,
} as const;

export const principal = { principal_id: 'agent-7', principal_type: 'agent', display_name: 'Coding agent 7', created_at: T0 } as const;

export const task = {
  task_id: 'task-01',
  title: 'Fix flaky test',
  goal: 'Make the retry test deterministic.',
  status: 'running',
  priority: 'normal',
  owner_principal_id: 'user-1',
  policy_profile_ref: 'local_edit_allowed@3',
  task_contract_ref: 'artifact:contract-01',
  created_at: T0,
  updated_at: T1,
  files_owned: ['src/retry/**'],
} as const;

export const step = {
  step_id: 'step-01',
  task_id: 'task-01',
  kind: 'run_tests',
  title: 'Run the test suite',
  contract_ref: 'artifact:step-contract-01',
  status: 'running',
  depends_on: [],
  max_attempts: 3,
  created_at: T0,
  updated_at: T1,
} as const;

export const stepAttempt = {
  attempt_id: 'attempt-01',
  task_id: 'task-01',
  step_id: 'step-01',
  attempt_no: 1,
  status: 'awaiting_approval',
  context_pack_ref: 'artifact:ctx-01',
  working_state_ref: null,
  workspace_lease_ref: 'lease-01',
  idempotency_key: 'task-01/step-01/1',
  started_at: T0,
  finished_at: null,
} as const;

export const ingressRecord = {
  ingress_id: 'ing-01',
  conversation_id: 'conv-01',
  source_channel: 'nats',
  raw_text: 'eyJhbGciOiJFZERTQSJ9.e30.c2ln',
  normalized_text: '{}',
  status: 'bound',
  resolution: 'start_new_root',
  created_at: T0,
  updated_at: T0,
  actor: 'agent-7',
  idempotency_key: 'ar-02',
  action_request_id: 'ar-02',
} as const;

export const policyResult = {
  policy_result_id: 'pr-01',
  task_id: 'task-01',
  step_id: 'step-01',
  attempt_id: 'attempt-01',
  action_request_id: 'ar-01',
  outcome: 'allow',
  action_class: 'execute_command',
  risk_band: 'moderate',
  action_summary: 'run npm test in the workspace',
  risk_summary: 'local command, no network',
  policy_profile_ref: 'local_edit_allowed@3',
  policy_version: 'sha256:' + HASH_A,
  affected_resources: ['workspace/'],
  reasoning_summary: 'commands inside files_owned are allowed',
  matched_rules: ['allow_local_commands'],
  witness_required: false,
  revalidation_conditions: [],
  evaluated_at: T0,
  evaluated_by: 'policy-engine',
} as const;

export const evidenceRef = {
  artifact_id: 'transcript-01',
  selector: { kind: 'line_range', start: 10, end: 12 },
  excerpt_hash: HASH_A,
  capture_method: 'command_output',
  confidence: 0.9,
  trust_tier: 'observed',
} as const;

export const decision = {
  decision_id: 'dec-01',
  task_id: 'task-01',
  step_id: 'step-01',
  attempt_id: null,
  decision_type: 'execution',
  summary: 'Run tests before patching',
  rationale: 'The failure must be reproduced first.',
  evidence_refs: [evidenceRef],
  risk_level: 'low',
  decided_by: 'agent-7',
  reversible: true,
  created_at: T0,
} as const;

export const approval = {
  approval_id: 'appr-01',
  task_id: 'task-01',
  step_id: 'step-01',
  attempt_id: 'attempt-01',
  status: 'pending',
  approval_type: 'action',
  requested_action_ref: 'artifact:ar-01',
  approval_packet_ref: 'artifact:packet-01',
  requested_at: T0,
  resolved_at: null,
  resolved_by: null,
  expires_at: T1,
} as const;

export const approvalPacket = {
  task_id: 'task-01',
  step_id: 'step-01',
  attempt_id: 'attempt-01',
  action_request_id: 'ar-01',
  action_class: 'vcs_mutation',
  action_summary: 'push branch writ/fix-retry',
  risk_band: 'high',
  risk_summary: 'publishes commits to the shared remote',
  decision_rationale: 'The patch passed the tests.',
  evidence_refs: [evidenceRef],
  expected_effects: ['branch writ/fix-retry created on origin'],
  impacted_resources: ['repo:writ@refs/heads/writ/fix-retry'],
  rollback_available: true,
  expires_at: T1,
  policy_result_ref: 'policy_result:pr-01',
} as const;

export const artifact = {
  artifact_id: 'transcript-01',
  class: 'evidence',
  kind: 'command.transcript',
  uri: `cas://sha256/${HASH_A}`,
  content_hash: HASH_A,
  media_type: 'text/plain; charset=utf-8',
  byte_size: 2048,
  created_at: T1,
  producer: 'executor-1',
  retention_class: 'audit',
  trust_tier: 'observed',
  sensitivity_class: 'internal',
  attempt_id: 'attempt-01',
} as const;

/** One valid sample per registered contract. */
export const SAMPLES = {
  EventEnvelope: eventEnvelope,
  Principal: principal,
  Task: task,
  Step: step,
  StepAttempt: stepAttempt,
  IngressRecord: ingressRecord,
  ActionRequest: actionRequest,
  PolicyResult: policyResult,
  Decision: decision,
  Approval: approval,
  ApprovalPacket: approvalPacket,
  CapabilityGrantClaims: capabilityGrantClaims,
  Artifact: artifact,
  EvidenceRef: evidenceRef,
  Receipt: receipt,
} as const;
