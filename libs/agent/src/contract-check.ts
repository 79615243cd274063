import type { z } from 'zod';
import { AgentError } from './agent-errors.js';
import type { ContractIssue } from './contracts.js';

/** AGENT_REQUEST_INVALID naming every offending path of `contract`, as ingress and the CLI report them. */
export function contractIssues(contract: string, error: z.core.$ZodError): AgentError {
  const issues: ContractIssue[] = error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), code: issue.code, message: issue.message }));
  const summary = issues.map((issue) => `${issue.path || '(root)'}: ${issue.message}`).join('; ');
  return new AgentError('AGENT_REQUEST_INVALID', `the ${contract} is invalid: ${summary}`, { cause: error, details: { contract, issues } });
}

/** `input` parsed by `schema`, or AGENT_REQUEST_INVALID. */
export function checkContract<S extends z.ZodType>(contract: string, schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw contractIssues(contract, parsed.error);
  return parsed.data;
}
