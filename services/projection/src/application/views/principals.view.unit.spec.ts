import { EventDraft, type EventEnvelope } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import type { ProjectedEvent } from '../projected-event.js';
import { principalsView, type PrincipalRow } from './principals.view.js';

const X1 = 'A'.repeat(43);
const X2 = 'B'.repeat(43);
let seq = 0;

function principalEvent(type: string, payload: Record<string, unknown>, taskSeq: number): ProjectedEvent {
  const draft = EventDraft.parse({
    event_id: `p-${type.replace('.', '_')}-${taskSeq}`,
    schema_version: 1,
    event_type: type,
    entity_type: 'principal',
    entity_id: 'receipt-svc',
    occurred_at: `2030-01-01T00:00:0${taskSeq}Z`,
    actor_type: 'service',
    actor_id: 'receipt-svc',
    payload,
    causation_id: null,
    correlation_id: 'receipt-svc',
  });
  const envelope: EventEnvelope = { ...draft, task_id: 'receipt-svc', task_seq: taskSeq, prev_event_hash: null, hash: 'c'.repeat(64) };
  return { streamSeq: ++seq, aggregate: { type: 'principal', id: 'receipt-svc' }, envelope };
}

const registered = principalEvent(
  'principal.registered',
  {
    principal_id: 'receipt-svc',
    principal_type: 'service',
    display_name: 'receipt',
    roles: [],
    keys: [{ kty: 'OKP', crv: 'Ed25519', x: X1, kid: 'receipt-k1' }],
    registered_by: 'receipt-svc',
    at: '2030-01-01T00:00:01Z',
  },
  1,
);

/** The fold alone (no projector): rows carry the version of the last event folded, as `foldPlan` stamps it. */
function fold(events: readonly ProjectedEvent[]): PrincipalRow | undefined {
  return events.reduce<PrincipalRow | undefined>((row, event) => {
    const after = principalsView.fold(row, event);
    return after === undefined ? undefined : { ...after, row_version: after === row ? (row?.row_version ?? event.streamSeq) : event.streamSeq };
  }, undefined);
}

describe('principals view', () => {
  it('registers a service principal with its public key', () => {
    expect(fold([registered])).toMatchObject({ principal_id: 'receipt-svc', type: 'service', keys: [{ kid: 'receipt-k1', x: X1 }], registered_at: '2030-01-01T00:00:01.000Z' });
  });

  it('follows key rotation: the added key is active, the revoked one is gone', () => {
    const added = principalEvent('principal.key_added', { key: { kty: 'OKP', crv: 'Ed25519', x: X2, kid: 'receipt-k2' }, added_by: 'receipt-svc', at: '2030-01-01T00:00:02Z' }, 2);
    const revoked = principalEvent('principal.key_revoked', { kid: 'receipt-k1', reason: 'rotated', revoked_by: 'receipt-svc', at: '2030-01-01T00:00:03Z' }, 3);
    expect(fold([registered, added, revoked])).toMatchObject({ keys: [{ kid: 'receipt-k2' }], revoked_kids: ['receipt-k1'], updated_at: '2030-01-01T00:00:03.000Z' });
  });

  it('never takes in a JWK carrying private key material', () => {
    const withPrivate = principalEvent(
      'principal.registered',
      { ...registered.envelope.payload, keys: [{ kty: 'OKP', crv: 'Ed25519', x: X1, kid: 'receipt-k1', d: 'secret' }] },
      1,
    );
    expect(fold([withPrivate])).toBeUndefined();
  });

  it('is located on principal streams only', () => {
    expect(principalsView.locate(registered)).toEqual({ principal_id: 'receipt-svc' });
    expect(principalsView.locate({ ...registered, aggregate: { type: 'task', id: 't' } })).toBeUndefined();
  });
});
