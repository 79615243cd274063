import { safeParseNamedContract, type ContractName } from '../src/index.js';

export interface IssueSummary {
  readonly path: string;
  readonly code: string;
}

/** The `{ path, code }` of every issue a parse reports; empty when `input` is valid. */
export function issuesOf(contract: ContractName, input: unknown): IssueSummary[] {
  const result = safeParseNamedContract(contract, input);
  return result.ok ? [] : result.error.issues.map(({ path, code }) => ({ path, code }));
}

/** The offending paths of a parse, sorted; empty when `input` is valid. */
export function pathsOf(contract: ContractName, input: unknown): string[] {
  return [...new Set(issuesOf(contract, input).map((issue) => issue.path))].sort();
}
