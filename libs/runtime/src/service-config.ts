import type { z } from 'zod';
import { toContractIssues } from '@writ/contracts';
import { RuntimeError } from './runtime-errors.js';

/**
 * Reads a service's configuration from the environment through a zod schema
 * whose keys are the variable names (`WRIT_HTTP_PORT`...), with defaults in the
 * schema. Fails fast at boot with every offending variable listed, so a
 * misconfigured service never starts half right.
 */
export function loadConfig<S extends z.ZodType>(service: string, schema: S, env: Record<string, string | undefined> = process.env): z.output<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const issues = toContractIssues(result.error);
  const lines = issues.map((issue) => `${issue.path || '(environment)'}: ${issue.message}`);
  throw new RuntimeError('RUNTIME_CONFIG_INVALID', `${service}: invalid configuration in the environment: ${lines.join('; ')}`, {
    details: { service, issues },
  });
}
