import { z } from 'zod';
import { ExecutionMode } from './execution-mode.js';
import { Id, IdempotencyKey, Ref, Timestamp } from './ids.js';
import { AttemptStatus } from './states.js';

/**
 * The concrete execution instance of a step, the primary recovery boundary
 * (Hermit 8.3). Minimum fields not known yet are `null` (a fresh attempt has no
 * context pack and no `finished_at`).
 */
export const StepAttempt = z
  .strictObject({
    attempt_id: Id,
    task_id: Id,
    step_id: Id,
    attempt_no: z.int().min(1).max(1_000),
    status: AttemptStatus,
    context_pack_ref: Ref.nullable(),
    working_state_ref: Ref.nullable(),
    workspace_lease_ref: Ref.nullable(),
    idempotency_key: IdempotencyKey,
    started_at: Timestamp.nullable(),
    finished_at: Timestamp.nullable(),
    resume_from_ref: Ref.optional(),
    executor_mode: ExecutionMode.optional(),
    policy_version: z.string().min(1).max(128).optional(),
    state_witness_ref: Ref.optional(),
    environment_ref: Ref.optional(),
  })
  .meta({ title: 'StepAttempt', description: 'The concrete execution instance of a step (Hermit 8.3).' });
export type StepAttempt = z.infer<typeof StepAttempt>;
