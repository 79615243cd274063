import { describe, expect, it } from 'vitest';
import { peekCompactJws } from './compact-jws.js';

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

describe('peekCompactJws', () => {
  it('reads the header and the claimed payload fields without verifying', () => {
    const peek = peekCompactJws(`${b64({ alg: 'EdDSA', kid: 'k1' })}.${b64({ proposed_by: 'agent-1', action_request_id: 'ar-1' })}.c2ln`);
    expect(peek).toMatchObject({ wellFormed: true, alg: 'EdDSA', kid: 'k1', proposedBy: 'agent-1', actionRequestId: 'ar-1' });
  });

  it.each([
    ['not three segments', 'a.b'],
    ['an empty segment', `${b64({ alg: 'EdDSA' })}..c2ln`],
    ['a header that is not a JSON object', `${b64('[1]')}.${b64({})}.c2ln`],
    ['characters outside base64url', `${b64({ alg: 'EdDSA' })}.e30=.c2ln`],
    ['JSON instead of a JWS', '{"action_request_id":"x"}'],
  ])('is not well-formed with %s', (_note, raw) => {
    expect(peekCompactJws(raw).wellFormed).toBe(false);
  });

  it('leaves claims it cannot read undefined', () => {
    const peek = peekCompactJws(`${b64({ alg: 'EdDSA' })}.${b64('not json')}.c2ln`);
    expect(peek).toMatchObject({ wellFormed: true, kid: undefined, payload: undefined, proposedBy: undefined, actionRequestId: undefined });
  });
});
