import type { BlockedClaim, Brief, DoneClaim } from '@writ/contracts';

/** Shared by the claims unit tests: a valid brief and claims that satisfy it; each test changes one thing. */
export const BRIEF: Brief = {
  id: 'brief-01',
  mission: 'Make the retry test deterministic.',
  purpose: 'CI fails one run in ten.',
  context: {},
  whats_done: [],
  current_task: 'src/retry/retry.ts',
  done_criteria: 'the retry test passes',
  verify_command: ['sh', 'scripts/verify.sh'],
  key_decisions: [],
  spec: { scope: { files_owned: ['src/retry/**'] } },
  relevant_memories: [],
  ship: false,
  audit_gates: ['codeaudit'],
  lifecycle: 'ephemeral',
};

export const DONE_CLEAN: DoneClaim = {
  agent: 'worker-1',
  status: 'done_clean',
  started_at: '2030-01-01T00:00:00Z',
  finished_at: '2030-01-01T00:10:00Z',
  mission: BRIEF.mission,
  evidence: { verify_command: [...BRIEF.verify_command], verify_exit_code: 0, verify_stdout: 'ok', verify_stderr: '', artefacts: [] },
  audit: { gates_required: ['codeaudit'], gates_passed: ['codeaudit'], scores: { codeaudit: 90 }, verdict: 'satisfied' },
  regressions: [],
  pending_actions: [],
};

export const LEGAL_BLOCK: BlockedClaim = {
  session: 'worker-1',
  blocked_at: '2030-01-01T00:05:00Z',
  reason: 'credential_missing',
  question: 'The staging API key is missing from the vault; which key may the integration test use?',
  best_guess: 'Use the local stub until a key is provided.',
  fallback_action: 'Running the unit tests against the local stub.',
  can_resume_without_answer: true,
  human_required_for: 'credential',
};
