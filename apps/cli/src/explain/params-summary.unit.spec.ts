import { sha256Hex } from '@writ/crypto';
import { describe, expect, it } from 'vitest';
import { MASK, maskArgv, summarizeParams } from './params-summary.js';

describe('summarizeParams: an explanation never shows a secret', () => {
  it.each([
    ['a password option with its value apart', ['mysql', '--password', 'hunter2', 'db'], ['mysql', '--password', MASK, 'db']],
    ['a token option with =', ['deploy', '--api-token=abc123'], ['deploy', `--api-token=${MASK}`]],
    ['a header option (it may be Authorization)', ['curl', '-H', 'X-Trace: 1', 'https://example.com'], ['curl', '-H', MASK, 'https://example.com']],
    ['a bearer credential in an argument', ['sh', '-c', 'curl -H "Authorization: Bearer abcdefgh12345"'], ['sh', '-c', MASK]],
    ['a JWT', ['call', 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2ln'], ['call', MASK]],
    ['credentials in a URL', ['git', 'clone', 'https://user:pa55@example.com/repo.git'], ['git', 'clone', MASK]],
    ['a key=value assignment', ['env', 'AWS_SECRET_ACCESS_KEY=abc'], ['env', `AWS_SECRET_ACCESS_KEY=${MASK}`]],
  ])('given argv with %s, when summarised, then the credential is masked', (_note, argv, expected) => {
    expect(maskArgv(argv)).toEqual(expected);
  });

  it('given an ordinary command, when summarised, then it is shown as written', () => {
    expect(summarizeParams({ argv: ['sh', '-c', 'echo hello > out.txt'], cwd: 'src' })).toEqual(['argv: sh -c "echo hello > out.txt"', 'cwd: src']);
  });

  it('given a payload, headers and an unknown key, when summarised, then only their size, hash or names are shown', () => {
    const lines = summarizeParams({
      url: 'https://user:pw@api.example.com/v1/items?key=abc#frag',
      method: 'POST',
      headers: { authorization: 'Bearer secret-value', 'x-trace': '1' },
      body: '{"password":"hunter2"}',
      extra: 'hunter2',
    });
    expect(lines).toEqual([
      `url: https://api.example.com/v1/items (${MASK} query, fragment or credentials)`,
      'method: POST',
      'headers: authorization, x-trace (values not shown)',
      `body: 22 bytes, sha256 ${sha256Hex('{"password":"hunter2"}')}`,
      'extra: 7 bytes (value not shown)',
    ]);
    expect(summarizeParams({ path: 'a.bin', content: 'aGVsbG8=', encoding: 'base64' })).toEqual(['path: a.bin', `content: 5 bytes (base64), sha256 ${sha256Hex('hello')}`]);
    expect(lines.join('\n')).not.toMatch(/hunter2|secret-value|pw@|key=abc/);
  });

  it('given secret handles, when summarised, then their names are shown (they are not values)', () => {
    expect(summarizeParams({ argv: ['deploy'], secret_handles: ['prod-db'] })).toEqual(['argv: deploy', 'secret_handles: prod-db']);
  });
});
