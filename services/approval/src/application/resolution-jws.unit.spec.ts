import { hasErrorCode } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { claimedResolution } from './resolution-jws.js';

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return hasErrorCode(error) ? error.code : 'untyped';
  }
  return undefined;
}

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const header = b64({ alg: 'EdDSA', kid: 'k1' });

describe('claimedResolution', () => {
  it('reads who claims to resolve, before any trust', () => {
    const payload = { approval_id: 'apr-1', decision: 'grant', packet_hash: `sha256:${'e'.repeat(64)}`, resolved_by: 'director-1', resolved_at: '2030-01-01T00:00:00Z' };
    expect(claimedResolution(`${header}.${b64(payload)}.c2ln`)).toEqual(payload);
  });

  const cases = [
    { note: 'not a compact JWS', jws: 'abc', want: 'APPROVAL_SIGNATURE_INVALID' },
    { note: 'detached payload', jws: `${header}..c2ln`, want: 'APPROVAL_SIGNATURE_INVALID' },
    { note: 'payload not JSON', jws: `${header}.${b64('not json')}.c2ln`, want: 'APPROVAL_SIGNATURE_INVALID' },
    { note: 'payload not a resolution', jws: `${header}.${b64({ approval_id: 'apr-1', decision: 'maybe' })}.c2ln`, want: 'CONTRACT_INVALID' },
    {
      note: 'a resolution of an older client, over no packet hash',
      jws: `${header}.${b64({ approval_id: 'apr-1', decision: 'grant', resolved_by: 'director-1', resolved_at: '2030-01-01T00:00:00Z' })}.c2ln`,
      want: 'CONTRACT_INVALID',
    },
  ];
  it.each(cases)('refuses $note ($want)', ({ jws, want }) => {
    expect(codeOf(() => claimedResolution(jws))).toBe(want);
  });
});
