import { jetstream } from '@nats-io/jetstream';
import { ConsistencyProofReply, InclusionProofReply, SignedTreeHead, hasErrorCode, type TransparencyLogEntryAppended } from '@writ/contracts';
import { bytesToHex, hexToBytes, merkleRoot, sha256Hex, verifyConsistency, verifyInclusion } from '@writ/crypto';
import { GENESIS, sealEvent } from '@writ/eventstore';
import { uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TlogRig, type Sequenced } from '../test/tlog-rig.js';
import { receiptLeafHash } from './application/transparency-log.js';
import type { ReceiptApp } from './bootstrap.js';

/**
 * The receipt transparency log end to end against the real NATS: receipts
 * issued through the real command become leaves, signed tree heads appear on
 * the interval, the queries' proofs verify with @writ/crypto, and restarts,
 * racing instances and a tampered log behave. Every instance of one subject
 * root answers the same query subjects, so the bus queries are asked while a
 * single log id is served; other logs are asked through their keeper.
 */

const rig = new TlogRig();
const LOG = uniqueName('log');
let service: ReceiptApp;

/** Every receipt issued so far, in the stream order of its receipt.issued. */
const issued: { receiptId: string; receiptHash: string; eventId: string; streamSeq: number }[] = [];

const rootOf = (receiptHashes: readonly string[]) => bytesToHex(merkleRoot(receiptHashes.map(hexToBytes)));

async function issueOnTasks(tasks: number, perTask: number): Promise<void> {
  const seeded = [];
  for (let t = 0; t < tasks; t++) {
    const taskId = uniqueName('task');
    for (let a = 0; a < perTask; a++) seeded.push(await rig.seedDeniedAttempt(taskId));
  }
  for (const attempt of seeded) await rig.issue(attempt);
  for (const taskId of new Set(seeded.map((attempt) => attempt.taskId))) {
    for (const { event, streamSeq, issued: payload } of await rig.receiptsOf(taskId, perTask)) {
      issued.push({ receiptId: payload.receipt.receipt_id, receiptHash: payload.receipt.receipt_hash ?? '', eventId: event.event_id, streamSeq });
    }
  }
  issued.sort((a, b) => a.streamSeq - b.streamSeq);
}

function expectDenseAndOnce(entries: readonly TransparencyLogEntryAppended[], count: number): void {
  expect(entries.map((entry) => entry.leaf_index)).toEqual(Array.from({ length: count }, (_, index) => index));
  expect(new Set(entries.map((entry) => entry.receipt_id)).size).toBe(count);
}

async function request<T>(subject: string, body: unknown, parse: { parse: (value: unknown) => T }): Promise<T> {
  return parse.parse(await rig.bus.request(subject, body));
}

async function refusal(subject: string, body: unknown): Promise<string> {
  try {
    await rig.bus.request(subject, body);
  } catch (error) {
    return hasErrorCode(error) ? error.code : 'untyped';
  }
  return 'answered';
}

beforeAll(async () => {
  await rig.start();
  service = await rig.startService(LOG);
});

afterAll(async () => {
  await rig.stop();
});

describe('receipt transparency log', () => {
  it('given receipts issued on several tasks, when they are sequenced, then each receipt is one leaf, indices are dense and follow the stream order of receipt.issued', async () => {
    await issueOnTasks(3, 2);
    const entries = await rig.entriesAtLeast(LOG, 6);

    expectDenseAndOnce(entries, 6);
    expect(entries.map((entry) => entry.receipt_id)).toEqual(issued.map((receipt) => receipt.receiptId));
    for (const [index, entry] of entries.entries()) {
      const receipt = issued[index];
      expect(entry).toMatchObject({ log_id: LOG, receipt_hash: receipt?.receiptHash, receipt_event_id: receipt?.eventId, leaf_hash: receiptLeafHash(receipt?.receiptHash ?? '') });
    }
  });

  it('given the tree grew, when the interval passes, then a tree head of every leaf is signed by the receipt key with no query asking for it', async () => {
    const head = await waitFor(async () => (await rig.heads(LOG)).find((candidate) => candidate.tree_size === 6), { what: 'a tree head of 6 leaves', timeoutMs: 30_000 });

    const payload = await rig.verifyHead(head, service.principalId);
    expect(JSON.parse(payload)).toEqual({ log_id: LOG, tree_size: 6, root_hash: head.root_hash, timestamp: head.timestamp });
    expect(head.signer_ref).toBe(service.kid);
    expect(head.root_hash).toBe(rootOf(issued.map((receipt) => receipt.receiptHash)));
  });

  it('when inclusion proofs are asked, then each verifies against the signed head the reply carries; a consistency proof links an earlier tree to it', async () => {
    const head = await request(rig.subjects.treeHead, {}, SignedTreeHead);
    await rig.verifyHead(head, service.principalId);
    expect(head).toMatchObject({ log_id: LOG, tree_size: 6 });

    for (const receipt of issued) {
      const reply = await request(rig.subjects.inclusionProof, { receipt_id: receipt.receiptId }, InclusionProofReply);
      expect(reply.tree_head).toEqual(head);
      expect(reply.proof.leaf_hash).toBe(receiptLeafHash(receipt.receiptHash));
      const ok = verifyInclusion(hexToBytes(receiptLeafHash(receipt.receiptHash)), reply.proof.leaf_index, reply.proof.tree_size, reply.proof.audit_path.map(hexToBytes), hexToBytes(head.root_hash));
      expect(ok).toBe(true);
    }
    const pinned = await request(rig.subjects.inclusionProof, { receipt_id: issued[1]?.receiptId, tree_size: 6 }, InclusionProofReply);
    expect(pinned.proof).toMatchObject({ leaf_index: 1, tree_size: 6 });

    const consistency = await request(rig.subjects.consistencyProof, { first_size: 2 }, ConsistencyProofReply);
    expect(consistency.tree_head).toEqual(head);
    const firstRoot = rootOf(issued.slice(0, 2).map((receipt) => receipt.receiptHash));
    expect(verifyConsistency(2, 6, hexToBytes(firstRoot), hexToBytes(head.root_hash), consistency.proof.path.map(hexToBytes))).toBe(true);
  });

  it('given an unknown receipt, a size no head was signed at, sizes out of order or a malformed query, then the reply carries RECEIPT_NOT_IN_LOG, TLOG_TREE_HEAD_NOT_FOUND, TLOG_TREE_SIZE_INVALID, CONTRACT_INVALID; and asking signs nothing', async () => {
    const headsBefore = (await rig.heads(LOG)).length;
    expect(await refusal(rig.subjects.inclusionProof, { receipt_id: uniqueName('rct') })).toBe('RECEIPT_NOT_IN_LOG');
    expect(await refusal(rig.subjects.inclusionProof, { receipt_id: issued[0]?.receiptId, tree_size: 999 })).toBe('TLOG_TREE_HEAD_NOT_FOUND');
    expect(await refusal(rig.subjects.consistencyProof, { first_size: 7, second_size: 6 })).toBe('TLOG_TREE_SIZE_INVALID');
    expect(await refusal(rig.subjects.inclusionProof, { tree_size: 6 })).toBe('CONTRACT_INVALID');
    expect(await refusal(rig.subjects.treeHead, { log_id: 'other' })).toBe('CONTRACT_INVALID');
    expect((await rig.heads(LOG)).length).toBe(headsBefore);
  });

  it('given the service restarts, then the tree is rebuilt as it was and nothing is added; a receipt appended while it was down is sequenced after the start', async () => {
    const before = await request(rig.subjects.treeHead, {}, SignedTreeHead);
    const entriesBefore = await rig.entries(LOG);
    await rig.closeService(service);

    // As if the service had crashed between appending receipt.issued and sequencing it.
    const late = await rig.appendReceiptDirectly();
    const sequenced: Sequenced[] = [];
    service = await rig.startService(LOG, { sequenced });

    const entries = await rig.entriesAtLeast(LOG, 7);
    expect(entries.slice(0, 6)).toEqual(entriesBefore);
    expect(entries[6]).toMatchObject({ leaf_index: 6, receipt_id: late.receiptId, receipt_hash: late.receiptHash, task_id: late.taskId });
    // It resumed right after the last leaf: nothing before it was looked at again.
    expect(sequenced).toEqual([{ receiptId: late.receiptId, outcome: 'appended' }]);
    expectDenseAndOnce(await rig.entries(LOG), 7);

    const after = await request(rig.subjects.treeHead, {}, SignedTreeHead);
    expect(after.tree_size).toBe(7);
    const consistency = await request(rig.subjects.consistencyProof, { first_size: before.tree_size, second_size: 7 }, ConsistencyProofReply);
    expect(verifyConsistency(6, 7, hexToBytes(before.root_hash), hexToBytes(after.root_hash), consistency.proof.path.map(hexToBytes))).toBe(true);
    issued.push({ receiptId: late.receiptId, receiptHash: late.receiptHash, eventId: late.eventId, streamSeq: late.streamSeq });
  });

  it('given two new instances of another log racing over the same receipts, then every receipt is still exactly one leaf, in dense order, appended once', async () => {
    await issueOnTasks(2, 2);
    const total = issued.length;
    const race = uniqueName('race');
    const sequencedA: Sequenced[] = [];
    const sequencedB: Sequenced[] = [];
    const [a, b] = await Promise.all([rig.startService(race, { sequenced: sequencedA }), rig.startService(race, { sequenced: sequencedB })]);

    // Each instance scans in stream order from where the log stood when it started (the one that
    // starts second may resume after leaves the first already appended, or after all of them: the
    // starts take turns on the shared key directory's lock), so it is through once it has handled
    // the last receipt (appended it, or found it appended), or its tree holds every leaf.
    const last = issued.at(-1)?.receiptId;
    const through = (handled: Sequenced[], app: ReceiptApp) => handled.some((receipt) => receipt.receiptId === last) || app.tlog.size >= total;
    await waitFor(() => (through(sequencedA, a) && through(sequencedB, b) ? true : undefined), { what: 'both instances through the last receipt', timeoutMs: 20_000 });
    expect([a.tlog.failure, b.tlog.failure]).toEqual([undefined, undefined]);
    const entries = await rig.entries(race);
    expectDenseAndOnce(entries, total);
    expect(new Set(entries.map((entry) => entry.receipt_id))).toEqual(new Set(issued.map((receipt) => receipt.receiptId)));
    const appended = [...sequencedA, ...sequencedB].filter((handled) => handled.outcome === 'appended');
    expect(appended).toHaveLength(total);
    // Both trees, built apart, are the same tree.
    const [headA, headB] = [await a.tlog.treeHead(), await b.tlog.treeHead()];
    expect(headB.root_hash).toBe(headA.root_hash);
    expect(headA.tree_size).toBe(total);
    await Promise.all([rig.closeService(a), rig.closeService(b)]);
  });

  it('given a forged tlog.entry_appended (wrong leaf hash) in the log of a running instance, then it stops serving proofs and is not ready; after a restart it refuses to start with TLOG_LEAF_HASH_MISMATCH', async () => {
    const forgedLog = uniqueName('forged');
    const sequenced: Sequenced[] = [];
    const instance = await rig.startService(forgedLog, { sequenced });
    await waitFor(() => (sequenced.length >= issued.length ? true : undefined), { what: 'the instance through every receipt', timeoutMs: 30_000 });
    const head = await rig.store.headOfEntity('transparency_log', forgedLog);

    const forged: TransparencyLogEntryAppended = {
      log_id: forgedLog,
      leaf_index: issued.length,
      receipt_id: uniqueName('rct'),
      task_id: uniqueName('task'),
      receipt_hash: sha256Hex('a receipt'),
      leaf_hash: sha256Hex('not its leaf hash'),
      receipt_event_id: uniqueName('evt'),
    };
    await rig.store.appendToEntity('transparency_log', forgedLog, [tlogDraft(forgedLog, 'tlog.entry_appended', forged)], head.taskSeq);

    const failure = await waitFor(() => instance.tlog.failure, { what: 'the running instance to detect the forged entry' });
    expect(failure.code).toBe('TLOG_LEAF_HASH_MISMATCH');
    await expect(instance.tlog.treeHead()).rejects.toSatisfy((error) => hasErrorCode(error, 'TLOG_UNAVAILABLE'));
    const ready = await fetch(`${instance.url}/readyz`);
    expect(ready.status).toBe(503);
    expect((await ready.json()) as unknown).toMatchObject({ checks: { tlog_sequencing: false } });
    await rig.closeService(instance);

    await expect(rig.startService(forgedLog)).rejects.toSatisfy((error) => hasErrorCode(error, 'TLOG_LEAF_HASH_MISMATCH'));
  });

  it('given junk on a log stream, then start-up skips it and the log serves (invariant 10); given an event of the log whose bytes changed, then start-up refuses with TLOG_CHAIN_BROKEN', async () => {
    // given a message that is not an event envelope on a log's stream, written around the event store as anyone with publish rights could
    const junkLog = uniqueName('junk');
    await jetstream(rig.nc).publish(`${rig.root}.evt.transparency_log.${junkLog}`, JSON.stringify({ event_type: 'tlog.entry_appended', note: 'not an event envelope' }));
    // then the log starts, skipping it, and serves
    const instance = await rig.startService(junkLog);
    expect(instance.tlog.failure).toBeUndefined();
    await rig.closeService(instance);

    // given the log's first event as its writer sealed it, stored with its payload changed afterwards
    const brokenLog = uniqueName('broken');
    const sealed = sealEvent(tlogDraft(brokenLog, 'tlog.head_signed', { note: 'as sealed' }), brokenLog, GENESIS);
    await jetstream(rig.nc).publish(`${rig.root}.evt.transparency_log.${brokenLog}`, JSON.stringify({ ...sealed, payload: { note: 'changed' } }));
    // then start-up refuses it: a changed event is a break, never junk
    await expect(rig.startService(brokenLog)).rejects.toSatisfy((error) => hasErrorCode(error, 'TLOG_CHAIN_BROKEN'));
  });
});

function tlogDraft(logId: string, eventType: string, payload: object) {
  return {
    event_id: uniqueName('evt'),
    schema_version: 1,
    event_type: eventType,
    entity_type: 'transparency_log' as const,
    entity_id: logId,
    occurred_at: new Date().toISOString(),
    actor_type: 'service' as const,
    actor_id: 'forger',
    payload: payload as Record<string, unknown>,
    causation_id: null,
    correlation_id: logId,
  };
}
