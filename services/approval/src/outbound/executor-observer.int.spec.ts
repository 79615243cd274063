import type { NatsConnection } from '@nats-io/transport-node';
import { hasErrorCode } from '@writ/contracts';
import { connectTestNats, uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutorWorkspaceWitness } from './executor-observer.js';

/**
 * An executor restarting must not cost an approval request its deliveries (chaos run, issue 13:
 * five failures in 15 s, dead-lettered, the action waited for an approval never asked).
 */
let nc: NatsConnection;

beforeAll(async () => {
  nc = await connectTestNats('approval-witness-int');
});

afterAll(async () => {
  await nc.close();
});

const REPLY = { fingerprints: { 'notes.txt': 'sha256:abc' }, observed_at: '2026-11-28T12:00:00.000Z' };

describe('ExecutorWorkspaceWitness', () => {
  it('given no executor answers yet, when one starts answering within the wait, then the observation is had (the command is not failed)', async () => {
    // given no responder on the subject
    const subject = `${uniqueName('writ_t')}.qry.executor.observe`;
    const witness = new ExecutorWorkspaceWitness(nc, subject, 500, 30_000);
    const observing = witness.observe('tsk-witness-1', ['notes.txt'], { wait: true });
    // when an executor comes up two seconds later
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const responder = nc.subscribe(subject, { callback: (_error, message) => void message.respond(JSON.stringify(REPLY)) });
    try {
      // then the observation arrives
      await expect(observing).resolves.toEqual({ fingerprints: { 'notes.txt': 'sha256:abc' }, observed_at: REPLY.observed_at });
    } finally {
      responder.unsubscribe();
    }
  }, 60_000);

  it('given no executor answers for the whole wait, then APPROVAL_WITNESS_UNAVAILABLE (the bus retries the command)', async () => {
    const witness = new ExecutorWorkspaceWitness(nc, `${uniqueName('writ_t')}.qry.executor.observe`, 200, 1_000);
    const failure = await witness.observe('tsk-witness-2', ['notes.txt'], { wait: true }).catch((error: unknown) => error);
    expect(hasErrorCode(failure, 'APPROVAL_WITNESS_UNAVAILABLE')).toBe(true);
  }, 60_000);

  it('given a director waiting on a reply (no wait asked), then one attempt only: APPROVAL_WITNESS_UNAVAILABLE at once, not after the wait', async () => {
    const witness = new ExecutorWorkspaceWitness(nc, `${uniqueName('writ_t')}.qry.executor.observe`, 200, 600_000);
    const failure = await witness.observe('tsk-witness-3', ['notes.txt']).catch((error: unknown) => error);
    expect(hasErrorCode(failure, 'APPROVAL_WITNESS_UNAVAILABLE')).toBe(true);
  }, 30_000);
});
