import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { ContractError, hasErrorCode, parseContract, parseNamedContract, safeParseContract, safeParseNamedContract } from './index.js';

describe('ContractError', () => {
  const Pair = z.strictObject({ a: z.string(), b: z.array(z.object({ c: z.int() })) });

  it('given input with nested offences, when parsed, then each issue path is dotted from the root', () => {
    // when
    const result = safeParseContract('Pair', Pair, { a: 1, b: [{ c: 1 }, { c: 'x' }] });
    // then
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.issues.map(({ path, code }) => ({ path, code }))).toEqual([
      { path: 'a', code: 'invalid_type' },
      { path: 'b.1.c', code: 'invalid_type' },
    ]);
  });

  it('given invalid input, when parsed by name, then a CONTRACT_INVALID error names the contract and keeps the zod cause', () => {
    // when
    let caught: unknown;
    try {
      parseNamedContract('Principal', { principal_id: 'p' });
    } catch (error) {
      caught = error;
    }
    // then
    expect(hasErrorCode(caught, 'CONTRACT_INVALID')).toBe(true);
    expect((caught as ContractError).contract).toBe('Principal');
    expect((caught as ContractError).cause).toBeInstanceOf(z.ZodError);
    expect((caught as ContractError).issues.map((issue) => issue.path)).toEqual(['principal_type', 'display_name', 'created_at']);
  });

  it('given any input, when safely parsed, then it never throws', () => {
    for (const input of [undefined, null, 0, 'x', [], {}, { action_request_id: {} }]) {
      expect(() => safeParseNamedContract('ActionRequest', input)).not.toThrow();
    }
  });

  it('given valid input, when parsed, then the parsed value is returned', () => {
    expect(parseContract('Pair', Pair, { a: 'x', b: [] })).toEqual({ a: 'x', b: [] });
  });
});
