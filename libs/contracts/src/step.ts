import { z } from 'zod';
import { Id, Name, Ref, Timestamp } from './ids.js';
import { LIMITS } from './limits.js';
import { StepStatus } from './states.js';
import { Title } from './text.js';

/** The smallest logical recoverable unit within a task (Hermit 8.2). */
export const Step = z
  .strictObject({
    step_id: Id,
    task_id: Id,
    kind: Name.describe('What the step does: plan, search, inspect, edit, run_tests, publish_result, rollback, ...'),
    title: Title,
    contract_ref: Ref.describe('The step contract: objective, inputs, outputs, success criteria, allowed action classes.'),
    status: StepStatus,
    depends_on: z.array(Id).max(LIMITS.listItems),
    max_attempts: z.int().min(1).max(100),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ title: 'Step', description: 'The smallest logical recoverable unit within a task (Hermit 8.2).' });
export type Step = z.infer<typeof Step>;
