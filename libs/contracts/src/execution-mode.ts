import { z } from 'zod';

/**
 * Workspace lease modes (Hermit 17.1), also the restricted execution modes a
 * `downgrade` policy result or a grant constraint may impose.
 */
export const ExecutionMode = z.enum(['readonly', 'mutable', 'isolated', 'external_effects_disabled']);
export type ExecutionMode = z.infer<typeof ExecutionMode>;
