import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ReceiptIssued,
  hasErrorCode,
  type EventEnvelope,
  type KeyRotation,
  type PrincipalRegistered,
  type PrincipalRole,
  type RotateKeyReply,
  type SignedTreeHead,
} from '@writ/contracts';
import { canonicalJson, generateEd25519Key, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { keyLifecycles } from '@writ/runtime';
import { uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TlogRig, type SeededAttempt } from '../test/tlog-rig.js';
import { verifyReceipt } from './application/verify-receipt.js';
import type { ReceiptApp } from './bootstrap.js';

/**
 * Rotating the receipt service's key (`<root>.qry.receipt.rotate-key`) and
 * issuing receipts concurrently, on the real service in this process against
 * the real NATS (the rig's own subject root and streams, deleted afterwards),
 * with its key directory in a temporary directory. The services' clock is
 * the test's wall clock plus an offset: a retirement is reached by moving the
 * offset past `retire_after`, and the services' own checks (every second
 * here) append the revocation, which the test waits for in the log.
 */

const rig = new TlogRig();
const LOG = uniqueName('log');
const PRINCIPAL = 'writ-receipt';
const RETIRE_SECONDS = 120;
const ENV = { WRIT_RECEIPT_KEY_RETIRE_SECONDS: String(RETIRE_SECONDS), WRIT_RECEIPT_KEY_CHECK_SECONDS: '1', WRIT_RECEIPT_CONCURRENCY: '8' };
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);
let service: ReceiptApp;

interface User {
  readonly id: string;
  readonly key: Ed25519SigningKey;
}
let director: User;
let observer: User;
let agent: User;

async function registerUser(roles: PrincipalRole[], principalType: PrincipalRegistered['principal_type'] = 'user'): Promise<User> {
  const id = uniqueName('user');
  const key = await generateEd25519Key({ kid: `${id}-k1` });
  const at = new Date().toISOString();
  const payload: PrincipalRegistered = { principal_id: id, principal_type: principalType, display_name: id, roles, keys: [key.publicJwk], registered_by: 'test', at };
  await rig.store.appendToEntity(
    'principal',
    id,
    [{ event_id: uniqueName('evt'), schema_version: 1, event_type: 'principal.registered', entity_type: 'principal', entity_id: id, occurred_at: at, actor_type: 'system', actor_id: 'test', payload, causation_id: null, correlation_id: id }],
    0,
  );
  return { id, key };
}

async function rotationJws(user: User, overrides: Partial<KeyRotation> = {}, signer: Ed25519SigningKey = user.key): Promise<string> {
  const rotation: KeyRotation = { service: 'receipt', requested_by: user.id, requested_at: clock().toISOString(), reason: 'scheduled rotation', ...overrides };
  return signJws(canonicalJson(rotation), signer);
}

const rotate = (jws: string): Promise<RotateKeyReply> => rig.bus.request(rig.subjects.rotateKey, { rotation_jws: jws });

/** The request is refused with `code` (the code is what a caller branches on, never the message). */
async function expectRefused(code: string, pending: Promise<unknown>): Promise<void> {
  const error = await pending.then(
    () => new Error('the request was accepted'),
    (failure: unknown) => failure,
  );
  expect(hasErrorCode(error, code), `expected ${code}, got ${String(error)}`).toBe(true);
}

const principalEvents = async (): Promise<EventEnvelope[]> => (await rig.store.readEntity('principal', PRINCIPAL)).map(({ event }) => event);
const revocations = async (): Promise<EventEnvelope[]> => (await principalEvents()).filter((event) => event.event_type === 'principal.key_revoked');

/** A denial receipt for a new attempt of `taskId` (a new task by default), as the log holds it. */
async function receiptFor(taskId = uniqueName('task')): Promise<ReceiptIssued> {
  const attempt = await rig.seedDeniedAttempt(taskId);
  const before = (await rig.store.read(taskId)).filter(({ event }) => event.event_type === 'receipt.issued').length;
  await rig.issue(attempt);
  const issued = await rig.receiptsOf(taskId, before + 1);
  return ReceiptIssued.parse(issued.find(({ issued: payload }) => payload.receipt.attempt_id === attempt.attemptId)?.issued);
}

/** The first head published at or above `size`. */
async function headCovering(size: number): Promise<SignedTreeHead> {
  return waitFor(async () => (await rig.heads(LOG)).find((head) => head.tree_size >= size), { what: `a tree head of at least ${size} leaves`, timeoutMs: 30_000, intervalMs: 50 });
}

beforeAll(async () => {
  await rig.start();
  service = await rig.startService(LOG, { clock, env: ENV });
  [director, observer, agent] = await Promise.all([registerUser(['director']), registerUser(['observer']), registerUser(['director'], 'agent')]);
});

afterAll(async () => {
  await rig.stop();
});

describe('receipt service: rotate-key refusals', () => {
  it('refuses a rotation by an observer or an agent, a forged, a stale or a malformed one, and one signed for another service, appending nothing', async () => {
    const before = await principalEvents();
    await expectRefused('RECEIPT_SIGNER_NOT_ALLOWED', rotate(await rotationJws(observer)));
    await expectRefused('RECEIPT_SIGNER_NOT_ALLOWED', rotate(await rotationJws(agent)));
    const forger = await generateEd25519Key({ kid: director.key.kid });
    await expectRefused('RECEIPT_REQUEST_SIGNATURE_INVALID', rotate(await rotationJws(director, {}, forger)));
    await expectRefused('RECEIPT_REQUEST_SIGNATURE_INVALID', rotate('not-a-jws'));
    await expectRefused('RECEIPT_SIGNED_REQUEST_STALE', rotate(await rotationJws(director, { requested_at: new Date(clock().getTime() - 301_000).toISOString() })));
    await expectRefused('RECEIPT_SIGNED_REQUEST_MISMATCH', rotate(await rotationJws(director, { service: 'approval' })));
    await expectRefused('CONTRACT_INVALID', rig.bus.request(rig.subjects.rotateKey, { rotation: 'x' }));
    expect(await principalEvents()).toEqual(before);
    expect(service.activeKid()).toBe(service.kid);
  });
});

describe('receipt service: key rotation', () => {
  it('rotates: key_added first, later receipts and tree heads are signed by the new key, earlier ones verify against the key history; a repeat rotates nothing more', async () => {
    // given a receipt and a tree head signed with the key of the start
    const oldKid = service.kid;
    const before = await receiptFor();
    expect(before.receipt.signer_ref).toBe(oldKid);
    const headBefore = await headCovering((await rig.entriesAtLeast(LOG, 1)).length);
    expect(headBefore.signer_ref).toBe(oldKid);

    // when a director rotates the key
    const jws = await rotationJws(director);
    const reply = await rotate(jws);

    // then the log holds the new key, replacing the old one until retire_after, and the service signs with it
    expect(reply).toMatchObject({ principal_id: PRINCIPAL, status: 'rotated', previous_kid: oldKid });
    expect(reply.kid).not.toBe(oldKid);
    expect(Date.parse(reply.retire_after) - clock().getTime()).toBeGreaterThan((RETIRE_SECONDS - 10) * 1000);
    const added = (await principalEvents()).filter((event) => event.event_type === 'principal.key_added');
    expect(added.map((event) => event.payload)).toEqual([expect.objectContaining({ key: expect.objectContaining({ kid: reply.kid }), added_by: director.id, replaces: { kid: oldKid, retire_after: reply.retire_after } })]);
    expect(service.activeKid()).toBe(reply.kid);
    // and the private key never reaches the log
    expect(JSON.stringify(added)).not.toContain('"d"');

    // and a repeat of the same signed request rotates nothing more
    expect(await rotate(jws)).toMatchObject({ status: 'already_rotated', kid: reply.kid, previous_kid: oldKid });
    expect((await principalEvents()).filter((event) => event.event_type === 'principal.key_added')).toHaveLength(1);

    // when a receipt is issued after the rotation, on a task that already has one from before
    const after = await receiptFor(before.receipt.task_id);

    // then it is signed by the new key and chained to the earlier one
    expect(after.receipt.signer_ref).toBe(reply.kid);
    expect(after.receipt.prev_receipt_hash).toBe(before.receipt.receipt_hash);
    // and both verify against the key history the log publishes
    const history = await rig.receiptKeys(PRINCIPAL);
    expect(await verifyReceipt(before.receipt, before.jws, history)).toMatchObject({ ok: true, kid: oldKid });
    expect(await verifyReceipt(after.receipt, after.jws, history)).toMatchObject({ ok: true, kid: reply.kid });

    // and the next tree head, covering the new receipt, is signed by the new key and verifies
    const leaf = await waitFor(async () => (await rig.entries(LOG)).find((entry) => entry.receipt_id === after.receipt.receipt_id), { what: 'the leaf of the receipt after the rotation', timeoutMs: 30_000 });
    const headAfter = await headCovering(leaf.leaf_index + 1);
    expect(headAfter.signer_ref).toBe(reply.kid);
    await expect(rig.verifyHead(headAfter, PRINCIPAL)).resolves.toBe(canonicalJson({ log_id: headAfter.log_id, tree_size: headAfter.tree_size, root_hash: headAfter.root_hash, timestamp: headAfter.timestamp }));
    await expect(rig.verifyHead(headBefore, PRINCIPAL)).resolves.toContain(`"tree_size":${headBefore.tree_size}`);
  });

  it('given a second replica on the same key directory, when one rotates, then the other signs with the new key from its next check, and at retire_after the replaced key is revoked once', async () => {
    // given a second replica sharing the key directory, signing with the active key
    const replica = await rig.startService(LOG, { clock, env: ENV });
    try {
      const replaced = service.activeKid();
      expect(replica.activeKid()).toBe(replaced);

      // when a director's rotation reaches one of them
      const reply = await rotate(await rotationJws(director, { reason: 'two replicas' }));
      expect(reply).toMatchObject({ status: 'rotated', previous_kid: replaced });

      // then both sign with the new key (the other one from its next check)
      await waitFor(async () => (service.activeKid() === reply.kid && replica.activeKid() === reply.kid ? true : undefined), { what: 'both replicas on the new key', timeoutMs: 15_000 });
      const receipts = await Promise.all([receiptFor(), receiptFor(), receiptFor(), receiptFor()]);
      expect(receipts.map((issued) => issued.receipt.signer_ref)).toEqual(Array(4).fill(reply.kid));

      // and nothing is revoked before retire_after
      expect(keyLifecycles(await principalEvents()).find((key) => key.kid === replaced)).toMatchObject({ status: 'retiring', retire_after: reply.retire_after, replaced_by: reply.kid });

      // when the clock passes retire_after, then both replicas' checks run (each every second), and the log says it once
      offsetMs += RETIRE_SECONDS * 1000 + 1_000;
      const revoked = await waitFor(
        async () => {
          const found = (await revocations()).filter((event) => (event.payload as { kid: string }).kid === replaced);
          return found.length > 0 ? found : undefined;
        },
        { what: `principal.key_revoked of ${replaced}`, timeoutMs: 15_000 },
      );
      expect(revoked).toHaveLength(1);
      expect(revoked[0]?.payload).toMatchObject({ kid: replaced, reason: 'rotated', revoked_by: PRINCIPAL });
      // (the key the first rotation replaced is due as well now: each key is revoked once)
      const revokedKids = (await revocations()).map((event) => (event.payload as { kid: string }).kid);
      expect(new Set(revokedKids).size).toBe(revokedKids.length);
      expect(keyLifecycles(await principalEvents()).find((key) => key.kid === replaced)).toMatchObject({ status: 'retired', reason: 'rotated' });
    } finally {
      await rig.closeService(replica);
    }
  });

  it('given a restart after a rotation, then the new process signs with the new key and appends nothing for it at start', async () => {
    // given a rotation, then the service stops
    const reply = await rotate(await rotationJws(director, { reason: 'before a restart' }));
    expect(reply.status).toBe('rotated');
    await rig.closeService(service);
    const eventsBefore = await principalEvents();

    // when it starts again on the same key directory
    service = await rig.startService(LOG, { clock, env: ENV });

    // then it signs with the rotated key, its receipts carry it, and the log is as it was
    expect(service.kid).toBe(reply.kid);
    expect((await receiptFor()).receipt.signer_ref).toBe(reply.kid);
    expect(await principalEvents()).toEqual(eventsBefore);
    // and the keyring on disk names it active, the replaced key retiring until its retire_after
    const state = JSON.parse(await readFile(join(keyDirOf(), 'keyring.json'), 'utf8')) as { active: string; retiring: { kid: string; retire_after: string }[] };
    expect(state.active).toBe(reply.kid);
    expect(state.retiring).toEqual([expect.objectContaining({ kid: reply.previous_kid, retire_after: reply.retire_after })]);
  });
});

describe('receipt service: concurrent issuance', () => {
  it('given several attempts of one task and of other tasks asked at once of one instance, then each task chains its receipts in the order asked, and each receipt is one leaf', async () => {
    // given three tasks of four attempts each, asked for all at once
    const tasks = [uniqueName('task'), uniqueName('task'), uniqueName('task')];
    const attempts: SeededAttempt[] = [];
    for (let n = 0; n < 4; n++) for (const taskId of tasks) attempts.push(await rig.seedDeniedAttempt(taskId));
    const leavesBefore = (await rig.entries(LOG)).length;
    // published in this order (the stream's), each without waiting for its receipt: up to WRIT_RECEIPT_CONCURRENCY are handled at once
    for (const attempt of attempts) await rig.issue(attempt);

    for (const taskId of tasks) {
      // then the task's receipts are its attempts in the order they were asked for, each chained to the one before
      const issued = (await rig.receiptsOf(taskId, 4)).map(({ issued: payload }) => payload.receipt);
      expect(issued.map((receipt) => receipt.attempt_id)).toEqual(attempts.filter((attempt) => attempt.taskId === taskId).map((attempt) => attempt.attemptId));
      expect(issued.map((receipt) => receipt.prev_receipt_hash)).toEqual([null, ...issued.slice(0, -1).map((receipt) => receipt.receipt_hash)]);
    }
    // and the log holds each receipt once, densely
    const entries = await rig.entriesAtLeast(LOG, leavesBefore + attempts.length);
    expect(entries.map((entry) => entry.leaf_index)).toEqual(entries.map((_, index) => index));
    expect(new Set(entries.map((entry) => entry.receipt_id)).size).toBe(entries.length);
  });
});

/** The rig's key directory: the key file's path without `.jwk.json`, as the config derives it. */
function keyDirOf(): string {
  return rig.config(LOG).keys.dir;
}
