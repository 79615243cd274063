import type { PublicEd25519Jwk, ReceiptBundle, SignedTreeHead } from '@writ/contracts';
import { KeySet, canonicalJson, generateEd25519Key, sha256Hex, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { computeEventHash } from '@writ/eventstore';
import { describe, expect, it } from 'vitest';
import { APPROVAL_PRINCIPAL, TIMES, bundleKeys, buildFixture, type FixtureOptions } from '../../test/bundle.fixture.js';
import { bundleHashOf, serializeBundle } from './bundle-seal.js';
import { verifyBundle, verifyBundleText, type BundleVerification } from './verify-bundle.js';

const keys = await bundleKeys();
const fixture = await buildFixture(keys);
const attacker = await generateEd25519Key({ kid: keys.receiptNew.kid });

/** A copy of the bundle with a recomputed seal: what someone who edits a bundle would hand over. */
function resealed(bundle: ReceiptBundle): ReceiptBundle {
  return { ...bundle, bundle_hash: bundleHashOf(bundle) };
}

function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** `check → code` of every check that did not pass (`unanchored` listed as such). */
function problems(verification: BundleVerification): Record<string, string> {
  const found: Record<string, string> = {};
  for (const entry of verification.checks) {
    if (entry.status === 'pass') continue;
    const key = `${entry.check} ${entry.subject}`;
    found[key] = entry.code ?? entry.status;
  }
  return found;
}

const failedCodes = (verification: BundleVerification): string[] => verification.checks.filter((entry) => entry.status === 'fail').map((entry) => entry.code ?? 'fail');

async function signHead(body: Pick<SignedTreeHead, 'log_id' | 'tree_size' | 'root_hash' | 'timestamp'>, key: Ed25519SigningKey): Promise<SignedTreeHead> {
  const { log_id, tree_size, root_hash, timestamp } = body;
  const signed = { log_id, tree_size, root_hash, timestamp };
  return { ...signed, signer_ref: key.kid, jws: await signJws(canonicalJson(signed), key, { typ: 'writ-tree-head+jws' }) };
}

describe('verifyBundleText', () => {
  it('given a real-shaped bundle and no trusted keys, when verified, then every check passes and the trust anchor says the keys came from the bundle', async () => {
    // when
    const verification = await verifyBundleText(serializeBundle(fixture.bundle));
    // then
    expect(problems(verification)).toEqual({ 'trust.anchor keys': 'unanchored' });
    expect(verification).toMatchObject({ ok: true, anchored: false, bundle: { task_id: fixture.bundle.task_id, receipts: 3, events: 13, tree_size: 6 } });
    const anchor = verification.checks.find((entry) => entry.check === 'trust.anchor');
    expect(anchor?.detail).toContain('taken from the bundle itself');
    // and each receipt was checked end to end: event, signature, key window, chain, references, inclusion
    const settled = verification.checks.filter((entry) => entry.subject === 'receipt rct-settled-1').map((entry) => entry.check);
    expect(settled).toEqual([
      'receipt.event',
      'receipt.chain_head',
      'receipt.contract',
      'receipt.hash',
      'receipt.signature',
      'receipt.payload',
      'receipt.signer',
      'receipt.key',
      'receipt.chain',
      'receipt.references',
      'receipt.attestation',
      'receipt.grant',
      'receipt.inclusion',
    ]);
  });

  it('given a trusted JWKS holding the keys, when verified, then the bundle is anchored', async () => {
    // given
    const trusted = KeySet.of([keys.receiptOld, keys.receiptNew, keys.approval]);
    // when
    const verification = await verifyBundleText(serializeBundle(fixture.bundle), { trusted, trustSource: 'keys.json' });
    // then
    expect(problems(verification)).toEqual({});
    expect(verification).toMatchObject({ ok: true, anchored: true });
  });

  it.each([
    { note: 'lacks the rotated-out receipt key', trusted: () => KeySet.of([keys.receiptNew, keys.approval]) },
    { note: "holds another key under the receipt key's kid", trusted: () => KeySet.of([keys.receiptOld, attacker, keys.approval]) },
  ])('given a trusted JWKS that $note, when verified, then the trust anchor fails', async ({ trusted }) => {
    // when
    const verification = await verifyBundleText(serializeBundle(fixture.bundle), { trusted: trusted() });
    // then
    expect(problems(verification)).toEqual({ 'trust.anchor keys': 'TRUST_KEY_UNTRUSTED' });
    expect(verification.ok).toBe(false);
  });

  it('given a receipt signed by a key that was rotated out later, when verified, then it verifies against the key history', async () => {
    // given (the fixture's first receipts are signed by writ-receipt-k1, revoked as "rotated" after them)
    const history = fixture.bundle.keys.find((key) => key.jwk.kid === keys.receiptOld.kid);
    expect(history).toMatchObject({ valid_until: TIMES.retired, revocation_reason: 'rotated' });
    // when
    const verification = await verifyBundle(fixture.bundle);
    // then
    const key = verification.checks.find((entry) => entry.check === 'receipt.key' && entry.subject === 'receipt rct-settled-1');
    expect(key).toMatchObject({ status: 'pass' });
    expect(key?.detail).toContain(keys.receiptOld.kid);
  });

  it.each([
    { note: 'the rotated-out key, after it was retired', key: () => keys.receiptOld, at: '2031-03-02T12:00:00.001Z' },
    { note: 'the new key, before it was added', key: () => keys.receiptNew, at: '2031-03-01T11:59:59.999Z' },
  ])('given a receipt signed with $note, when verified, then its key is refused for that time', async ({ key, at }) => {
    // given
    const { bundle } = await buildFixture(keys, { secondReceiptKey: key(), secondReceiptAt: at });
    // when
    const verification = await verifyBundle(bundle);
    // then the signature itself is sound, but the key could not sign at created_at
    expect(problems(verification)).toEqual({ 'receipt.key receipt rct-refused-2': 'RECEIPT_KEY_NOT_VALID', 'trust.anchor keys': 'unanchored' });
  });

  const forgedHeads: { note: string; forge: (head: SignedTreeHead) => Promise<SignedTreeHead>; want: string[] }[] = [
    { note: 'signed by a key outside the bundle under the receipt key id', forge: (head) => signHead(head, attacker), want: ['TREE_HEAD_SIGNATURE_INVALID'] },
    { note: "signed by the approval service's key", forge: (head) => signHead(head, keys.approval), want: ['TREE_HEAD_SIGNATURE_INVALID'] },
    {
      note: 'with another root under the original signature',
      forge: async (head) => ({ ...head, root_hash: sha256Hex('another tree') }),
      want: ['BUNDLE_INCLUSION_INVALID', 'BUNDLE_INCLUSION_INVALID', 'BUNDLE_INCLUSION_INVALID', 'TREE_HEAD_SIGNATURE_INVALID'],
    },
    {
      note: 'with another root, re-signed by an outside key',
      forge: (head) => signHead({ ...head, root_hash: sha256Hex('another tree') }, attacker),
      want: ['BUNDLE_INCLUSION_INVALID', 'BUNDLE_INCLUSION_INVALID', 'BUNDLE_INCLUSION_INVALID', 'TREE_HEAD_SIGNATURE_INVALID'],
    },
    {
      note: 'with a larger size under the original signature',
      forge: async (head) => ({ ...head, tree_size: head.tree_size + 1 }),
      want: ['BUNDLE_INCLUSION_INVALID', 'BUNDLE_INCLUSION_INVALID', 'BUNDLE_INCLUSION_INVALID', 'TREE_HEAD_SIGNATURE_INVALID', 'BUNDLE_NOT_ASSERTED_MISMATCH'],
    },
    { note: 'with another timestamp under the original signature', forge: async (head) => ({ ...head, timestamp: TIMES.rotated }), want: ['TREE_HEAD_SIGNATURE_INVALID'] },
    { note: 'signed by the rotated-out key after its retirement', forge: (head) => signHead(head, keys.receiptOld), want: ['TREE_HEAD_KEY_NOT_VALID'] },
  ];

  it.each(forgedHeads)('given a tree head $note, when verified, then it fails', async ({ forge, want }) => {
    // given
    const bundle = resealed({ ...clone(fixture.bundle), tree_head: await forge(fixture.treeHead) });
    // when
    const verification = await verifyBundleText(serializeBundle(bundle));
    // then
    expect(failedCodes(verification)).toEqual(want);
  });

  it('given a grant signed by a key that is not its issuer’s, when verified, then the grant check fails', async () => {
    // given
    const { bundle } = await buildFixture(keys, { grantKey: await generateEd25519Key({ kid: keys.approval.kid }) });
    // when
    const verification = await verifyBundle(bundle);
    // then
    expect(problems(verification)).toEqual({ 'receipt.grant receipt rct-settled-1': 'GRANT_SIGNATURE_INVALID', 'trust.anchor keys': 'unanchored' });
  });

  it('given a signed receipt attesting another cell than the one the log recorded, when verified, then the attestation check fails', async () => {
    // given
    const recorded = fixture.bundle.events.find((event) => event.event_type === 'execution.completed')?.payload['environment'] as Record<string, unknown>;
    const { bundle } = await buildFixture(keys, { attestation: { ...recorded, network_mode: 'bridge' } });
    // when
    const verification = await verifyBundle(bundle);
    // then
    expect(problems(verification)).toEqual({ 'receipt.attestation receipt rct-settled-1': 'BUNDLE_ATTESTATION_MISMATCH', 'trust.anchor keys': 'unanchored' });
  });

  it('given a signed receipt naming something the segment does not hold, when verified, then the reference is unresolved', async () => {
    // given
    const { bundle } = await buildFixture(keys, { extraInputRefs: [`sha256:${sha256Hex('never recorded')}`] });
    // when
    const verification = await verifyBundle(bundle);
    // then
    expect(problems(verification)).toEqual({
      'receipt.references receipt rct-settled-1': 'BUNDLE_REFERENCE_UNRESOLVED',
      'receipt.attestation receipt rct-settled-1': 'skip',
      'trust.anchor keys': 'unanchored',
    });
  });

  it('given an execution event rewritten with every later hash recomputed, when verified, then the receipt’s hash-bound environment no longer resolves', async () => {
    // given the cell's environment changed and the chain re-sealed from there on (and the bundle re-sealed)
    const bundle = clone(fixture.bundle);
    const at = bundle.events.findIndex((event) => event.event_type === 'execution.completed');
    (bundle.events[at]?.payload['environment'] as Record<string, unknown>)['network_mode'] = 'host';
    for (let i = at; i < bundle.events.length; i++) {
      const event = bundle.events[i] as ReceiptBundle['events'][number];
      if (i > at) event.prev_event_hash = (bundle.events[i - 1] as ReceiptBundle['events'][number]).hash;
      event.hash = computeEventHash(event);
    }
    // when
    const verification = await verifyBundle(resealed(bundle));
    // then the chain is consistent again, but the signed receipts bind the environment by its hash and the chain by its head
    expect(problems(verification)).toEqual({
      'receipt.chain_head receipt rct-settled-1': 'BUNDLE_CHAIN_HEAD_MISMATCH',
      'receipt.chain_head receipt rct-refused-2': 'BUNDLE_CHAIN_HEAD_MISMATCH',
      'receipt.references receipt rct-settled-1': 'BUNDLE_REFERENCE_UNRESOLVED',
      'receipt.attestation receipt rct-settled-1': 'skip',
      'trust.anchor keys': 'unanchored',
    });
  });

  it('given an event no receipt names by hash rewritten with every later hash recomputed, when verified, then the signed chain heads catch it', async () => {
    // given the receipt_pending fact's result changed and the chain re-sealed from there on
    const bundle = clone(fixture.bundle);
    const at = bundle.events.findIndex((event) => event.event_type === 'attempt.receipt_pending');
    (bundle.events[at] as ReceiptBundle['events'][number]).payload['result_code'] = 'failed';
    for (let i = at; i < bundle.events.length; i++) {
      const event = bundle.events[i] as ReceiptBundle['events'][number];
      if (i > at) event.prev_event_hash = (bundle.events[i - 1] as ReceiptBundle['events'][number]).hash;
      event.hash = computeEventHash(event);
    }
    // when
    const verification = await verifyBundle(resealed(bundle));
    // then every receipt signed over a head at or after the rewrite fails; the approval receipt before it has no head to break
    expect(problems(verification)).toEqual({
      'receipt.chain_head receipt rct-settled-1': 'BUNDLE_CHAIN_HEAD_MISMATCH',
      'receipt.chain_head receipt rct-refused-2': 'BUNDLE_CHAIN_HEAD_MISMATCH',
      'trust.anchor keys': 'unanchored',
    });
  });

  const edits: { note: string; edit: (bundle: ReceiptBundle) => void; want: Record<string, string> }[] = [
    {
      note: 'a receipt left out',
      edit: (bundle) => void bundle.receipts.splice(1, 1),
      want: { 'receipts.complete task task-bundle-1': 'BUNDLE_RECEIPTS_INCOMPLETE', 'receipt.chain receipt rct-refused-2': 'RECEIPT_CHAIN_BROKEN' },
    },
    {
      note: 'a reference pointed elsewhere',
      edit: (bundle) => {
        const reference = bundle.receipts[1]?.references[0];
        if (reference !== undefined) reference.event_id = 'evt-task-bundle-1-2';
      },
      want: { 'receipt.references receipt rct-settled-1': 'BUNDLE_REFERENCES_MISMATCH' },
    },
    { note: 'a not-asserted statement dropped', edit: (bundle) => void bundle.not_asserted.pop(), want: { 'not_asserted bundle': 'BUNDLE_NOT_ASSERTED_MISMATCH' } },
    {
      note: 'the rotated-out key listed as never revoked',
      edit: (bundle) => {
        const key = bundle.keys.find((entry) => entry.jwk.kid === keys.receiptOld.kid);
        if (key !== undefined) {
          key.valid_until = null;
          delete key.revocation_reason;
        }
      },
      want: { 'keys.history principals writ-receipt, writ-approval, director-1': 'BUNDLE_KEYS_MISMATCH' },
    },
    {
      note: "the grant issuer's key events left out",
      edit: (bundle) => {
        bundle.principals = bundle.principals.filter((principal) => principal.principal_id !== APPROVAL_PRINCIPAL);
        bundle.keys = bundle.keys.filter((key) => key.principal_id !== APPROVAL_PRINCIPAL);
      },
      want: { 'receipt.grant receipt rct-settled-1': 'GRANT_SIGNATURE_INVALID' },
    },
  ];

  it.each(edits)('given a re-sealed bundle with $note, when verified, then the check that covers it fails', async ({ edit, want }) => {
    // given
    const bundle = clone(fixture.bundle);
    edit(bundle);
    // when
    const verification = await verifyBundleText(serializeBundle(resealed(bundle)));
    // then
    expect(problems(verification)).toEqual({ ...want, 'trust.anchor keys': 'unanchored' });
  });

  it('given the bundle re-serialized with indentation, when verified, then only the canonical-form check fails', async () => {
    // when
    const verification = await verifyBundleText(JSON.stringify(fixture.bundle, null, 2));
    // then
    expect(problems(verification)).toEqual({ 'bundle.canonical bundle': 'BUNDLE_NOT_CANONICAL', 'trust.anchor keys': 'unanchored' });
    expect(verification.ok).toBe(false);
  });

  it('given a file that is not JSON, when verified, then it fails on parsing', async () => {
    const verification = await verifyBundleText(`${serializeBundle(fixture.bundle)}}`);
    expect(failedCodes(verification)).toEqual(['BUNDLE_NOT_JSON']);
  });

  it('given an event with a field added, when verified, then the bundle does not match its contract and nothing else is claimed', async () => {
    // given
    const bundle = clone(fixture.bundle) as unknown as { events: Record<string, unknown>[] };
    (bundle.events[0] as Record<string, unknown>)['note'] = 'added later';
    // when
    const verification = await verifyBundle(bundle);
    // then
    expect(verification.checks.map((entry) => [entry.check, entry.status])).toEqual([
      ['bundle.schema', 'fail'],
      ['bundle.seal', 'skip'],
    ]);
  });
});

describe('approval.authority: every approval resolution of the bundle was made by a director', () => {
  it("given the director's signed grant over the packet, when verified, then approval.authority passes and names the signer, its key and the packet", async () => {
    const check = (await verifyBundle(fixture.bundle)).checks.find((entry) => entry.check === 'approval.authority');
    expect(check).toMatchObject({ subject: 'approval apr-1', status: 'pass' });
    expect(check?.detail).toContain('signed by director-1-k1 of director-1');
    expect(check?.detail).toContain('its registration is authorized');
  });

  const cases: { note: string; resolution: NonNullable<FixtureOptions['resolution']>; want: string }[] = [
    { note: 'no signature (forged straight into the log)', resolution: { unsigned: true }, want: 'APPROVAL_RESOLUTION_UNSIGNED' },
    { note: 'a signature by a principal without the director role', resolution: { by: 'observer-1' }, want: 'APPROVAL_RESOLUTION_NOT_DIRECTOR' },
    { note: 'a signature by the requester itself', resolution: { by: 'agent-1' }, want: 'APPROVAL_RESOLUTION_BY_REQUESTER' },
    { note: "the director's resolution of another approval", resolution: { fields: { approval_id: 'apr-other' } }, want: 'APPROVAL_RESOLUTION_MISMATCH' },
    { note: 'a resolution over a stale packet hash', resolution: { fields: { packet_hash: `sha256:${'0'.repeat(64)}` } }, want: 'APPROVAL_RESOLUTION_PACKET_STALE' },
    { note: 'a resolution signed after the approval expired', resolution: { fields: { resolved_at: TIMES.retired } }, want: 'APPROVAL_RESOLUTION_TIME_INVALID' },
  ];
  it.each(cases)('given an approval.granted with $note, when verified, then approval.authority fails $want and nothing else does', async ({ resolution, want }) => {
    // given a task whose receipts were signed over that resolution (as the incident's were)
    const { bundle } = await buildFixture(keys, { resolution });
    // when
    const verification = await verifyBundle(bundle);
    // then
    expect(verification.ok).toBe(false);
    expect(problems(verification)).toEqual({ 'approval.authority approval apr-1': want, 'trust.anchor keys': 'unanchored' });
  });

  it("given the director's key events left out of a re-sealed bundle, when verified, then approval.authority fails: no history says it was a director", async () => {
    // given
    const bundle = clone(fixture.bundle);
    bundle.principals = bundle.principals.filter((principal) => principal.principal_id !== 'director-1');
    bundle.keys = bundle.keys.filter((key) => key.principal_id !== 'director-1');
    // when
    const verification = await verifyBundleText(serializeBundle(resealed(bundle)));
    // then
    const check = verification.checks.find((entry) => entry.check === 'approval.authority');
    expect(check).toMatchObject({ status: 'fail', code: 'APPROVAL_RESOLUTION_NOT_DIRECTOR' });
    expect(check?.detail).toContain('the bundle holds no key events of it');
  });

  it('given a registration check (the trust-anchor seam) that does not authorize the director, when verified with it, then APPROVAL_RESOLUTION_NOT_DIRECTOR', async () => {
    const verification = await verifyBundle(fixture.bundle, { registrations: () => 'not registered by an operator' });
    expect(problems(verification)).toMatchObject({ 'approval.authority approval apr-1': 'APPROVAL_RESOLUTION_NOT_DIRECTOR' });
  });

  describe('principals.authority: every registration, key and role chains to the trust anchor', () => {
    it('given every principal registered or enrolled by the anchor’s operator, when verified, then one passing check per principal', async () => {
      const verification = await verifyBundle(fixture.bundle);
      const authority = verification.checks.filter((entry) => entry.check === 'principals.authority');
      expect(authority.map((entry) => [entry.subject, entry.status])).toEqual([
        ['principal writ-receipt', 'pass'],
        ['principal writ-approval', 'pass'],
        ['principal director-1', 'pass'],
      ]);
      expect(authority[0]?.detail).toContain('a service enrolled by operator');
    });

    it('given a director appended with no operator’s authorization (a bus credential alone), when verified, then principals.authority REGISTRATION_UNSIGNED and approval.authority APPROVAL_RESOLUTION_NOT_DIRECTOR', async () => {
      const forged = await buildFixture(keys, { unauthorized: ['director-1'] });
      const verification = await verifyBundle(forged.bundle);
      expect(verification.ok).toBe(false);
      expect(problems(verification)).toEqual({
        'principals.authority principal director-1': 'REGISTRATION_UNSIGNED',
        'approval.authority approval apr-1': 'APPROVAL_RESOLUTION_NOT_DIRECTOR',
        'trust.anchor keys': 'unanchored',
      });
      const approval = verification.checks.find((entry) => entry.check === 'approval.authority');
      expect(approval?.detail).toContain('REGISTRATION_UNSIGNED');
    });

    it('given a director registered by a principal that is no operator (observer-1 signs), when verified, then REGISTRATION_SIGNER_NOT_OPERATOR', async () => {
      const forged = await buildFixture(keys, { registrars: { 'director-1': { principalId: 'observer-1', key: keys.observer } } });
      const verification = await verifyBundle(forged.bundle);
      expect(problems(verification)).toMatchObject({
        'principals.authority principal director-1': 'REGISTRATION_SIGNER_NOT_OPERATOR',
        'approval.authority approval apr-1': 'APPROVAL_RESOLUTION_NOT_DIRECTOR',
      });
    });

    it('given the grant issuer’s key registered without its enrollment, when verified, then principals.authority fails for it', async () => {
      const forged = await buildFixture(keys, { unauthorized: [APPROVAL_PRINCIPAL] });
      expect(problems(await verifyBundle(forged.bundle))).toEqual({ [`principals.authority principal ${APPROVAL_PRINCIPAL}`]: 'REGISTRATION_UNSIGNED', 'trust.anchor keys': 'unanchored' });
    });

    it('given a trust anchor of the verifier’s own that is not the bundle’s, when verified with it, then BUNDLE_TRUST_ANCHOR_MISMATCH', async () => {
      const other = await bundleKeys();
      const verification = await verifyBundle(fixture.bundle, { trustAnchor: { principal_id: 'operator', keys: [other.operator.publicJwk as PublicEd25519Jwk] }, trustAnchorSource: 'the trust anchor pinned.json' });
      expect(problems(verification)).toMatchObject({ [`principals.authority principals writ-receipt, ${APPROVAL_PRINCIPAL}, director-1`]: 'BUNDLE_TRUST_ANCHOR_MISMATCH' });
      expect(verification.ok).toBe(false);
    });

    it('given a bundle with no trust anchor (stripped, or exported before it) and none given, when verified, then BUNDLE_TRUST_ANCHOR_MISSING; with the deployment’s anchor given, it verifies', async () => {
      const old = await buildFixture(keys, { noTrustAnchor: true });
      const verification = await verifyBundle(old.bundle);
      expect(verification.ok).toBe(false);
      expect(problems(verification)).toMatchObject({ [`principals.authority principals writ-receipt, ${APPROVAL_PRINCIPAL}, director-1`]: 'BUNDLE_TRUST_ANCHOR_MISSING', 'approval.authority approval apr-1': 'APPROVAL_RESOLUTION_NOT_DIRECTOR' });
      const anchored = await verifyBundle(old.bundle, { trustAnchor: { principal_id: 'operator', keys: [keys.operator.publicJwk as PublicEd25519Jwk] } });
      expect(problems(anchored)).toEqual({ 'trust.anchor keys': 'unanchored' });
    });
  });
});
