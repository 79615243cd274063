import { createHash, createHmac, pbkdf2Sync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generatePgPassword, pgServiceRole, scramSha256Verifier } from './pg-roles.js';

describe('Postgres roles of Writ services', () => {
  it('generates passwords of 32 random bytes, base64url', () => {
    const a = generatePgPassword();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(generatePgPassword()).not.toBe(a);
  });

  it('computes the SCRAM-SHA-256 verifier Postgres stores (RFC 5802: StoredKey = H(HMAC(SaltedPassword, "Client Key")), ServerKey = HMAC(SaltedPassword, "Server Key"))', () => {
    const salt = Buffer.from('0123456789abcdef');
    const verifier = scramSha256Verifier('pencil', { salt, iterations: 4096 });
    const salted = pbkdf2Sync('pencil', salt, 4096, 32, 'sha256');
    const stored = createHash('sha256').update(createHmac('sha256', salted).update('Client Key').digest()).digest('base64');
    const server = createHmac('sha256', salted).update('Server Key').digest('base64');
    expect(verifier).toBe(`SCRAM-SHA-256$4096:${salt.toString('base64')}$${stored}:${server}`);
    expect(verifier).not.toContain('pencil');
    // a fresh salt each time
    expect(scramSha256Verifier('pencil')).not.toBe(scramSha256Verifier('pencil'));
  });

  it("names a service's role after its deployment's schema, within Postgres's 63 characters", () => {
    expect(pgServiceRole('writ_abcdefghijkl', 'projection')).toBe('writ_abcdefghijkl_projection');
    expect(pgServiceRole('x'.repeat(63), 'projection')).toHaveLength(63);
    expect(() => pgServiceRole('Bad-Schema', 'projection')).toThrow(/lowercase Postgres identifier/);
  });
});
