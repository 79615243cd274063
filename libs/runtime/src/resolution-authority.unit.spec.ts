import type { ApprovalResolution, EventEnvelope, PrincipalRole, PrincipalType, PublicEd25519Jwk } from '@writ/contracts';
import { canonicalJson, generateEd25519Key, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { approvalPacketHash, packetHashOfRef } from './approval-packet.js';
import {
  ResolutionAuthority,
  checkResolutionAuthority,
  principalHistory,
  requestedApproval,
  type PrincipalHistory,
  type ResolutionCheck,
  type ResolvedApproval,
} from './resolution-authority.js';

/**
 * The authority check of a director's resolution in the log, on in-memory principal
 * histories folded by the same `principalHistory` the registry folds the log with.
 * Each adversarial case asserts its code.
 */

const T = (offsetSeconds: number) => new Date(Date.parse('2030-06-01T12:00:00.000Z') + offsetSeconds * 1000).toISOString();
const PACKET_HASH = approvalPacketHash({ action_summary: 'execute_command: make build' });
const APPROVAL: ResolvedApproval = {
  approval_id: 'apr-1',
  requested_by: 'agent-1',
  approval_packet_ref: `artifact:${PACKET_HASH}`,
  requested_at: T(0),
  expires_at: T(3_600),
};

let keys: Record<string, Ed25519SigningKey>;
const histories = new Map<string, PrincipalHistory>();

function event(eventType: string, payload: Record<string, unknown>): Pick<EventEnvelope, 'event_id' | 'event_type' | 'payload'> {
  return { event_id: 'evt-res-1', event_type: eventType, payload };
}

/** A principal's stream: registered at `registeredAt` with `key`, then the extra key events. */
function register(id: string, type: PrincipalType, roles: PrincipalRole[], key: Ed25519SigningKey, registeredAt = T(-86_400), extra: Array<{ event_type: string; payload: Record<string, unknown> }> = []): void {
  const events = [
    {
      event_type: 'principal.registered',
      payload: { principal_id: id, principal_type: type, display_name: id, roles, keys: [key.publicJwk as PublicEd25519Jwk], registered_by: 'operator-1', at: registeredAt },
    },
    ...extra,
  ];
  histories.set(id, principalHistory(id, events) as PrincipalHistory);
}

async function signed(by: string, key: Ed25519SigningKey, overrides: Partial<ApprovalResolution> = {}): Promise<string> {
  const resolution: ApprovalResolution = { approval_id: 'apr-1', decision: 'grant', packet_hash: PACKET_HASH, resolved_by: by, resolved_at: T(60), ...overrides };
  return signJws(canonicalJson(resolution), key);
}

const granted = (jws: string | undefined, resolvedBy = 'director-1') =>
  event('approval.granted', { resolved_by: resolvedBy, witness_validated: false, at: T(61), ...(jws === undefined ? {} : { resolution_jws: jws }) });

const check = (e: Pick<EventEnvelope, 'event_id' | 'event_type' | 'payload'>, approval = APPROVAL, options = {}) =>
  checkResolutionAuthority(e, approval, (id) => histories.get(id), options);

function codeOf(result: ResolutionCheck): string {
  return result.ok ? 'OK' : result.code;
}

beforeAll(async () => {
  const names = ['director', 'director2', 'rotated', 'revoked', 'observer', 'agent', 'forger', 'late'];
  keys = Object.fromEntries(await Promise.all(names.map(async (name) => [name, await generateEd25519Key({ kid: `${name}-k1` })] as const)));
  register('director-1', 'user', ['director'], keys['director'] as Ed25519SigningKey);
  register('director-2', 'user', ['director'], keys['director2'] as Ed25519SigningKey);
  register('observer-1', 'user', ['observer'], keys['observer'] as Ed25519SigningKey);
  // The requesting agent holds the director role too: still never a resolver, and never of its own action.
  register('agent-1', 'agent', ['director'], keys['agent'] as Ed25519SigningKey);
  // Its key revoked an hour before the approval was requested.
  register('revoked-1', 'user', ['director'], keys['revoked'] as Ed25519SigningKey, T(-86_400), [
    { event_type: 'principal.key_revoked', payload: { kid: 'revoked-k1', reason: 'compromised', revoked_by: 'operator-1', at: T(-3_600) } },
  ]);
  // Its key rotated out a day after the approval: what it signed before still holds.
  register('rotated-1', 'user', ['director'], keys['rotated'] as Ed25519SigningKey, T(-86_400), [
    { event_type: 'principal.key_revoked', payload: { kid: 'rotated-k1', reason: 'rotated', revoked_by: 'rotated-1', at: T(86_400) } },
  ]);
  // Registered only after the approval was resolved.
  register('late-1', 'user', ['director'], keys['late'] as Ed25519SigningKey, T(7_200));
});

describe('checkResolutionAuthority', () => {
  it("given a director's resolution signed while the approval was pending, when checked, then it holds with the signer and key", async () => {
    const result = await check(granted(await signed('director-1', keys['director'] as Ed25519SigningKey)));
    expect(result).toMatchObject({ ok: true, signed: true, signer: { principal_id: 'director-1' }, key: { jwk: { kid: 'director-k1' } } });
  });

  it('given a denial signed as a deny, when checked, then it holds', async () => {
    const jws = await signed('director-1', keys['director'] as Ed25519SigningKey, { decision: 'deny' });
    expect(codeOf(await check(event('approval.denied', { resolved_by: 'director-1', resolution_jws: jws, at: T(61) })))).toBe('OK');
  });

  it('given a resolution no director decides (expired, cancelled, invalidated), when checked, then there is nothing to check', async () => {
    for (const type of ['approval.expired', 'approval.cancelled', 'approval.invalidated']) {
      expect(await check(event(type, { resolved_by: 'writ-approval', at: T(61) }))).toEqual({ ok: true, signed: false });
    }
  });

  it('given an approval.granted with no signed resolution, when checked, then APPROVAL_RESOLUTION_UNSIGNED', async () => {
    expect(codeOf(await check(granted(undefined)))).toBe('APPROVAL_RESOLUTION_UNSIGNED');
    expect(codeOf(await check(event('approval.denied', { resolved_by: 'director-1', at: T(61) })))).toBe('APPROVAL_RESOLUTION_UNSIGNED');
  });

  it('given a resolution that is not a compact JWS over an ApprovalResolution, then APPROVAL_RESOLUTION_SIGNATURE_INVALID', async () => {
    expect(codeOf(await check(granted('not.a.jws!')))).toBe('APPROVAL_RESOLUTION_SIGNATURE_INVALID');
    const noPacket = await signJws(canonicalJson({ approval_id: 'apr-1', decision: 'grant', resolved_by: 'director-1', resolved_at: T(60) }), keys['director'] as Ed25519SigningKey);
    expect(codeOf(await check(granted(noPacket)))).toBe('APPROVAL_RESOLUTION_SIGNATURE_INVALID');
  });

  it("given a resolution in a director's name signed by another key, then APPROVAL_RESOLUTION_SIGNATURE_INVALID", async () => {
    const forged = await generateEd25519Key({ kid: 'director-k1' });
    expect(codeOf(await check(granted(await signed('director-1', forged))))).toBe('APPROVAL_RESOLUTION_SIGNATURE_INVALID');
    // The body changed after signing.
    const [header, , signature] = (await signed('director-1', keys['director'] as Ed25519SigningKey)).split('.');
    const swapped = Buffer.from(canonicalJson({ approval_id: 'apr-1', decision: 'grant', packet_hash: PACKET_HASH, resolved_by: 'director-1', resolved_at: T(61) })).toString('base64url');
    expect(codeOf(await check(granted(`${header}.${swapped}.${signature}`)))).toBe('APPROVAL_RESOLUTION_SIGNATURE_INVALID');
  });

  it('given a signer that is not a registered principal, then APPROVAL_RESOLUTION_NOT_DIRECTOR (unknown_principal)', async () => {
    const result = await check(granted(await signed('stranger-1', keys['forger'] as Ed25519SigningKey), 'stranger-1'));
    expect(result).toMatchObject({ ok: false, code: 'APPROVAL_RESOLUTION_NOT_DIRECTOR', details: { reason: 'unknown_principal' } });
  });

  it('given a signature by a principal without the director role, then APPROVAL_RESOLUTION_NOT_DIRECTOR', async () => {
    const result = await check(granted(await signed('observer-1', keys['observer'] as Ed25519SigningKey), 'observer-1'));
    expect(result).toMatchObject({ ok: false, code: 'APPROVAL_RESOLUTION_NOT_DIRECTOR', details: { reason: 'role_missing' } });
  });

  it('given an agent holding the director role, when it resolves another agent’s approval, then APPROVAL_RESOLUTION_NOT_DIRECTOR', async () => {
    const otherRequester = { ...APPROVAL, requested_by: 'agent-2' };
    const result = await check(granted(await signed('agent-1', keys['agent'] as Ed25519SigningKey), 'agent-1'), otherRequester);
    expect(result).toMatchObject({ ok: false, code: 'APPROVAL_RESOLUTION_NOT_DIRECTOR', details: { reason: 'agent' } });
  });

  it('given the requester signing its own approval, then APPROVAL_RESOLUTION_BY_REQUESTER', async () => {
    expect(codeOf(await check(granted(await signed('agent-1', keys['agent'] as Ed25519SigningKey), 'agent-1')))).toBe('APPROVAL_RESOLUTION_BY_REQUESTER');
    const directorRequested = { ...APPROVAL, requested_by: 'director-1' };
    expect(codeOf(await check(granted(await signed('director-1', keys['director'] as Ed25519SigningKey)), directorRequested))).toBe('APPROVAL_RESOLUTION_BY_REQUESTER');
  });

  it('given a key revoked before the approval was requested, when it signs now or backdated, then APPROVAL_RESOLUTION_KEY_NOT_VALID', async () => {
    const key = keys['revoked'] as Ed25519SigningKey;
    expect(codeOf(await check(granted(await signed('revoked-1', key), 'revoked-1')))).toBe('APPROVAL_RESOLUTION_KEY_NOT_VALID');
    // Backdated to before the revocation, still inside the clock skew of the request: the key was gone before the approval existed.
    const backdated = await signed('revoked-1', key, { resolved_at: T(-240) });
    expect(codeOf(await check(granted(backdated, 'revoked-1')))).toBe('APPROVAL_RESOLUTION_KEY_NOT_VALID');
  });

  it('given a key rotated out after the resolution, when the resolution is checked later, then it still holds', async () => {
    expect(codeOf(await check(granted(await signed('rotated-1', keys['rotated'] as Ed25519SigningKey), 'rotated-1')))).toBe('OK');
  });

  it('given a signed resolution of another approval replayed on this one, then APPROVAL_RESOLUTION_MISMATCH', async () => {
    const other = await signed('director-1', keys['director'] as Ed25519SigningKey, { approval_id: 'apr-2' });
    expect(await check(granted(other))).toMatchObject({ ok: false, code: 'APPROVAL_RESOLUTION_MISMATCH', details: { reason: 'other_approval' } });
  });

  it('given a signed deny carried by an approval.granted, or another resolver named on the event, then APPROVAL_RESOLUTION_MISMATCH', async () => {
    const deny = await signed('director-1', keys['director'] as Ed25519SigningKey, { decision: 'deny' });
    expect(await check(granted(deny))).toMatchObject({ ok: false, code: 'APPROVAL_RESOLUTION_MISMATCH', details: { reason: 'other_decision' } });
    const jws = await signed('director-1', keys['director'] as Ed25519SigningKey);
    expect(await check(granted(jws, 'director-2'))).toMatchObject({ ok: false, code: 'APPROVAL_RESOLUTION_MISMATCH', details: { reason: 'other_resolver' } });
  });

  it('given a resolution over another packet than the approval’s, then APPROVAL_RESOLUTION_PACKET_STALE', async () => {
    const stale = await signed('director-1', keys['director'] as Ed25519SigningKey, { packet_hash: approvalPacketHash({ action_summary: 'execute_command: make test' }) });
    expect(codeOf(await check(granted(stale)))).toBe('APPROVAL_RESOLUTION_PACKET_STALE');
  });

  it('given a resolution signed before the approval was requested or after it expired (beyond the clock skew), then APPROVAL_RESOLUTION_TIME_INVALID', async () => {
    const key = keys['director'] as Ed25519SigningKey;
    expect(codeOf(await check(granted(await signed('director-1', key, { resolved_at: T(-301) }))))).toBe('APPROVAL_RESOLUTION_TIME_INVALID');
    expect(codeOf(await check(granted(await signed('director-1', key, { resolved_at: T(3_901) }))))).toBe('APPROVAL_RESOLUTION_TIME_INVALID');
    // Inside the skew: a director's clock a little behind.
    expect(codeOf(await check(granted(await signed('director-1', key, { resolved_at: T(-30) }))))).toBe('OK');
  });

  it('given a signer registered (with its key) only after it signed, then APPROVAL_RESOLUTION_KEY_NOT_VALID: it held no key, nor the role, then', async () => {
    const approval = { ...APPROVAL, expires_at: T(86_400) };
    expect(codeOf(await check(granted(await signed('late-1', keys['late'] as Ed25519SigningKey), 'late-1'), approval))).toBe('APPROVAL_RESOLUTION_KEY_NOT_VALID');
  });

  it('given a registration check that does not authorize the signer’s registration (the trust-anchor seam), then APPROVAL_RESOLUTION_NOT_DIRECTOR', async () => {
    const result = await check(granted(await signed('director-1', keys['director'] as Ed25519SigningKey)), APPROVAL, { registration: () => 'not signed by an operator' });
    expect(result).toMatchObject({ ok: false, code: 'APPROVAL_RESOLUTION_NOT_DIRECTOR', details: { reason: 'registration_unauthorized' } });
  });
});

describe('packetHashOfRef', () => {
  it('given a stored packet ref or an older sha256 ref, then the hash a resolution signs; any other ref, none', () => {
    expect(packetHashOfRef(`artifact:${PACKET_HASH}`)).toBe(PACKET_HASH);
    expect(packetHashOfRef(PACKET_HASH)).toBe(PACKET_HASH);
    expect(packetHashOfRef('artifact:packet-1')).toBeUndefined();
  });
});

describe('ResolutionAuthority', () => {
  const envelope = (seq: number, fields: Partial<EventEnvelope> & Pick<EventEnvelope, 'event_type' | 'payload'>): EventEnvelope => ({
    event_id: `evt-${seq}`,
    schema_version: 1,
    entity_type: 'approval',
    entity_id: 'apr-1',
    task_id: 'task-1',
    task_seq: seq,
    occurred_at: T(seq),
    actor_type: 'service',
    actor_id: 'writ-approval',
    causation_id: null,
    correlation_id: 'task-1',
    prev_event_hash: null,
    hash: `${seq}`.padStart(64, '0'),
    ...fields,
  });
  const requested = envelope(1, {
    event_type: 'approval.requested',
    payload: { approval_id: 'apr-1', requested_by: 'agent-1', approval_packet_ref: APPROVAL.approval_packet_ref, expires_at: APPROVAL.expires_at, at: APPROVAL.requested_at },
  });

  it('given a task with a forged and a genuine resolution, when asked for refusals, then only the forged one, with its code and place; each principal read once per call', async () => {
    const genuine = envelope(3, { event_type: 'approval.granted', payload: granted(await signed('director-1', keys['director'] as Ed25519SigningKey)).payload, step_id: 'step-1', attempt_id: 'att-1' });
    const forged = envelope(2, { event_type: 'approval.granted', payload: granted(undefined).payload, step_id: 'step-1', attempt_id: 'att-1' });
    const reads: string[] = [];
    const authority = new ResolutionAuthority({ history: async (id) => (reads.push(id), histories.get(id)) });
    const refusals = await authority.refusals([requested, forged, genuine]);
    expect([...refusals.values()]).toEqual([
      expect.objectContaining({ event_id: 'evt-2', approval_id: 'apr-1', step_id: 'step-1', attempt_id: 'att-1', code: 'APPROVAL_RESOLUTION_UNSIGNED' }),
    ]);
    expect(reads).toEqual(['director-1']);
    // A verdict depends only on the log: the next fold of the same task reads no principal again.
    await authority.refusals([requested, forged, genuine]);
    expect(reads).toEqual(['director-1']);
  });

  it('given a director decision on an approval never (or not well) requested, then APPROVAL_RESOLUTION_MISMATCH: it answers nothing a director was shown', async () => {
    const authority = new ResolutionAuthority({ history: async (id) => histories.get(id) });
    const genuine = granted(await signed('director-1', keys['director'] as Ed25519SigningKey)).payload;
    const halfRequested = envelope(1, { event_type: 'approval.requested', payload: { approval_id: 'apr-1', requested_by: 'agent-1', approval_packet_ref: APPROVAL.approval_packet_ref } });
    for (const events of [[envelope(2, { event_type: 'approval.granted', payload: genuine })], [halfRequested, envelope(2, { event_type: 'approval.granted', payload: genuine })]]) {
      const refusals = await authority.refusals(events);
      expect([...refusals.values()]).toEqual([expect.objectContaining({ event_id: 'evt-2', code: 'APPROVAL_RESOLUTION_MISMATCH', details: { reason: 'no_requested_approval' } })]);
    }
  });

  it('given the approval.requested of a task, then the approval a resolution answers', () => {
    expect(requestedApproval([requested], 'apr-1')).toEqual(APPROVAL);
    expect(requestedApproval([requested], 'apr-2')).toBeUndefined();
  });
});
