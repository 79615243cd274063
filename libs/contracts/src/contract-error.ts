import type { z } from 'zod';
import { WritError } from './writ-error.js';

export type ContractErrorCode = 'CONTRACT_INVALID';

/** One offending location in a rejected input; `path` is a JSON-pointer-like dotted path. */
export interface ContractIssue {
  readonly path: string;
  readonly code: string;
  readonly message: string;
}

/**
 * Raised when input does not satisfy a contract. Lists every offending path,
 * not only the first, so a caller can fix a request in one round trip.
 */
export class ContractError extends WritError<ContractErrorCode> {
  readonly contract: string;
  readonly issues: readonly ContractIssue[];

  constructor(contract: string, issues: readonly ContractIssue[], cause?: unknown) {
    const summary = issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ');
    super('CONTRACT_INVALID', `${contract} is invalid: ${summary}`, { cause, details: { contract, issues } });
    this.contract = contract;
    this.issues = issues;
  }
}

export function toContractIssues(error: z.core.$ZodError): ContractIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map((segment) => String(segment)).join('.'),
    code: issue.code,
    message: issue.message,
  }));
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: ContractError };

/** Parses `input` against `schema`; never throws. */
export function safeParseContract<S extends z.ZodType>(contract: string, schema: S, input: unknown): ParseResult<z.output<S>> {
  const result = schema.safeParse(input);
  return result.success
    ? { ok: true, value: result.data }
    : { ok: false, error: new ContractError(contract, toContractIssues(result.error), result.error) };
}

/** Parses `input` against `schema`, throwing a `ContractError` listing every offending path. */
export function parseContract<S extends z.ZodType>(contract: string, schema: S, input: unknown): z.output<S> {
  const result = safeParseContract(contract, schema, input);
  if (!result.ok) throw result.error;
  return result.value;
}
