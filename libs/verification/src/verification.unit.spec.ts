import { HTTP_TOKEN_JWS_TYPE, HttpTokenClaims, TREE_HEAD_JWS_TYPE } from '@writ/contracts';
import { bytesToHex as cryptoHex, canonicalJson as cryptoCanonical, exportEd25519PrivateJwk, generateEd25519Key, inclusionProof, KeySet, merkleLeafHash as cryptoLeaf, merkleRoot, sha256Hex as cryptoSha256Hex, signJws, verifyJws } from '@writ/crypto';
import { describe, expect, it } from 'vitest';
import {
  PublicKeySet,
  approvalPacketHash,
  bytesToHex,
  checkInclusion,
  checkReceiptChain,
  checkTreeHead,
  hexToBytes,
  importPrivateJwk,
  mintBearerToken,
  packetHashOfRef,
  receiptCanonicalBody,
  signApprovalResolution,
  signCompactJws,
  verifyCompactJws,
  verifyInclusion,
} from './index.js';

const jose = await generateEd25519Key({ kid: 'director-k1', extractable: true });
const privateJwk = await exportEd25519PrivateJwk(jose);
const key = await importPrivateJwk(privateJwk);
const trusted = await PublicKeySet.fromJwks({ keys: [jose.publicJwk] });
const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const codeOf = async (promise: Promise<unknown>) => promise.then(() => 'resolved', (error: { code?: string }) => error.code);

describe('compact JWS over WebCrypto', () => {
  it('given the same key, when a payload is signed here and by @writ/crypto (jose), then the two JWS are the same bytes and each verifies the other', async () => {
    // given / when
    const ours = await signCompactJws('{"a":1}', key, { typ: 'writ-test+jws' });
    const theirs = await signJws('{"a":1}', jose, { typ: 'writ-test+jws' });
    // then (Ed25519 is deterministic)
    expect(ours).toBe(theirs);
    expect(new TextDecoder().decode((await verifyJws(ours, KeySet.of([jose]), { typ: 'writ-test+jws' })).payload)).toBe('{"a":1}');
    expect((await verifyCompactJws(theirs, trusted, { typ: 'writ-test+jws' })).kid).toBe('director-k1');
  });

  const refusals: { note: string; jws: () => Promise<string>; want: string }[] = [
    { note: 'alg none', jws: async () => `${b64({ alg: 'none', kid: 'director-k1' })}.${b64('{}')}.`, want: 'JWS_ALG_NOT_ALLOWED' },
    { note: 'HS256', jws: async () => `${b64({ alg: 'HS256', kid: 'director-k1' })}.${b64('{}')}.AAAA`, want: 'JWS_ALG_NOT_ALLOWED' },
    { note: 'no kid', jws: async () => `${b64({ alg: 'EdDSA' })}.${b64('{}')}.AAAA`, want: 'JWS_KID_MISSING' },
    { note: 'a key not trusted', jws: async () => signJws('{}', await generateEd25519Key({ kid: 'other-k1' })), want: 'JWS_KID_UNKNOWN' },
    { note: 'a changed payload', jws: async () => (await signJws('{"a":1}', jose)).replace(b64('{"a":1}'), b64('{"a":2}')), want: 'JWS_SIGNATURE_INVALID' },
    { note: 'another typ', jws: async () => signJws('{}', jose, { typ: 'writ-other+jws' }), want: 'JWS_TYPE_MISMATCH' },
    { note: 'not three parts', jws: async () => 'abc.def', want: 'JWS_MALFORMED' },
  ];
  for (const { note, jws, want } of refusals) {
    it(`given ${note}, when verified, then it is refused with ${want}`, async () => {
      expect(await codeOf(verifyCompactJws(await jws(), trusted, { typ: 'writ-test+jws' }))).toBe(want);
    });
  }
});

describe('private keys', () => {
  it('given a private JWK, when imported, then the key signs but cannot be exported (non-extractable)', async () => {
    expect(key.privateKey.extractable).toBe(false);
    await expect(crypto.subtle.exportKey('jwk', key.privateKey)).rejects.toThrow();
  });

  it("given a d that is not x's private half, when imported, then it is refused (Node's import already refuses it; elsewhere the probe signature does)", async () => {
    const other = await exportEd25519PrivateJwk(await generateEd25519Key({ kid: 'o', extractable: true }));
    expect(['VERIFY_KEY_INVALID', 'VERIFY_KEY_MISMATCH']).toContain(await codeOf(importPrivateJwk({ ...privateJwk, d: other.d })));
  });

  it('given a public JWK where a private one is needed, when imported, then VERIFY_KEY_INVALID', async () => {
    expect(await codeOf(importPrivateJwk(jose.publicJwk))).toBe('VERIFY_KEY_INVALID');
  });
});

describe('Merkle inclusion (RFC 9162) against @writ/crypto', () => {
  it('given trees of 1 to 33 leaves, when every leaf is proved by @writ/crypto, then each verifies here and fails at another index or root', async () => {
    for (let size = 1; size <= 33; size += 1) {
      // given
      const leaves = Array.from({ length: size }, (_, i) => new TextEncoder().encode(`leaf-${size}-${i}`));
      const root = merkleRoot(leaves);
      for (let index = 0; index < size; index += 1) {
        // when
        const proof = inclusionProof(index, leaves);
        const leaf = cryptoLeaf(leaves[index]!);
        // then
        expect(await verifyInclusion(leaf, index, size, proof, root)).toBe(true);
        if (size > 1) expect(await verifyInclusion(leaf, (index + 1) % size, size, proof, root)).toBe(false);
        expect(await verifyInclusion(leaf, index, size, proof, cryptoLeaf(root))).toBe(false);
      }
    }
  });
});

/** A receipt-like document whose hash is what the log sequences. */
function receipt(id: string, prev: string | null, summary = 'ok'): Record<string, unknown> {
  const body = { receipt_id: id, task_id: 'task-1', prev_receipt_hash: prev, result_summary: summary };
  return { ...body, receipt_hash: cryptoSha256Hex(cryptoCanonical(body)) };
}

describe('receipt chain', () => {
  const first = receipt('r1', null);
  const second = receipt('r2', first['receipt_hash'] as string);
  const third = receipt('r3', second['receipt_hash'] as string);

  it('given three chained receipts, when each is checked against the task timeline, then each links to its predecessor', async () => {
    for (const each of [first, second, third]) expect((await checkReceiptChain(each, [first, second, third])).result).toBe('pass');
  });

  it('given a previous receipt whose body was changed (its claimed hash kept), when the next is checked, then RECEIPT_CHAIN_BROKEN', async () => {
    const changed = { ...second, result_summary: 'changed' };
    expect(await checkReceiptChain(third, [first, changed, third])).toMatchObject({ result: 'fail', code: 'RECEIPT_CHAIN_BROKEN' });
  });

  it('given a receipt the timeline does not hold, when checked, then RECEIPT_NOT_IN_TASK', async () => {
    expect(await checkReceiptChain(receipt('r9', null), [first])).toMatchObject({ result: 'fail', code: 'RECEIPT_NOT_IN_TASK' });
  });
});

const receiptKey = await generateEd25519Key({ kid: 'writ-receipt-k1' });
const receiptKeys = await PublicKeySet.fromJwks({ keys: [receiptKey.publicJwk] });

describe('signed tree head and inclusion of a receipt', () => {
  const keys = receiptKeys;
  const receipts = [receipt('r1', null), receipt('r2', null), receipt('r3', null)];
  const leaves = receipts.map((each) => hexToBytes(each['receipt_hash'] as string)!);
  const head = async (fields: { root_hash?: string; signer_ref?: string } = {}) => {
    const signed = { log_id: 'tlog-1', tree_size: 3, root_hash: cryptoHex(merkleRoot(leaves)), timestamp: '2031-05-01T12:00:00.000Z' };
    const jws = await signJws(cryptoCanonical(signed), receiptKey, { typ: TREE_HEAD_JWS_TYPE });
    return { ...signed, ...fields, signer_ref: fields.signer_ref ?? 'writ-receipt-k1', jws };
  };
  const proofOf = (index: number) => ({ log_id: 'tlog-1', leaf_index: index, tree_size: 3, leaf_hash: cryptoHex(cryptoLeaf(leaves[index]!)), audit_path: inclusionProof(index, leaves).map(cryptoHex) });
  const hashOf = async (each: Record<string, unknown>) => cryptoSha256Hex(receiptCanonicalBody(each)!);

  it('given a head signed by the receipt key and a proof of leaf 1, when checked, then tree_head, leaf and inclusion pass', async () => {
    expect((await checkTreeHead(await head(), keys)).result).toBe('pass');
    expect((await checkInclusion(await hashOf(receipts[1]!), proofOf(1), await head())).map((check) => check.result)).toEqual(['pass', 'pass']);
  });

  it('given a head whose root was changed after signing, when checked, then TLOG_TREE_HEAD_INVALID', async () => {
    expect(await checkTreeHead(await head({ root_hash: 'a'.repeat(64) }), keys)).toMatchObject({ result: 'fail', code: 'TLOG_TREE_HEAD_INVALID' });
  });

  it('given a head naming another signer_ref, when checked, then TLOG_TREE_HEAD_INVALID', async () => {
    expect(await checkTreeHead(await head({ signer_ref: 'someone-else' }), keys)).toMatchObject({ result: 'fail', code: 'TLOG_TREE_HEAD_INVALID' });
  });

  it('given a tampered receipt body, when its recomputed hash is checked against the proof, then TLOG_LEAF_MISMATCH and TLOG_INCLUSION_INVALID', async () => {
    const tampered = { ...receipts[1]!, result_summary: 'tampered' };
    expect((await checkInclusion(await hashOf(tampered), proofOf(1), await head())).map((check) => check.code)).toEqual(['TLOG_LEAF_MISMATCH', 'TLOG_INCLUSION_INVALID']);
  });
});

describe('what a principal signs in the browser', () => {
  it('given a key, when a bearer token is minted, then jose verifies it as writ-http+jws with the claims of mintHttpToken', async () => {
    // when
    const { token, expiresAt } = await mintBearerToken({ principalId: 'director-1', key, audience: 'writ-http:writ', now: new Date('2031-05-01T12:00:00Z'), ttlSeconds: 120, jti: 'j-1' });
    // then
    const verified = await verifyJws(token, KeySet.of([jose]), { typ: HTTP_TOKEN_JWS_TYPE });
    const claims = HttpTokenClaims.parse(JSON.parse(new TextDecoder().decode(verified.payload)));
    expect(claims).toEqual({ sub: 'director-1', iss: 'director-1', aud: 'writ-http:writ', iat: 1935403200, exp: 1935403320, jti: 'j-1' });
    expect(expiresAt.toISOString()).toBe('2031-05-01T12:02:00.000Z');
  });

  it('given a ttl over 15 minutes, when minted, then VERIFY_ARGUMENT_INVALID', async () => {
    expect(await codeOf(mintBearerToken({ principalId: 'd', key, audience: 'a', now: new Date(), ttlSeconds: 901, jti: 'j' }))).toBe('VERIFY_ARGUMENT_INVALID');
  });

  it('given a resolution, when signed, then its payload is the ApprovalResolution with resolver and time, signed without typ', async () => {
    const jws = await signApprovalResolution({ approval_id: 'apr-1', decision: 'grant', packet_hash: `sha256:${'b'.repeat(64)}`, note: 'ok' }, { principalId: 'director-1', key, now: new Date('2031-05-01T12:00:00Z') });
    const verified = await verifyJws(jws, KeySet.of([jose]));
    expect(verified.protectedHeader).toEqual({ alg: 'EdDSA', kid: 'director-k1' });
    expect(JSON.parse(new TextDecoder().decode(verified.payload))).toEqual({ approval_id: 'apr-1', decision: 'grant', packet_hash: `sha256:${'b'.repeat(64)}`, note: 'ok', resolved_by: 'director-1', resolved_at: '2031-05-01T12:00:00.000Z' });
  });

  it('given a packet and witness, when hashed, then it is sha256 of the RFC 8785 packet document, and the ref reads back to it', async () => {
    const packet = { summary: 'rm -rf build', z: 1, a: [1, 2] };
    const witness = { resources: { build: 'sha256:x' } };
    const want = `sha256:${cryptoSha256Hex(cryptoCanonical({ format: 'writ.approval-packet/1', packet, state_witness: witness }))}`;
    expect(await approvalPacketHash(packet, witness)).toBe(want);
    expect(packetHashOfRef(`artifact:${want}`)).toBe(want);
    expect(packetHashOfRef('artifact:md5:abc')).toBeUndefined();
  });

  it('given bytes, when hex-encoded and decoded, then they round-trip and odd text is refused', () => {
    expect(bytesToHex(hexToBytes('00ff10')!)).toBe('00ff10');
    expect(hexToBytes('abc')).toBeUndefined();
  });
});
