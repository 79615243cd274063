import { ATTEMPT_TERMINAL_STATES, type AttemptStatus } from '@writ/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { A } from '../../test/attempt-flow.js';
import { evolveIsTotal, modelCheck } from '../../test/model.js';
import { request } from '../../test/samples.js';
import { attemptDecider, type AttemptCommand } from './attempt.decider.js';
import { ATTEMPT_PRE_EXECUTION_STATES, ATTEMPT_TRANSITIONS, type AttemptEvent } from './attempt.events.js';

const CODES = [
  'ATTEMPT_NOT_FOUND',
  'ATTEMPT_ALREADY_EXISTS',
  'ATTEMPT_TERMINAL',
  'ATTEMPT_TRANSITION_NOT_ALLOWED',
  'ATTEMPT_REQUEST_INVALID',
  'ATTEMPT_POLICY_RESULT_INVALID',
  'ATTEMPT_APPROVAL_MISMATCH',
  'ATTEMPT_WITNESS_NOT_VALIDATED',
  'ATTEMPT_GRANT_ALREADY_ATTACHED',
  'ATTEMPT_GRANT_MISSING',
  'ATTEMPT_GRANT_MISMATCH',
  'ATTEMPT_GRANT_EXPIRED',
  'ATTEMPT_RENEWAL_NOT_ALLOWED',
  'ATTEMPT_OUTCOME_NOT_UNCERTAIN',
  'ATTEMPT_RESOLUTION_EVIDENCE_MISSING',
];

const rewritten = request({ action_request_id: 'ar-1-dg', action_class: 'read_local', params: { path: 'src/a.ts' }, expected_effects: [] });

/** A command builder taking its time (seconds after T0). */
const builder: fc.Arbitrary<(s: number) => AttemptCommand> = fc.oneof(
  fc.constant((s: number) => A.create(s)),
  fc.constant((s: number) => A.lease(s)),
  fc.constant((s: number) => A.compile(s)),
  fc.constant((s: number) => A.reason(s)),
  fc.constant((s: number) => A.submit(s)),
  fc
    .tuple(fc.constantFrom('allow', 'require_approval', 'deny', 'downgrade'), fc.boolean(), fc.boolean())
    .map(([outcome, witness, complete]) => (s: number) =>
      A.policy(s, { outcome: outcome as 'allow', witness_required: witness }, complete ? { approval_id: 'approval-1', rewritten_request: rewritten, restricted_mode: 'readonly' } : {}),
    ),
  fc
    .tuple(fc.constantFrom('granted', 'denied', 'expired', 'cancelled', 'invalidated'), fc.boolean(), fc.constantFrom(undefined, '1', '2'), fc.constantFrom('approval-1', 'approval-2'))
    .map(([resolution, witness_validated, policy_version, approval_id]) => (s: number) => A.resolve(s, { resolution, witness_validated, approval_id, ...(policy_version === undefined ? {} : { policy_version }) })),
  fc
    .tuple(fc.constantFrom('witness_drift', 'policy_drift', 'input_drift', 'approval_packet_drift'), fc.constantFrom('reenter_policy', 'supersede'))
    .map(([cause, recovery]) => (s: number) => A.drift(s, { cause, recovery })),
  fc.tuple(fc.constantFrom('grant-1', 'grant-2'), fc.integer({ min: -5, max: 900 })).map(([id, ttl]) => (s: number) => A.grant(s, id, ttl)),
  fc.constantFrom('grant-1', 'grant-2').map((id) => (s: number) => A.execute(s, id)),
  fc
    .tuple(
      fc.constantFrom('grant-2', 'grant-3'),
      fc.constantFrom('grant-1', 'grant-2'),
      fc.boolean(),
      fc.array(fc.constantFrom('not_run', 'not_run', 'in_flight', 'completed', 'errored', 'unknown'), { maxLength: 3 }),
      fc.integer({ min: -5, max: 900 }),
    )
    .map(([id, replaced, revoked, settlements, ttl]) => (s: number) =>
      A.renew(s, id, { grant_id: replaced, revoked, uses: settlements.map((settlement, i) => ({ use_no: i + 1, settlement: settlement as 'not_run' })) }, ttl),
    ),
  fc.constantFrom('completed', 'errored', 'unknown').map((outcome) => (s: number) => A.outcome(s, outcome as 'unknown')),
  fc.constant((s: number) => A.unknownReceipt(s)),
  fc.tuple(fc.constantFrom('succeeded', 'failed'), fc.boolean()).map(([code, evidence]) => (s: number) => A.settle(s, code as 'failed', evidence ? ['artifact:obs-1'] : [])),
  fc.constant((s: number) => A.receipt(s)),
  fc.constant((s: number) => A.cancel(s)),
  fc.constant((s: number) => A.fail(s)),
  fc.constant((s: number) => A.supersede(s)),
);

/** A plausible path through the attempt, which random noise then perturbs. */
const skeleton: fc.Arbitrary<((s: number) => AttemptCommand)[]> = fc
  .tuple(
    fc.constantFrom('allow', 'require_approval', 'downgrade'),
    fc.constantFrom('granted', 'denied', 'invalidated'),
    fc.constantFrom('completed', 'errored', 'unknown'),
    fc.constantFrom('succeeded', 'failed'),
    fc.boolean(),
    fc.boolean(),
  )
  .map(([outcome, resolution, executed, settled, evidence, renewed]) => [
    (s: number) => A.policy(s, { outcome: outcome as 'allow', witness_required: outcome === 'require_approval' }, { approval_id: 'approval-1', rewritten_request: rewritten }),
    ...(outcome === 'require_approval' ? [(s: number) => A.resolve(s, { resolution, witness_validated: true })] : []),
    (s: number) => A.grant(s),
    (s: number) => A.execute(s),
    // Its use never started and the grant expired before the next one: a renewal, well past the grant's 300 s.
    ...(renewed ? [(s: number) => A.renew(s + 400, 'grant-2', {}, 1_000)] : []),
    (s: number) => A.outcome(s, executed as 'unknown'),
    ...(executed === 'unknown' ? [(s: number) => A.unknownReceipt(s)] : []),
    (s: number) => A.settle(s, settled as 'failed', evidence ? ['artifact:obs-1'] : []),
    (s: number) => A.receipt(s),
  ]);

/** Sequences that start with create-attempt, lease and submit, follow a skeleton path and get random commands inserted. */
const commands = fc
  .tuple(skeleton, fc.array(fc.tuple(fc.nat({ max: 12 }), builder), { maxLength: 12 }), fc.array(fc.integer({ min: 0, max: 120 }), { minLength: 40, maxLength: 40 }))
  .map(([path, noise, gaps]) => {
    const builders = [...path];
    for (const [position, build] of noise) builders.splice(Math.min(position, builders.length), 0, build);
    let t = 0;
    return [A.create(0), A.lease(1), A.submit(2), ...builders.map((build, i) => build((t += gaps[i] ?? 1) + 3))];
  });

describe('attempt decider model', () => {
  it('property: nothing after a terminal state; executing only from authorized with a grant, at most once; never back before execution once executing', () => {
    modelCheck(
      attemptDecider,
      commands,
      CODES,
      (step, history) => {
        const { before, after } = step;
        if (before.status === 'initial' || after.status === 'initial') return;
        if (ATTEMPT_TERMINAL_STATES.includes(before.status)) expect(step.events, `events after ${before.status}`).toBeNull();
        if (after.status !== before.status) {
          expect(ATTEMPT_TRANSITIONS[before.status].includes(after.status as AttemptStatus), `${before.status} -> ${after.status}`).toBe(true);
        }
        const executing = (step.events ?? []).filter((e) => e.type === 'attempt.executing');
        if (executing.length > 0) {
          expect(before.status).toBe('authorized');
          expect(before.grant).not.toBeNull();
          expect(before.authorized_via).not.toBeNull();
          const earlier = history.flatMap((h) => h.events ?? []).filter((e) => e.type === 'attempt.executing');
          expect(earlier, 'executing entered twice: an uncertain effect re-executed').toEqual([]);
        }
        // A renewal replaces the grant of an executing attempt only when nothing of the action can have run under it.
        if ((step.events ?? []).some((e) => e.type === 'attempt.grant_renewed')) {
          expect(before.status).toBe('executing');
          const replaces = (step.command as Extract<AttemptCommand, { type: 'attach-renewal' }>).data.replaces;
          expect(replaces.revoked).toBe(false);
          expect(replaces.uses.every((use) => use.settlement === 'not_run')).toBe(true);
          expect(after.status).toBe('executing');
        }
        const wasExecuted = [...history, step].some((h) => (h.events ?? []).some((e) => e.type === 'attempt.executing'));
        if (wasExecuted) expect(ATTEMPT_PRE_EXECUTION_STATES.includes(after.status)).toBe(false);
        if (after.status === 'succeeded') expect(history.some((h) => h.after.status === 'receipt_pending')).toBe(true);
      },
      400,
    );
  });

  it('given the generator, then it reaches execution, a renewal while executing, approval and every terminal state', () => {
    const reached = new Set<string>();
    for (const sequence of fc.sample(commands, 500)) {
      let state = attemptDecider.initialState();
      for (const command of sequence) {
        try {
          const events = attemptDecider.decide(command, state);
          for (const event of events) reached.add(event.type);
          state = events.reduce(attemptDecider.evolve, state);
        } catch {
          // refused
        }
        reached.add(state.status);
      }
    }
    expect(reached, 'a renewal while executing').toContain('attempt.grant_renewed');
    for (const status of ['awaiting_approval', 'authorized', 'executing', 'observing', 'receipt_pending', 'succeeded', 'failed', 'cancelled', 'superseded']) {
      expect(reached, status).toContain(status);
    }
  });

  it('property: evolve is total', () => {
    const valid = commands.map((sequence) => {
      const events: AttemptEvent[] = [];
      let state = attemptDecider.initialState();
      for (const command of sequence) {
        try {
          const produced = attemptDecider.decide(command, state);
          events.push(...produced);
          state = produced.reduce(attemptDecider.evolve, state);
        } catch {
          // refused
        }
      }
      return events;
    });
    evolveIsTotal(attemptDecider, valid);
  });
});
