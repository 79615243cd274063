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

  describe('chain of authority, rollback and limits of assertion (optional fields)', () => {
    const H = 'd'.repeat(64);
    const bound = {
      ...receipt,
      request_hash: H,
      policy_result_hash: H,
      approval_resolution: { status: 'granted', resolved_by: 'director-1', resolution_ref: 'event:evt-9', resolution_hash: H, packet_ref: `sha256:${H}`, witness_validated: true },
      grant_hash: H,
      state_witness_ref: 'artifact:witness-1',
      attestation: {
        image: 'writ/cell:latest',
        image_id: `sha256:${H}`,
        network_mode: 'none',
        readonly_rootfs: true,
        cap_drop: ['ALL'],
        user: '1000:1000',
        memory_bytes: 268435456,
        pids_limit: 128,
        mounts: [{ destination: '/workspace', read_only: false }],
      },
      not_asserted: ['that nothing happened outside Writ'],
      rollback_supported: true,
      rollback: {
        method: 'compensating_local_actions',
        statement: 'delete out.txt',
        prerequisites: ['out.txt still hashes to expected_sha256'],
        steps: [{ action_class: 'delete_local', path: 'out.txt', expected_sha256: H }],
      },
    };

    it('given a receipt written before these fields existed, when parsed, then it is still accepted', () => {
      expect(issuesOf('Receipt', receipt)).toEqual([]);
    });

    it('given a receipt binding every link, when parsed, then it is accepted as is', () => {
      expect(parseReceipt(bound)).toEqual(bound);
    });

    it('given rollback_supported that contradicts the rollback method, when parsed, then rollback_supported is the offending path', () => {
      expect(issuesOf('Receipt', { ...bound, rollback_supported: false })).toEqual([{ path: 'rollback_supported', code: 'custom' }]);
    });

    it('given a method without steps, or none with steps, when parsed, then rollback.steps is the offending path', () => {
      const noSteps = { ...bound, rollback: { ...bound.rollback, steps: [] } };
      const noneWithSteps = { ...bound, rollback_supported: false, rollback: { ...bound.rollback, method: 'none' } };
      expect(issuesOf('Receipt', noSteps).map((issue) => issue.path)).toEqual(['rollback.steps']);
      expect(issuesOf('Receipt', noneWithSteps).map((issue) => issue.path)).toEqual(['rollback.steps']);
    });

    it('given more than 32 not-asserted statements, when parsed, then not_asserted is the offending path', () => {
      expect(issuesOf('Receipt', { ...bound, not_asserted: Array.from({ length: 33 }, (_, i) => `s${i}`) }).map((issue) => issue.path)).toEqual(['not_asserted']);
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
