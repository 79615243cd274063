import { toContractIssues } from '@writ/contracts';
import type { z } from 'zod';
import { KernelError, type KernelCommandErrorCode } from './kernel-error.js';

/**
 * Checks every event `decide` is about to return against the context's event
 * schema, so no decider can emit an event its own `evolve` would reject as
 * malformed. A failure means the command carried invalid data:
 * KERNEL_COMMAND_INVALID, listing every offending path.
 */
export function emit<S extends z.ZodType>(schema: S, events: readonly z.input<S>[]): z.output<S>[] {
  return events.map((event) => {
    const parsed = schema.safeParse(event);
    if (!parsed.success) {
      const issues = toContractIssues(parsed.error);
      const type = (event as { type?: unknown }).type;
      throw new KernelError<KernelCommandErrorCode>(
        'KERNEL_COMMAND_INVALID',
        `the command would produce an invalid ${String(type)} event: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`,
        { cause: parsed.error, details: { event_type: type, issues } },
      );
    }
    return parsed.data;
  });
}
