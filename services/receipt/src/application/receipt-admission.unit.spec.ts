import type { Receipt } from '@writ/contracts';
import { generateEd25519Key, importEd25519PublicJwk, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { keyWindows } from '@writ/runtime';
import { beforeAll, describe, expect, it } from 'vitest';
import { receiptBody } from '../../test/receipt-body.js';
import type { ReceiptBody } from './build-receipt.js';
import { admitReceiptIssued, type ReceiptSignerKeys } from './receipt-admission.js';
import { RECEIPT_JWS_TYPE, sealReceipt } from './receipt-seal.js';

const PRINCIPAL = 'writ-receipt';
const REGISTERED = '2030-01-01T00:00:00.000Z';
const REVOKED = '2030-01-03T00:00:00.000Z';

const body = (signerRef: string, overrides: Partial<ReceiptBody> = {}): ReceiptBody => receiptBody(signerRef, { created_at: '2030-01-02T00:00:00.000Z', ...overrides });

let serviceKey: Ed25519SigningKey;
let retiredKey: Ed25519SigningKey;
let forgerKey: Ed25519SigningKey;
let keys: ReceiptSignerKeys;

const seal = (key: Ed25519SigningKey, overrides: Partial<ReceiptBody> = {}) =>
  sealReceipt(body(key.kid, overrides), { kid: key.kid, sign: (canonical) => signJws(canonical, key, { typ: RECEIPT_JWS_TYPE }) });

const issued = (payload: unknown, taskId = 'task-1') => ({ event_id: 'evt-9', task_id: taskId, payload: payload as Record<string, unknown> });

beforeAll(async () => {
  serviceKey = await generateEd25519Key({ kid: 'writ-receipt-k2' });
  retiredKey = await generateEd25519Key({ kid: 'writ-receipt-k1' });
  forgerKey = await generateEd25519Key({ kid: 'writ-receipt-k2' }); // the service's kid, another key
  const events = [
    { event_type: 'principal.registered', payload: { principal_id: PRINCIPAL, principal_type: 'service', display_name: 'receipt', roles: [], keys: [retiredKey.publicJwk], registered_by: PRINCIPAL, at: REGISTERED } },
    { event_type: 'principal.key_added', payload: { key: serviceKey.publicJwk, added_by: PRINCIPAL, at: REGISTERED } },
    { event_type: 'principal.key_revoked', payload: { kid: retiredKey.kid, reason: 'rotated', revoked_by: PRINCIPAL, at: REVOKED } },
  ];
  keys = { principalId: PRINCIPAL, windows: keyWindows(events), publicKey: (window) => importEd25519PublicJwk(window.jwk) };
});

describe('admitReceiptIssued', () => {
  it('given a receipt sealed by a key of the receipt principal valid at its created_at, then it is admitted as the leaf of its own event and task', async () => {
    const { receipt, jws } = await seal(serviceKey);
    expect(await admitReceiptIssued(issued({ receipt, jws, cause: 'settled' }), keys)).toEqual({
      ok: true,
      receipt: { receipt_id: 'rct-1', task_id: 'task-1', receipt_hash: receipt.receipt_hash, receipt_event_id: 'evt-9' },
    });
  });

  it('given a key retired by a rotation, then what it signed while valid is admitted and what it signs after is not', async () => {
    const before = await seal(retiredKey, { created_at: '2030-01-02T12:00:00.000Z' });
    expect(await admitReceiptIssued(issued({ receipt: before.receipt, jws: before.jws }), keys)).toMatchObject({ ok: true });
    const after = await seal(retiredKey, { created_at: REVOKED });
    expect(await admitReceiptIssued(issued({ receipt: after.receipt, jws: after.jws }), keys)).toMatchObject({ ok: false, refusal: { code: 'TLOG_RECEIPT_KEY_NOT_VALID' } });
  });

  const cases: { note: string; event: () => Promise<ReturnType<typeof issued>>; want: string; receiptId?: string | null }[] = [
    { note: 'a payload that is not a ReceiptIssued', event: async () => issued({ receipt: { receipt_id: 'rct-1' }, jws: 'x' }), want: 'TLOG_RECEIPT_INVALID' },
    { note: 'a payload without a readable receipt id', event: async () => issued({ note: 'junk' }), want: 'TLOG_RECEIPT_INVALID', receiptId: null },
    {
      note: 'a genuine receipt appended to another task',
      event: async () => issued({ ...(await seal(serviceKey)) }, 'task-2'),
      want: 'TLOG_RECEIPT_TASK_MISMATCH',
    },
    {
      note: 'a body changed after sealing',
      event: async () => {
        const { receipt, jws } = await seal(serviceKey);
        return issued({ receipt: { ...receipt, result_summary: 'succeeded: all good' } satisfies Receipt, jws });
      },
      want: 'TLOG_RECEIPT_HASH_MISMATCH',
    },
    {
      note: 'a garbage signature over a well-hashed body',
      event: async () => {
        const { receipt, jws } = await seal(serviceKey);
        const [header, payload] = jws.split('.');
        const garbage = Buffer.from('g'.repeat(64)).toString('base64url');
        return issued({ receipt: { ...receipt, signature: `${header}..${garbage}` }, jws: `${header}.${payload}.${garbage}` });
      },
      want: 'TLOG_RECEIPT_SIGNATURE_INVALID',
    },
    { note: "another key under the service key's kid", event: async () => issued({ ...(await seal(forgerKey)) }), want: 'TLOG_RECEIPT_SIGNATURE_INVALID' },
    {
      note: 'a kid the receipt principal never had',
      event: async () => issued({ ...(await seal(await generateEd25519Key({ kid: 'mallory-k1' }))) }),
      want: 'TLOG_RECEIPT_KEY_UNKNOWN',
    },
    { note: 'a receipt dated before its key was registered', event: async () => issued({ ...(await seal(serviceKey, { created_at: '2029-12-31T23:59:59.000Z' })) }), want: 'TLOG_RECEIPT_KEY_NOT_VALID' },
    {
      note: 'a signature by the service key over another receipt',
      event: async () => {
        const { receipt } = await seal(serviceKey);
        const other = await seal(serviceKey, { receipt_id: 'rct-2' });
        return issued({ receipt: { ...receipt, signature: other.receipt.signature }, jws: other.jws });
      },
      want: 'TLOG_RECEIPT_SIGNATURE_INVALID',
    },
  ];

  it.each(cases)('given $note, then it is refused $want, naming the event, its task and the receipt id it claims', async ({ event, want, receiptId }) => {
    const admission = await admitReceiptIssued(await event(), keys);
    expect(admission).toMatchObject({ ok: false, refusal: { code: want, receipt_event_id: 'evt-9', receipt_id: receiptId === undefined ? 'rct-1' : receiptId } });
    if (!admission.ok) expect(admission.refusal.reason.length).toBeGreaterThan(0);
  });
});
