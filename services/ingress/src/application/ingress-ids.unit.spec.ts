import { createHash } from 'node:crypto';
import { Id } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { actionRequestClaimId, eventKeys, ingressIds } from './ingress-ids.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const RAW = sha('a compact JWS');

describe('ingressIds', () => {
  it('given a request, then the record is ing- + SHA-256(<raw_sha256>:<principal>:<key>), and the key claim, task, step and attempt share SHA-256(<principal>:<key>)', () => {
    const key = sha('agent-1:ar-1').slice(0, 32);
    expect(ingressIds('agent-1', 'ar-1', RAW)).toEqual({
      ingressId: `ing-${sha(`${RAW}:agent-1:ar-1`).slice(0, 32)}`,
      keyClaimId: `idk-${key}`,
      newTaskId: `tsk-${key}`,
      stepId: `stp-${key}`,
      attemptId: `att-${key}`,
    });
  });

  it('given another body under the same principal and key, then it is another record of the same key', () => {
    const genuine = ingressIds('agent-1', 'ar-1', RAW);
    const squatter = ingressIds('agent-1', 'ar-1', sha('garbage'));
    expect(squatter.ingressId).not.toBe(genuine.ingressId);
    expect({ ...squatter, ingressId: genuine.ingressId }).toEqual(genuine);
  });

  it('separates principals and keys, and every id is a subject token', () => {
    const ids = [ingressIds('a', 'b:c', RAW), ingressIds('a:b', 'c', RAW), ingressIds('a', 'b.c', RAW)];
    expect(new Set(ids.map((i) => i.ingressId)).size).toBe(3);
    expect(new Set(ids.map((i) => i.keyClaimId)).size).toBe(3);
    for (const i of ids) for (const id of Object.values(i)) expect(Id.safeParse(id).success).toBe(true);
    expect(actionRequestClaimId('a', 'b')).toMatch(/^iar-[0-9a-f]{32}$/);
  });

  it('given a digest that is not 64 hex digits, then it throws (a record is never bound to nothing)', () => {
    expect(() => ingressIds('a', 'b', 'sha256:x')).toThrow(TypeError);
  });

  it('derives event ids that are Ids and keys that name the event type', () => {
    expect(eventKeys('ing-1', 'attempt.awaiting_policy')).toEqual({ eventId: 'ing-1-attempt_awaiting_policy', idempotencyKey: 'ing-1:attempt.awaiting_policy' });
  });
});
