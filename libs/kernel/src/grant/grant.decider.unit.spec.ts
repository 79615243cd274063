import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { at, deciderSpec, meta } from '../../test/decider-spec.js';
import { evolveIsTotal, modelCheck } from '../../test/model.js';
import { claims } from '../../test/samples.js';
import { fold } from '../shared/decider.js';
import { consumedUses, grantDecider, useSettlements, type GrantCommand, type GrantRecord } from './grant.decider.js';
import type { GrantEvent } from './grant.events.js';

const spec = deciderSpec(grantDecider);
const issued: GrantEvent = { type: 'grant.issued', data: { claims: claims({ max_uses: 2 }), at: at(0) } };
const useData = { task_id: 'task-1', attempt_id: 'attempt-1', action_class: 'write_local' as const, resources: { paths: ['src/a.ts'] } };
const claim = (use_id: string, s = 10, use: object = useData): GrantCommand => ({ type: 'claim-grant-use', data: { use_id, use: use as typeof useData }, metadata: meta(s) });

describe('grant decider (Hermit 8.12, 16.6)', () => {
  it('given claims cited by a policy result, when issue-grant, then grant.issued', () => {
    spec.given([]).when({ type: 'issue-grant', data: { claims: claims({ max_uses: 2 }) }, metadata: meta(0) }).then([issued]);
  });

  it('given claims citing neither a policy result nor an approval, then GRANT_AUTHORITY_MISSING', () => {
    const { policy_result_ref: _p, ...bare } = claims();
    spec.given([]).when({ type: 'issue-grant', data: { claims: bare }, metadata: meta(0) }).thenThrows('GRANT_AUTHORITY_MISSING');
  });

  it('given invalid claims, then GRANT_CLAIMS_INVALID', () => {
    spec.given([]).when({ type: 'issue-grant', data: { claims: claims({ exp: claims().iat }) }, metadata: meta(0) }).thenThrows('GRANT_CLAIMS_INVALID');
  });

  it('given claims already expired at issue, then GRANT_EXPIRED', () => {
    spec.given([]).when({ type: 'issue-grant', data: { claims: claims() }, metadata: meta(300) }).thenThrows('GRANT_EXPIRED');
  });

  it('given an issued grant, when a use is claimed, then grant.use_claimed; the same use_id again produces nothing (first claim wins)', () => {
    spec.given([issued]).when(claim('use-1')).then([
      { type: 'grant.use_claimed', data: { use_id: 'use-1', use_no: 1, task_id: 'task-1', attempt_id: 'attempt-1', action_class: 'write_local', at: at(10) } },
    ]);
    const after = [issued, ...grantDecider.decide(claim('use-1'), fold(grantDecider, [issued]))];
    spec.given(after).when(claim('use-1', 11)).then([]);
  });

  it('given max_uses 2 consumed, when a third use is claimed, then grant.refused GRANT_EXHAUSTED', () => {
    let events: GrantEvent[] = [issued];
    for (const id of ['use-1', 'use-2']) events = [...events, ...grantDecider.decide(claim(id), fold(grantDecider, events))];
    const refused = spec.given(events).when(claim('use-3')).thenEvents();
    expect(refused).toMatchObject([{ type: 'grant.refused', data: { use_id: 'use-3', code: 'GRANT_EXHAUSTED' } }]);
  });

  it.each([
    ['GRANT_WRONG_ATTEMPT', claim('u', 10, { ...useData, attempt_id: 'attempt-2' })],
    ['GRANT_OUT_OF_SCOPE', claim('u', 10, { ...useData, resources: { paths: ['../secrets'] } })],
    ['GRANT_EXPIRED', claim('u', 301)],
  ])('given a use the claims do not cover, then grant.refused %s', (code, command) => {
    expect(spec.given([issued]).when(command).thenEvents()).toMatchObject([{ type: 'grant.refused', data: { code } }]);
  });

  it('given a revoked grant, when a use is claimed, then grant.refused GRANT_REVOKED; revoking again is GRANT_REVOKED', () => {
    const revoked: GrantEvent = { type: 'grant.revoked', data: { revoked_by: 'writ-orchestrator', reason: 'witness drift', at: at(5) } };
    expect(spec.given([issued, revoked]).when(claim('use-1')).thenEvents()).toMatchObject([{ type: 'grant.refused', data: { code: 'GRANT_REVOKED' } }]);
    spec.given([issued, revoked]).when({ type: 'revoke-grant', data: { revoked_by: 'x', reason: 'y' }, metadata: meta(6) }).thenThrows('GRANT_REVOKED');
  });

  it('given no grant, when a use is claimed, then GRANT_NOT_FOUND; given one, when issued again, then GRANT_ALREADY_ISSUED', () => {
    spec.given([]).when(claim('use-1')).thenThrows('GRANT_NOT_FOUND');
    spec.given([issued]).when({ type: 'issue-grant', data: { claims: claims() }, metadata: meta(0) }).thenThrows('GRANT_ALREADY_ISSUED');
  });
});

describe('grant decider: a use proven never started is released (issue 13)', () => {
  const one: GrantEvent = { type: 'grant.issued', data: { claims: claims({ max_uses: 1 }), at: at(0) } };
  const release = (use_id: string, s = 20): GrantCommand => ({
    type: 'release-grant-use',
    data: { use_id, reason_code: 'CELL_USE_FENCED', reason: 'fenced before it started; it never ran' },
    metadata: meta(s),
  });
  const claimedOnce = (): GrantEvent[] => [one, ...grantDecider.decide(claim('use-1'), fold(grantDecider, [one]))];

  it('given max_uses 1 and its use claimed, when the use is released, then grant.use_released names the use and its number', () => {
    spec.given(claimedOnce()).when(release('use-1')).then([
      { type: 'grant.use_released', data: { use_id: 'use-1', use_no: 1, reason_code: 'CELL_USE_FENCED', reason: 'fenced before it started; it never ran', at: at(20) } },
    ]);
  });

  it('given max_uses 1 and its only use released, when a new use is claimed, then it is claimed as use 2 under the same checks (the grant is not exhausted)', () => {
    const released = [...claimedOnce(), ...grantDecider.decide(release('use-1'), fold(grantDecider, claimedOnce()))];
    expect(spec.given(released).when(claim('use-2', 30)).thenEvents()).toMatchObject([{ type: 'grant.use_claimed', data: { use_id: 'use-2', use_no: 2 } }]);
    // The same checks: past its expiry the new use is refused, released use or not.
    expect(spec.given(released).when(claim('use-2', 301)).thenEvents()).toMatchObject([{ type: 'grant.refused', data: { code: 'GRANT_EXPIRED' } }]);
  });

  it('given max_uses 1 and its use claimed, not released, when another use is claimed, then GRANT_EXHAUSTED', () => {
    expect(spec.given(claimedOnce()).when(claim('use-2', 30)).thenEvents()).toMatchObject([{ type: 'grant.refused', data: { code: 'GRANT_EXHAUSTED' } }]);
  });

  it('given uses released, in flight and completed, then useSettlements says how each stands: only a released use is not_run', () => {
    // given: use 1 released (proven never started), use 2 claimed and completed, use 3 claimed with nothing recorded, use 4 says not_run unreleased
    const two: GrantEvent = { type: 'grant.issued', data: { claims: claims({ max_uses: 3 }), at: at(0) } };
    let events: GrantEvent[] = [two];
    const step = (command: GrantCommand) => (events = [...events, ...grantDecider.decide(command, fold(grantDecider, events))]);
    step(claim('use-1'));
    step(release('use-1'));
    for (const id of ['use-2', 'use-3', 'use-4']) step(claim(id, 30));
    // when
    const settled = useSettlements(fold(grantDecider, events) as GrantRecord, [
      { use_no: 2, outcome: 'completed' },
      { use_no: 4, outcome: 'not_run' },
    ]);
    // then
    expect(settled).toEqual([
      { use_no: 1, settlement: 'not_run' },
      { use_no: 2, settlement: 'completed' },
      { use_no: 3, settlement: 'in_flight' },
      { use_no: 4, settlement: 'unknown' },
    ]);
  });

  it('given a use never claimed or already released, when it is released, then GRANT_USE_NOT_RELEASABLE', () => {
    spec.given(claimedOnce()).when(release('use-9')).thenThrows('GRANT_USE_NOT_RELEASABLE');
    const released = [...claimedOnce(), ...grantDecider.decide(release('use-1'), fold(grantDecider, claimedOnce()))];
    spec.given(released).when(release('use-1', 21)).thenThrows('GRANT_USE_NOT_RELEASABLE');
  });

  it('given a released use, when the same use is claimed again, then nothing: a use id is claimed once, for good', () => {
    const released = [...claimedOnce(), ...grantDecider.decide(release('use-1'), fold(grantDecider, claimedOnce()))];
    spec.given(released).when(claim('use-1', 30)).then([]);
  });
});

const CODES = ['GRANT_NOT_FOUND', 'GRANT_ALREADY_ISSUED', 'GRANT_CLAIMS_INVALID', 'GRANT_AUTHORITY_MISSING', 'GRANT_REVOKED', 'GRANT_EXPIRED', 'GRANT_USE_NOT_RELEASABLE'];
const item: fc.Arbitrary<(s: number) => GrantCommand> = fc.oneof(
  fc.integer({ min: 1, max: 3 }).map((max_uses) => (s: number) => ({ type: 'issue-grant', data: { claims: claims({ max_uses }) }, metadata: meta(s) }) as GrantCommand),
  fc.tuple(fc.constantFrom('u-1', 'u-2', 'u-3', 'u-4'), fc.constantFrom('attempt-1', 'attempt-2'), fc.constantFrom('src/a.ts', 'lib/x', 'src/../..')).map(
    ([id, attempt, path]) => (s: number) => claim(id, s, { ...useData, attempt_id: attempt, resources: { paths: [path] } }),
  ),
  fc.constant((s: number) => ({ type: 'revoke-grant', data: { revoked_by: 'writ-orchestrator', reason: 'drift' }, metadata: meta(s) }) as GrantCommand),
  fc.constantFrom('u-1', 'u-2', 'u-3', 'u-4').map(
    (id) => (s: number) => ({ type: 'release-grant-use', data: { use_id: id, reason_code: 'CELL_USE_FENCED', reason: 'never started' }, metadata: meta(s) }) as GrantCommand,
  ),
);
const commands = fc
  .tuple(fc.array(item, { maxLength: 15 }), fc.array(fc.integer({ min: 0, max: 60 }), { minLength: 15, maxLength: 15 }))
  .map(([items, gaps]) => {
    let t = 0;
    return items.map((build, i) => build((t += gaps[i] ?? 0)));
  });

describe('grant decider model', () => {
  it('property: uses not released never exceed max_uses, never follow expiry or revocation, and are bound to the grant attempt', () => {
    modelCheck(grantDecider, commands, CODES, (step) => {
      const { before, after } = step;
      if (after.status === 'initial') return;
      expect(consumedUses(after)).toBeLessThanOrEqual(after.claims.max_uses);
      after.uses.forEach((use, i) => expect(use.use_no).toBe(i + 1));
      for (const event of step.events ?? []) {
        if (event.type !== 'grant.use_claimed') continue;
        expect(before.status).toBe('issued');
        expect(event.data.attempt_id).toBe(after.claims.attempt_id);
        expect(Date.parse(event.data.at) / 1000).toBeLessThan(after.claims.exp);
      }
      expect(new Set((after as GrantRecord).uses.map((u) => u.use_id)).size).toBe(after.uses.length);
    });
  });

  it('property: evolve is total', () => {
    evolveIsTotal(grantDecider, fc.constant([issued]));
  });
});
