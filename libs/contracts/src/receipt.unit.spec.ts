import { describe, expect, it } from 'vitest';
import { receipt } from '../test/samples.js';
import { issuesOf } from '../test/issues.js';
import { parseReceipt, safeParseReceipt } from './index.js';

const unsigned = { ...receipt, verifiability: 'hash_only', signature: undefined, signer_ref: undefined, prev_receipt_hash: undefined, receipt_hash: undefined };

describe('Receipt', () => {
  it('given a signed, hash-chained receipt, when parsed, then it is accepted', () => {
    expect(parseReceipt(receipt)).toEqual(receipt);
  });

  it('given a hash_only receipt without chain or signature, when parsed, then it is accepted', () => {
    expect(safeParseReceipt(unsigned).ok).toBe(true);
  });

  it('given an unknown outcome of a command, when parsed, then it is accepted as a first-class result', () => {
    expect(issuesOf('Receipt', { ...receipt, result_code: 'unknown_outcome', result_summary: 'executor lost; effect unknown' })).toEqual([]);
  });

  describe('authority', () => {
    it.each(['succeeded', 'failed', 'unknown_outcome'])('given a dispatched command (%s) without a grant, when parsed, then capability_grant_ref is the offending path', (result_code) => {
      expect(issuesOf('Receipt', { ...receipt, result_code, capability_grant_ref: null })).toEqual([{ path: 'capability_grant_ref', code: 'custom' }]);
    });

    it('given a refused command without a grant, when parsed, then it is accepted (nothing ran)', () => {
      expect(issuesOf('Receipt', { ...receipt, result_code: 'refused', capability_grant_ref: null, environment_ref: null })).toEqual([]);
    });

    it('given an approval resolution receipt, when parsed without a grant, then it is accepted', () => {
      expect(issuesOf('Receipt', { ...receipt, receipt_class: 'approval_resolution', capability_grant_ref: null, approval_ref: 'approval:appr-01' })).toEqual([]);
    });
  });

  describe('verifiability', () => {
    it('given a signed receipt missing signature, signer, hash and chain link, when parsed, then every one is listed', () => {
      const input = { ...receipt, signature: undefined, signer_ref: undefined, receipt_hash: undefined, prev_receipt_hash: undefined };
      expect(issuesOf('Receipt', input).map((issue) => issue.path).sort()).toEqual(['prev_receipt_hash', 'receipt_hash', 'signature']);
    });

    it('given a hash_chained receipt with a null previous hash (first of the task), when parsed, then it is accepted', () => {
      expect(issuesOf('Receipt', { ...unsigned, verifiability: 'hash_chained', prev_receipt_hash: null, receipt_hash: 'c'.repeat(64) })).toEqual([]);
    });

    it('given a signature without signer_ref, when parsed, then signer_ref is the offending path', () => {
      expect(issuesOf('Receipt', { ...receipt, signer_ref: undefined })).toEqual([{ path: 'signer_ref', code: 'custom' }]);
    });

    it.each(['not base64!', 'a.b.c.d', 'x'.repeat(9_000)])('given a malformed signature %#, when parsed, then signature is the offending path', (signature) => {
      expect(issuesOf('Receipt', { ...receipt, signature }).map((issue) => issue.path)).toEqual(['signature']);
    });

    it('given an uppercase hash, when parsed, then receipt_hash is the offending path', () => {
      expect(issuesOf('Receipt', { ...receipt, receipt_hash: 'A'.repeat(64) })).toEqual([{ path: 'receipt_hash', code: 'invalid_format' }]);
    });
  });
});
