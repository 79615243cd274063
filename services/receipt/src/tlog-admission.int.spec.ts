import { InclusionProofReply, ReceiptIssued, hasErrorCode } from '@writ/contracts';
import { hexToBytes, verifyInclusion } from '@writ/crypto';
import { uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TlogRig, type Sequenced } from '../test/tlog-rig.js';
import { receiptLeafHash } from './application/transparency-log.js';
import type { ReceiptApp } from './bootstrap.js';

/**
 * Admission to the receipt transparency log (DESIGN invariant 9: a receipt is
 * not trusted for merely being in the log), against the real NATS: a
 * `receipt.issued` appended straight to a task stream around the receipt
 * service becomes a leaf only when it is signed by a key of the receipt
 * service principal valid at its `created_at`; anything else gets no leaf, a
 * `tlog.receipt_refused` with its code, and the sequencer goes on.
 */

const rig = new TlogRig();
const LOG = uniqueName('adm');
const sequenced: Sequenced[] = [];
let service: ReceiptApp;

async function proofRefusal(receiptId: string): Promise<{ code: string; refusal?: unknown }> {
  try {
    await rig.bus.request(rig.subjects.inclusionProof, { receipt_id: receiptId });
  } catch (error) {
    return hasErrorCode(error) ? { code: error.code } : { code: 'untyped' };
  }
  return { code: 'answered' };
}

/** Issues a denial receipt through the real command and waits until the log holds it as a leaf. */
async function genuineLeaf(): Promise<{ receiptId: string; receiptHash: string }> {
  const attempt = await rig.seedDeniedAttempt();
  await rig.issue(attempt);
  const [issued] = await rig.receiptsOf(attempt.taskId);
  const receipt = ReceiptIssued.parse(issued?.event.payload).receipt;
  await waitFor(async () => ((await rig.entries(LOG)).some((entry) => entry.receipt_id === receipt.receipt_id) ? true : undefined), {
    what: `a leaf for ${receipt.receipt_id}`,
    timeoutMs: 30_000,
    intervalMs: 50,
  });
  return { receiptId: receipt.receipt_id, receiptHash: receipt.receipt_hash ?? '' };
}

beforeAll(async () => {
  await rig.start();
  service = await rig.startService(LOG, { sequenced });
});

afterAll(async () => {
  await rig.stop();
});

describe('transparency log admission', () => {
  it('given forged receipt.issued events on task streams (a garbage signature, a key the receipt service never had), when a genuine receipt follows them, then the forged ones get no leaf but a refusal with their code, and the genuine one is a leaf', async () => {
    // given
    const garbage = await rig.appendReceiptDirectly(uniqueName('task'), { signer: { kind: 'garbage' } });
    const throwaway = await rig.appendReceiptDirectly(uniqueName('task'), { signer: { kind: 'throwaway' } });
    // when
    const genuine = await genuineLeaf();
    // then
    const refusals = await waitFor(async () => {
      const found = await rig.refusals(LOG);
      return found.length >= 2 ? found : undefined;
    }, { what: 'two refusals' });
    expect(refusals.map(({ receipt_id, receipt_event_id, task_id, code }) => ({ receipt_id, receipt_event_id, task_id, code }))).toEqual([
      { receipt_id: garbage.receiptId, receipt_event_id: garbage.eventId, task_id: garbage.taskId, code: 'TLOG_RECEIPT_SIGNATURE_INVALID' },
      { receipt_id: throwaway.receiptId, receipt_event_id: throwaway.eventId, task_id: throwaway.taskId, code: 'TLOG_RECEIPT_KEY_UNKNOWN' },
    ]);
    const entries = await rig.entries(LOG);
    expect(entries.map((entry) => entry.receipt_id)).toEqual([genuine.receiptId]);
    expect(sequenced).toEqual([
      { receiptId: garbage.receiptId, outcome: 'refused' },
      { receiptId: throwaway.receiptId, outcome: 'refused' },
      { receiptId: genuine.receiptId, outcome: 'appended' },
    ]);
  });

  it('when an inclusion proof of a refused receipt is asked, then the reply is TLOG_RECEIPT_REFUSED and no head is signed for it; the genuine receipt is proven', async () => {
    // given the genuine receipt proven first: its proof signs a head covering every leaf, if the sequencer's own
    // head for the last leaf has not landed yet (it would otherwise land between the counts below)
    const [leaf] = await rig.entries(LOG);
    const reply = InclusionProofReply.parse(await rig.bus.request(rig.subjects.inclusionProof, { receipt_id: leaf?.receipt_id }));
    expect(verifyInclusion(hexToBytes(receiptLeafHash(leaf?.receipt_hash ?? '')), reply.proof.leaf_index, reply.proof.tree_size, reply.proof.audit_path.map(hexToBytes), hexToBytes(reply.tree_head.root_hash))).toBe(true);
    const [garbage] = await rig.refusals(LOG);
    const headsBefore = (await rig.heads(LOG)).length;

    // when the refused receipt's proof is asked, then it is refused and no head is signed for it
    expect(await proofRefusal(garbage?.receipt_id ?? '')).toEqual({ code: 'TLOG_RECEIPT_REFUSED' });
    expect((await rig.heads(LOG)).length).toBe(headsBefore);
  });

  it('given a receipt signed by the service key but dated before that key was registered, and a genuine receipt copied into another task, then they are refused TLOG_RECEIPT_KEY_NOT_VALID and TLOG_RECEIPT_TASK_MISMATCH', async () => {
    // given
    const backdated = await rig.appendReceiptDirectly(uniqueName('task'), { createdAt: '2020-01-01T00:00:00.000Z' });
    const original = await rig.appendReceiptDirectly(uniqueName('task'));
    await waitFor(async () => ((await rig.entries(LOG)).some((entry) => entry.receipt_id === original.receiptId) ? true : undefined), { what: 'the original as a leaf', timeoutMs: 30_000, intervalMs: 50 });
    const stored = (await rig.store.read(original.taskId)).find(({ event }) => event.event_id === original.eventId);
    const otherTask = uniqueName('task');
    // when: the same signed payload, appended to another task's stream
    await rig.store.append(otherTask, [{ ...stored!.event, event_id: uniqueName('evt'), task_id: undefined, task_seq: undefined, prev_event_hash: undefined, hash: undefined, correlation_id: otherTask } as never], 0);
    // then
    const refusals = await waitFor(async () => {
      const found = await rig.refusals(LOG);
      return found.length >= 4 ? found.slice(2) : undefined;
    }, { what: 'two more refusals' });
    expect(refusals.map(({ receipt_id, code }) => ({ receipt_id, code }))).toEqual([
      { receipt_id: backdated.receiptId, code: 'TLOG_RECEIPT_KEY_NOT_VALID' },
      { receipt_id: original.receiptId, code: 'TLOG_RECEIPT_TASK_MISMATCH' },
    ]);
    // A refusal claiming the id of a leaf never shadows the leaf: its proof is still served.
    const reply = InclusionProofReply.parse(await rig.bus.request(rig.subjects.inclusionProof, { receipt_id: original.receiptId }));
    expect(reply.proof.leaf_hash).toBe(receiptLeafHash(original.receiptHash));
  });

  it('then the service stays ready, and reports the refusals as a detail of readiness', async () => {
    const ready = await fetch(`${service.url}/readyz`);
    expect(ready.status).toBe(200);
    expect((await ready.json()) as unknown).toMatchObject({ checks: { tlog_sequencing: true, tlog_receipts_refused: 4 } });
  });

  it('given a restart, then refused events after the last leaf are judged again and recorded nothing twice; a receipt forged while it was down is refused too', async () => {
    const refusalsBefore = await rig.refusals(LOG);
    const entriesBefore = await rig.entries(LOG);
    await rig.closeService(service);
    const forgedWhileDown = await rig.appendReceiptDirectly(uniqueName('task'), { signer: { kind: 'garbage' } });
    const afterRestart: Sequenced[] = [];
    service = await rig.startService(LOG, { sequenced: afterRestart });

    await waitFor(() => (afterRestart.some((handled) => handled.receiptId === forgedWhileDown.receiptId) ? true : undefined), { what: 'the receipt forged while down handled' });
    expect(afterRestart.at(-1)).toEqual({ receiptId: forgedWhileDown.receiptId, outcome: 'refused' });
    expect(afterRestart.slice(0, -1).every((handled) => handled.outcome === 'already_refused')).toBe(true);
    const refusals = await rig.refusals(LOG);
    expect(refusals.slice(0, refusalsBefore.length)).toEqual(refusalsBefore);
    expect(refusals.slice(refusalsBefore.length).map((refusal) => refusal.code)).toEqual(['TLOG_RECEIPT_SIGNATURE_INVALID']);
    expect(await rig.entries(LOG)).toEqual(entriesBefore);
  });
});
