import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { calculateJwkThumbprint, compactVerify, importJWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildActionRequest, signActionRequest } from './action-request.js';
import { generateAgentKey, loadAgentKey } from './agent-key.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'writ-agent-key-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const request = () =>
  buildActionRequest(
    {
      task: { title: 't', goal: 'g', policy_profile: 'local_edit_allowed', files_owned: ['**'] },
      action_class: 'execute_command',
      target_resources: ['x'],
      params: { argv: ['true'] },
      expected_effects: [],
      reversibility_hint: 'reversible',
      reason: 'r',
    },
    { principalId: 'agent-1' },
  );

describe('loadAgentKey', () => {
  it('given the private JWK file writ principal keygen writes, when it is loaded, then the key signs what its public JWK verifies', async () => {
    // given: the keygen file's shape (private JWK with kid, alg, use), 0600
    const generated = await generateAgentKey({ kid: 'agent-1-k1' });
    const file = path.join(dir, 'agent-1.jwk.json');
    await writeFile(file, `${JSON.stringify(generated.privateJwk)}\n`, { mode: 0o600 });
    // when
    const key = await loadAgentKey(file);
    // then
    expect(key.kid).toBe('agent-1-k1');
    expect(key.publicJwk).toEqual({ kty: 'OKP', crv: 'Ed25519', x: generated.publicJwk.x, kid: 'agent-1-k1', alg: 'EdDSA', use: 'sig' });
    const signed = await signActionRequest(request(), key);
    await expect(compactVerify(signed.jws, await importJWK(generated.publicJwk, 'EdDSA'))).resolves.toBeDefined();
    // the loaded key cannot be exported (nothing in the process can leak d from it)
    expect(key.privateKey.extractable).toBe(false);
  });

  it('given a JWK without kid, when it is loaded, then its kid is the RFC 7638 thumbprint (as writ principal keygen names it)', async () => {
    const { privateJwk } = await generateAgentKey();
    const { kid: _kid, ...withoutKid } = privateJwk;
    const key = await loadAgentKey(withoutKid);
    expect(key.kid).toBe(await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: privateJwk.x }, 'sha256'));
  });

  it.each([
    ['a public JWK (no d)', (jwk: Record<string, unknown>) => ({ ...jwk, d: undefined })],
    ['an RSA key', (jwk: Record<string, unknown>) => ({ ...jwk, kty: 'RSA' })],
    ['alg other than EdDSA', (jwk: Record<string, unknown>) => ({ ...jwk, alg: 'ES256' })],
    ['a kid with a space', (jwk: Record<string, unknown>) => ({ ...jwk, kid: 'agent 1' })],
    ['d of another key', (jwk: Record<string, unknown>, other: Record<string, unknown>) => ({ ...jwk, d: other['d'] })],
  ])('given %s, when it is loaded, then AGENT_KEY_INVALID', async (_note, change) => {
    const { privateJwk } = await generateAgentKey({ kid: 'agent-1-k1' });
    const other = (await generateAgentKey()).privateJwk;
    const jwk = JSON.parse(JSON.stringify(change({ ...privateJwk }, { ...other }))) as Record<string, unknown>;
    await expect(loadAgentKey(jwk)).rejects.toMatchObject({ code: 'AGENT_KEY_INVALID' });
  });

  it('given a path with no file or no JSON, when it is loaded, then AGENT_KEY_UNREADABLE', async () => {
    await expect(loadAgentKey(path.join(dir, 'missing.jwk.json'))).rejects.toMatchObject({ code: 'AGENT_KEY_UNREADABLE' });
    const garbage = path.join(dir, 'garbage.jwk.json');
    await writeFile(garbage, 'not json');
    await expect(loadAgentKey(garbage)).rejects.toMatchObject({ code: 'AGENT_KEY_UNREADABLE' });
  });
});
