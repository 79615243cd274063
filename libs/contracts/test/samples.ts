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

export const receiptBundle = {
  bundle_version: 'writ.receipt-bundle.v1',
  task_id: 'task-01',
  events: [eventEnvelope],
  receipts: [
    {
      receipt,
      jws: 'eyJhbGciOiJFZERTQSJ9.e30.c2lnbmF0dXJl',
      event_id: 'evt-01',
      references: [
        { field: 'policy_result_ref', ref: 'policy_result:pr-01', event_id: 'evt-01', pointer: '/payload/policy_result', binding: 'object', sha256: HASH_A },
      ],
      inclusion_proof: { log_id: 'writ-receipts', leaf_index: 0, tree_size: 1, leaf_hash: HASH_A, audit_path: [] },
    },
  ],
  tree_head: { log_id: 'writ-receipts', tree_size: 1, root_hash: HASH_A, timestamp: T1, signer_ref: 'receipt-key-2026-01', jws: 'eyJhbGciOiJFZERTQSJ9.e30.c2lnbmF0dXJl' },
  principals: [{ principal_id: 'writ-receipt', events: [{ ...eventEnvelope, entity_type: 'principal', entity_id: 'writ-receipt', task_id: 'writ-receipt' }] }],
  keys: [
    {
      principal_id: 'writ-receipt',
      jwk: { kty: 'OKP', crv: 'Ed25519', x: 'A'.repeat(43), kid: 'receipt-key-2026-01' },
      valid_from: T0,
      valid_until: null,
    },
  ],
  not_asserted: [{ subject: 'effects', statement: 'No external effect is asserted.' }],
  bundle_hash: HASH_B,
} as const;

const FP_PARENT = `sha256:${'c'.repeat(64)}`;
const FP_CHILD = `sha256:${'d'.repeat(64)}`;
const SEED_SIGNATURE = { algo: 'ed25519', payload_hash: HASH_B, sig: `${'A'.repeat(86)}==` } as const;

export const spawnManifest = {
  manifest_version: 'seed.spawn.v1',
  seed_id: 'seed-docs-01',
  parent_seed_id: 'director-1',
  anchor_id: 'anchor:docs',
  mode: 'ephemeral',
  role: 'docs.indexer',
  info_budget: { scope: 'on-topic', notes: 'index the docs folder only' },
  constraints: { anchor_hash: HASH_A, parent_hash: HASH_A, policy_hash: HASH_B, extra: [] },
  capabilities: { fs: ['read:docs/**', 'write:out/**'], net: [], shell: ['ls'], providers: [] },
  handoff_channel: 'trace',
  ttl: { created_at: T0, expires_at: '2026-01-15T11:00:00Z' },
  lineage: { install_id: 'install-01', genesis_fingerprint: 'genesis:01', parent_key_fingerprint: FP_PARENT },
  key_binding: { child_key_fingerprint: FP_CHILD, key_role: 'seed_ephemeral' },
  oep: { version: '1', policy_profile: 'strict' },
  mission_id: 'mission-01',
  actor_id: 'director-1',
  policy: { confidentiality: 'internal', redact: ['api_key'] },
  resource_limits: { max_tokens: 10_000, max_calls: 100, max_wallclock_seconds: 3_600 },
  runtime_context: { host_id: 'host-1', namespace: 'default' },
  signature: { ...SEED_SIGNATURE, signer: FP_PARENT },
} as const;

export const lastWill = {
  manifest_version: 'seed.retire.v1',
  seed_id: 'seed-docs-01',
  parent_seed_id: 'director-1',
  anchor_id: 'anchor:docs',
  mode: 'ephemeral',
  manifest_hash: HASH_B,
  status: 'retired',
  retired_at: '2026-01-15T10:30:00Z',
  summary: 'Indexed 12 documents.',
  deltas: [{ epistemic_type: 'retrieved', confidence: 0.9, content: 'docs/a.md defines the API', provenance: 'docs/a.md', support: ['docs/a.md'] }],
  open_questions: ['Is docs/b.md still current?'],
  governance: { violations: [], unknowns_disclosed: true, oep_compliant: true },
  artifacts: [{ path: 'out/index.json', sha256: HASH_A, encrypted_to: FP_PARENT, channel: 'trace' }],
  heartbeat_last: '2026-01-15T10:29:00Z',
  lineage: { install_id: 'install-01', genesis_fingerprint: 'genesis:01', child_key_fingerprint: FP_CHILD },
  reconstitution: { reconstituted_from_seed_id: null },
  signature: { ...SEED_SIGNATURE, signer: FP_CHILD },
} as const;

export const heartbeat = {
  heartbeat_version: 'seed.heartbeat.v1',
  seed_id: 'seed-docs-01',
  parent_seed_id: 'director-1',
  heartbeat_seq: 1,
  last_event_seq: 4,
  constraints: { anchor_hash: HASH_A, parent_hash: HASH_A, policy_hash: HASH_B },
  ttl: { expires_at: '2026-01-15T11:00:00Z' },
  sent_at: T1,
  signature: { ...SEED_SIGNATURE, signer: FP_CHILD },
} as const;

export const crashReport = {
  report_version: 'seed.crash.v1',
  seed_id: 'seed-docs-01',
  parent_seed_id: 'director-1',
  reason: 'the worker process exited with status 137',
  observed_at: T1,
  signature: { ...SEED_SIGNATURE, signer: FP_PARENT },
} as const;

export const brief = {
  id: 'brief-01',
  mission: 'Make the retry test deterministic.',
  purpose: 'CI fails one run in ten on the retry test.',
  context: { project_root: 'workspace', stack: 'node' },
  whats_done: [],
  current_task: 'src/retry/retry.ts: read the retry count from config, not the clock.',
  done_criteria: 'npm test -- retry passes ten times in a row.',
  verify_command: ['npm', 'test', '--', 'retry'],
  key_decisions: [],
  spec: { scope: { files_owned: ['src/retry/**'] } },
  relevant_memories: [],
  ship: false,
  audit_gates: ['codeaudit'],
  lifecycle: 'ephemeral',
} as const;

export const doneClaim = {
  agent: 'worker-retry-1',
  project: 'retry',
  status: 'done_clean',
  started_at: T0,
  finished_at: '2026-01-15T10:20:00Z',
  duration_sec: 1_200,
  mission: 'Make the retry test deterministic.',
  evidence: { verify_command: ['npm', 'test', '--', 'retry'], verify_exit_code: 0, verify_stdout: 'ok', verify_stderr: '', artefacts: [] },
  audit: { gates_required: ['codeaudit'], gates_passed: ['codeaudit'], scores: { codeaudit: 92 }, verdict: 'satisfied' },
  regressions: [],
  pending_actions: [],
} as const;

export const blockedClaim = {
  session: 'worker-retry-1',
  blocked_at: T0,
  reason: 'credential_missing',
  question: 'The staging API key is not in the vault; which key should the integration test use?',
  best_guess: 'Skip the staging test and run the local one.',
  fallback_action: 'Running the local retry tests while the key is missing.',
  can_resume_without_answer: true,
  human_required_for: 'credential',
} as const;

export const correction = {
  corrects_claim_id: 'dcl-0123456789abcdef0123456789abcdef',
  corrected_at: T1,
  status: 'failed',
  reason: 'The retry test regressed on CI after done_clean.',
  regressions: ['retry test fails on the second run'],
} as const;

export const approvalResolution = {
  approval_id: 'apr_01J0000000000000000000000',
  decision: 'grant',
  packet_hash: `sha256:${'c'.repeat(64)}`,
  resolved_by: 'director-1',
  resolved_at: T1,
  note: 'looked at the diff: fine',
} as const;

// The projection's rows as the HTTP API serves them and <root>.proj.<view>.<id> publishes them
// (timestamps UTC with milliseconds), checked against the dashboard contract's row schemas
// (@writ/contracts/projection-rows).
const R0 = '2026-01-15T10:00:00.000Z';
const R1 = '2026-01-15T10:05:00.250Z';

export const actionRow = {
  action_request_id: 'ar-01', status: 'succeeded', principal_id: 'agent-7', ingress_id: 'ing-01', task_id: 'task-01', step_id: 'step-01',
  attempt_id: 'attempt-01', action_class: 'execute_command', policy_outcome: 'allow', risk_band: 'low', policy_result_id: 'pr-01',
  approval_id: null, grant_id: 'grant-01', receipt_id: 'receipt-01', reason_code: null, received_at: R0, created_at: R0, updated_at: R1, row_version: 52,
} as const;

export const taskRow = {
  task_id: 'task-01', title: 'Fix flaky test', goal: 'Make the retry test deterministic.', status: 'completed', owner_principal_id: 'agent-7',
  policy_profile: 'local_edit_allowed', last_task_seq: 15, last_event_type: 'task.completed', created_at: R0, updated_at: R1, row_version: 52,
} as const;

export const taskEventRow = {
  task_id: 'task-01', task_seq: 1, stream_seq: 42, event_id: 'evt-01', event_type: 'task.created', entity_type: 'task', entity_id: 'task-01',
  step_id: null, attempt_id: null, actor_type: 'service', actor_id: 'writ-orchestrator', payload: { title: 'Fix flaky test' }, occurred_at: R0,
} as const;

export const approvalRow = {
  approval_id: 'approval-01', task_id: 'task-01', step_id: 'step-01', attempt_id: 'attempt-01', status: 'pending',
  packet: { action_class: 'delete_local', risk_band: 'high' }, requested_by: 'writ-approval', resolved_by: null, resolution_note: null,
  requested_at: R0, resolved_at: null, expires_at: R1, updated_at: R0, row_version: 20,
} as const;

export const grantRow = {
  grant_id: 'grant-01', task_id: 'task-01', step_id: 'step-01', attempt_id: 'attempt-01', action_class: 'execute_command', issued_to: 'executor-1',
  issued_by: 'writ-approval', issued_at: R0, expires_at: R1, max_uses: 1, uses: 1, status: 'exhausted', updated_at: R1, row_version: 50,
} as const;

export const receiptRow = {
  receipt_id: 'receipt-01', task_id: 'task-01', step_id: 'step-01', attempt_id: 'attempt-01', action_request_id: 'ar-01', result_code: 'succeeded',
  receipt_class: 'command_execution', receipt: { receipt_id: 'receipt-01' }, jws: 'eyJhbGciOiJFZERTQSJ9.e30.c2ln', receipt_hash: HASH_A, created_at: R1, row_version: 51,
} as const;

export const principalRow = {
  principal_id: 'agent-7', type: 'agent', display_name: 'Agent 7', roles: ['executor'],
  keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'A'.repeat(43), kid: 'agent-7-k1' }], revoked_kids: [], registered_at: R0, updated_at: R0, row_version: 3,
} as const;

export const stepRow = {
  step_id: 'step-01', task_id: 'task-01', kind: 'edit', title: 'Patch retry.ts', status: 'succeeded', depends_on: [], max_attempts: 3, attempt_count: 1,
  current_attempt_id: 'attempt-01', current_attempt_no: 1, current_attempt_status: 'succeeded', blocked_reason: null, last_task_seq: 14,
  last_event_type: 'step.succeeded', planned_at: R0, updated_at: R1, row_version: 50,
} as const;

export const attemptRow = {
  attempt_id: 'attempt-01', task_id: 'task-01', step_id: 'step-01', attempt_no: 1, status: 'succeeded', action_request_id: 'ar-01',
  action_class: 'execute_command', policy_outcome: 'allow', risk_band: 'low', approval_id: null, grant_id: 'grant-01', execution_outcome: 'completed',
  result_code: 'succeeded', receipt_id: 'receipt-01', reason_code: null, context_pack_sha256: HASH_B, context_pack_uri: `nats-obj://WRIT_ARTIFACTS/sha256-${HASH_B}`,
  context_pack_byte_size: 912, last_task_seq: 14, last_event_type: 'attempt.succeeded', created_at: R0, updated_at: R1, row_version: 50,
} as const;

export const artifactRow = {
  artifact_id: 'artifact-01', sha256: HASH_B, kind: 'command.transcript', class: 'evidence', media_type: 'text/plain', byte_size: 120,
  uri: `artifact:sha256:${HASH_B}`, task_id: 'task-01', step_id: 'step-01', attempt_id: 'attempt-01', producer: 'writ-executor', retention_class: 'task',
  sensitivity_class: 'internal', event_id: 'evt-10', event_type: 'execution.completed', task_seq: 10, created_at: R1, row_version: 48,
} as const;

export const decisionRow = {
  task_id: 'task-01', task_seq: 4, decision_id: 'dec-01', source: 'policy.evaluated', step_id: 'step-01', attempt_id: 'attempt-01', decision_type: 'safety',
  summary: 'allow', rationale: 'within files_owned', risk_level: 'low', decided_by: 'writ-policy', reversible: true, evidence_refs: [],
  policy_result_id: 'pr-01', policy_outcome: 'allow', policy_profile: 'local_edit_allowed', policy_version: '1', subject_ref: null, outcome_event: null,
  stream_seq: 45, created_at: R0, row_version: 45,
} as const;

export const cellRow = {
  cell_id: 'task-01', source: 'cell', task_id: 'task-01', status: 'ACTIVE', director_id: 'director-1', backend: 'docker',
  participants: [{ participant_id: 'p-1', principal_id: 'agent-7', role: 'executor', status: 'active' }], active_expires_at: R1, last_heartbeat_at: R0,
  checkpoints: 0, last_checkpoint_id: null, last_checkpoint_sha256: null, closed_reason: null, container_id: 'c0ffee', image: 'writ-cell:latest',
  image_id: 'sha256:abc', network_mode: 'none', executions: 1, last_execution_outcome: 'completed', last_cell_seq: 3, last_task_seq: 10,
  last_event_type: 'cell.activated', created_at: R0, updated_at: R1, row_version: 48,
} as const;

export const workingStateRow = {
  task_id: 'task-01', revision: 2, limits: { max_entries: 64, max_entry_bytes: 4096, max_total_bytes: 65536 },
  entries: [
    { key: 'objective.main', kind: 'objective', value: 'fix the failing test', pinned: true },
    { key: 'resource.token', kind: 'resource_handle', value: null, sensitivity: 'secret', value_withheld: true },
  ],
  entry_count: 2, last_request_id: 'req-02', last_revised_by: 'agent-7', compactions: 0, opened_at: R0, updated_at: R1, row_version: 49,
} as const;

export const beliefRow = {
  task_id: 'task-01', belief_id: 'belief-01', claim: 'the tests pass on main', claim_withheld: false, scope: 'repo:writ', trust_tier: 'verified',
  status: 'active', confidence: 0.9, version: 1, evidence_refs: [{ kind: 'receipt', id: 'rct-01' }], asserted_by: 'agent-7', asserter_type: 'agent',
  step_id: null, attempt_id: null, supersedes: null, superseded_by: null, contradicts: [], needs_review: false, expires_at: null, revoked_by: null,
  revoke_reason: null, epistemic_type: null, sensitivity: null, created_at: R0, updated_at: R0, row_version: 50,
} as const;

export const memoryRow = {
  memory_id: 'mem-01', task_id: 'task-01', claim: 'the API listens on 8080', claim_withheld: false, scope: 'repo:writ', trust_tier: 'verified', status: 'invalidated',
  evidence_refs: [{ kind: 'receipt', id: 'rct-01' }], promotion_reason: 'every later task needs the port', source_kind: 'belief', source_id: 'belief-01',
  invalidation_mode: 'manual', expires_at: null, retention_class: 'project', promoted_by: 'agent-7', policy_result_ref: 'policy_result:pr-01',
  approval_ref: 'approval:apv-01', receipt_ref: 'receipt:rct-02', attempt_id: 'att-02', invalidation_attempt_id: 'att-03', invalidation_receipt_ref: 'receipt:rct-03',
  supersedes: null, superseded_by: null, invalidated_by: 'agent-7', invalidation_reason: 'the port moved', invalidated_at: R1, sensitivity: null,
  created_at: R0, updated_at: R1, row_version: 51,
} as const;

export const problemDetails = {
  type: '/v1/problems/PROJECTION_NOT_FOUND', title: 'Projection not found', status: 404, detail: 'no task task-01 in the projection',
  instance: '/v1/tasks/task-01', code: 'PROJECTION_NOT_FOUND', message: 'no task task-01 in the projection',
} as const;

/** One valid sample per registered contract. */
export const workingState = {
  task_id: 'task-01',
  revision: 2,
  limits: { max_entries: 64, max_entry_bytes: 4096, max_total_bytes: 65536 },
  entries: [
    { key: 'plan.current', kind: 'plan_pointer', value: 'artifact:plan-01', refs: ['objective.main'] },
    { key: 'objective.main', kind: 'objective', value: { goal: 'fix the failing test' }, pinned: true },
    { key: 'resource.db', kind: 'resource_handle', value: { secret_ref: 'vault:db/password' }, sensitivity: 'secret' },
  ],
  updated_at: T1,
} as const;

export const belief = {
  belief_id: 'belief-01',
  task_id: 'task-01',
  claim: 'The test suite passes on main',
  scope: 'repo:writ',
  evidence_refs: [{ kind: 'receipt', id: 'rcpt-01' }],
  confidence: 0.9,
  trust_tier: 'verified',
  status: 'active',
  created_at: T1,
  asserted_by: 'agent-1',
  version: 1,
} as const;

export const memoryRecord = {
  memory_id: 'mem-01',
  task_id: 'task-01',
  claim: 'The test suite passes on main',
  scope: 'repo:writ',
  evidence_refs: [{ kind: 'receipt', id: 'rcpt-01' }],
  trust_tier: 'verified',
  promotion_reason: 'Needed by every later task on this repository',
  source: { kind: 'belief', id: 'belief-01' },
  invalidation_policy: { mode: 'on_evidence_revoked' },
  retention_class: 'project',
  status: 'active',
  created_at: T1,
  promoted_by: 'agent-1',
  policy_result_ref: 'policy_result:pr-01',
} as const;

export const contextPack = {
  kind: 'context.pack',
  version: 1,
  task_id: 'task-01',
  attempt_id: 'attempt-01',
  as_of: T1,
  secrets: 'excluded',
  budget: { max_items: 64, max_bytes: 65536, used_items: 1, used_bytes: 90 },
  items: [{ section: 'task_contract', source: { kind: 'task_contract', id: 'artifact:contract-01' }, content: 'Fix the failing test' }],
  omitted: [{ section: 'beliefs', source: { kind: 'belief', id: 'belief-02' }, reason: 'BELIEF_NOT_ACTIVE' }],
} as const;

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
  ApprovalResolution: approvalResolution,
  CapabilityGrantClaims: capabilityGrantClaims,
  Artifact: artifact,
  EvidenceRef: evidenceRef,
  Receipt: receipt,
  Brief: brief,
  DoneClaim: doneClaim,
  BlockedClaim: blockedClaim,
  Correction: correction,
  SpawnManifest: spawnManifest,
  LastWill: lastWill,
  Heartbeat: heartbeat,
  CrashReport: crashReport,
  ReceiptBundle: receiptBundle,
  ProblemDetails: problemDetails,
  WorkingState: workingState,
  Belief: belief,
  MemoryRecord: memoryRecord,
  ContextPack: contextPack,
  ContextPackCompiled: {
    attempt_id: 'att-01',
    sha256: 'c'.repeat(64),
    uri: `nats-obj://WRIT_ARTIFACTS/sha256-${'c'.repeat(64)}`,
    byte_size: 912,
    through_task_seq: 9,
    as_of: '2030-01-01T00:01:00Z',
    secrets: 'excluded',
    items: 6,
    omitted: 2,
    at: '2030-01-01T00:01:01Z',
  },
  SecretReference: { secret_ref: 'vault:db/password' },
  KnowledgeLimits: { working_state: { max_entries: 64, max_entry_bytes: 4_096, max_total_bytes: 65_536 }, context_pack: { max_items: 128, max_bytes: 65_536, allow_secret_references: false } },
} as const;

/** One valid row per published view (the dashboard contract's `PROJECTION_ROW_SCHEMAS`). */
export const PROJECTION_ROW_SAMPLES = {
  actions: actionRow,
  tasks: taskRow,
  approvals: approvalRow,
  grants: grantRow,
  receipts: receiptRow,
  principals: principalRow,
  steps: stepRow,
  attempts: attemptRow,
  artifacts: artifactRow,
  decisions: decisionRow,
  cells: cellRow,
  working_states: workingStateRow,
  beliefs: beliefRow,
  memory: memoryRow,
} as const;
