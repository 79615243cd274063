import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { REDACTED, isSecretKey, redactSecrets, redactString } from './redaction.js';

// A real private key, generated per run: never key material in the repository.
const PEM = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString().trimEnd();
const JWT = 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJhZ2VudC0xIiwiZ3JhbnQiOiJ4In0.c2lnbmF0dXJlLWJ5dGVz';

describe('isSecretKey', () => {
  it.each([
    ['password', true],
    ['db_password', true],
    ['clientSecret', true],
    ['access_token', true],
    ['refreshToken', true],
    ['Authorization', true],
    ['api-key', true],
    ['privateKeyPem', true],
    ['nats_seed', true],
    ['secret_ref', false],
    ['secretRef', false],
    ['secret_reference', true],
    ['max_tokens', false],
    ['input_tokens', false],
    ['task_id', false],
    ['message', false],
  ])('%s → %s', (key, want) => {
    expect(isSecretKey(key)).toBe(want);
  });
});

describe('redactSecrets', () => {
  it('given a secret reference (where a secret lives, never the secret), when redacted, then the name stays; a secret shape or a non-string under it is still masked', () => {
    // given
    const entries = [{ value: { secret_ref: 'vault:db/password' } }, { value: { secret_ref: 'sk-ant-abcdefghijklmnopqrstuvwxyz' } }, { value: { secret_ref: { token: 'x' } } }];
    // when
    const out = redactSecrets(entries);
    // then
    expect(out).toEqual([{ value: { secret_ref: 'vault:db/password' } }, { value: { secret_ref: REDACTED } }, { value: { secret_ref: REDACTED } }]);
  });

  it('given a secret deep in a nested object, when redacted, then the value is gone and its siblings stay', () => {
    const input = { task: { id: 't1', cell: { env: [{ name: 'X', api_key: 'abc123xyz' }], credentials: { user: 'u' } } } };
    const out = redactSecrets(input);
    expect(out.task.cell.env[0]).toEqual({ name: 'X', api_key: REDACTED });
    expect(out.task.cell.credentials).toBe(REDACTED);
    expect(out.task.id).toBe('t1');
    expect(input.task.cell.env[0]?.api_key).toBe('abc123xyz'); // the input is not mutated
  });

  it('given a private JWK, when redacted, then d (and the other private members) are removed, public members kept', () => {
    const jwk = { kty: 'OKP', crv: 'Ed25519', x: 'pub-x', d: 'private-d', kid: 'k1' };
    expect(redactSecrets({ key: jwk })).toEqual({ key: { kty: 'OKP', crv: 'Ed25519', x: 'pub-x', d: REDACTED, kid: 'k1' } });
  });

  it('given secret-shaped values under innocent keys, when redacted, then the values are masked', () => {
    const out = redactSecrets({ note: PEM, header: `Bearer ${'a'.repeat(24)}`, grant: JWT });
    expect(JSON.stringify(out)).not.toContain('MC4CAQAwBQYDK2Vw');
    expect(out.header).toBe(`Bearer ${REDACTED}`);
    expect(out.grant).toBe(REDACTED);
  });

  it('given an error whose message carries a secret, when redacted, then it becomes a plain object with a clean message', () => {
    const error = Object.assign(new Error('login failed with password=hunter2'), { code: 'X_FAILED' });
    const out = redactSecrets({ err: error }).err as unknown as Record<string, unknown>;
    expect(out['message']).toBe(`login failed with password=${REDACTED}`);
    expect(out['code']).toBe('X_FAILED');
    expect(String(out['stack'])).not.toContain('hunter2');
  });

  it('given a cycle, when redacted, then it terminates and marks the cycle', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a['self'] = a;
    expect(redactSecrets(a)).toEqual({ name: 'a', self: '[Circular]' });
  });
});

describe('redactString', () => {
  it.each([
    ['a PEM private key', `key:\n${PEM}\nend`, 'MC4CAQAw'],
    ['a truncated PEM private key', PEM.slice(0, 60), 'MC4CAQ'],
    ['a bearer token', 'Authorization: Bearer abcdefghijklmnop', 'abcdefghijklmnop'],
    ['basic auth', 'authorization=Basic dXNlcjpwYXNzd29yZA==', 'dXNlcjpw'],
    ['a JWT', `grant ${JWT} used`, 'eyJzdWIi'],
    ['URL credentials', 'nats://writ:s3cr3t@127.0.0.1:4222', 's3cr3t'],
    ['key=value', 'retrying with api_key=ak_9f8e7d and token: tok_123', 'ak_9f8e7d'],
    ['an API key format', 'using sk-ant-abcdefghijklmnopqrstuvwx', 'abcdefghijklmnopqrstuvwx'],
    ['a NATS seed', `seed SUAMLK2ZNL35WSMW37E7UD4VZ7ELPKW7DHC3BWBSD2GCZ7IUQQXZIORRBU here`, 'SUAMLK2Z'],
  ])('masks %s', (_what, text, secret) => {
    const out = redactString(text);
    expect(out).not.toContain(secret);
    expect(out).toContain(REDACTED);
  });

  it('leaves ordinary prose alone', () => {
    const text = 'Basic validation failed for task t-1: token count 512 exceeds max_tokens=256';
    expect(redactString(text)).toBe(text);
  });

  it('is idempotent', () => {
    const once = redactString(`password=x ${PEM}`);
    expect(redactString(once)).toBe(once);
  });
});
