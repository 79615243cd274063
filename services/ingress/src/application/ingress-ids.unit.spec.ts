import { createHash } from 'node:crypto';
import { Id } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { actionRequestClaimId, eventKeys, ingressIds } from './ingress-ids.js';

describe('ingressIds', () => {
  it('is ing- + the first 32 hex of SHA-256(<principal_id>:<idempotency key>), shared by task, step and attempt', () => {
    const hash = createHash('sha256').update('agent-1:ar-1').digest('hex').slice(0, 32);
    expect(ingressIds('agent-1', 'ar-1')).toEqual({ ingressId: `ing-${hash}`, newTaskId: `tsk-${hash}`, stepId: `stp-${hash}`, attemptId: `att-${hash}` });
  });

  it('separates principals and keys, and every id is a subject token', () => {
    const ids = [ingressIds('a', 'b:c'), ingressIds('a:b', 'c'), ingressIds('a', 'b.c')];
    expect(new Set(ids.map((i) => i.ingressId)).size).toBe(3);
    for (const i of ids) for (const id of Object.values(i)) expect(Id.safeParse(id).success).toBe(true);
    expect(actionRequestClaimId('a', 'b')).toMatch(/^iar-[0-9a-f]{32}$/);
  });

  it('derives event ids that are Ids and keys that name the event type', () => {
    expect(eventKeys('ing-1', 'attempt.awaiting_policy')).toEqual({ eventId: 'ing-1-attempt_awaiting_policy', idempotencyKey: 'ing-1:attempt.awaiting_policy' });
  });
});
