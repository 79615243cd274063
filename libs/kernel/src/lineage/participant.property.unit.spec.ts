import { Id, PARTICIPANT_TERMINAL_STATES, type ParticipantEvent } from '@writ/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { at } from '../../test/decider-spec.js';
import { HASH, INSTALL, KEYS, P, crashReport, heartbeat, lastWill, manifest, testCrypto } from '../../test/lineage-flow.js';
import { evolveIsTotal, modelCheck } from '../../test/model.js';
import { fold } from '../shared/decider.js';
import type { LineageErrorCode } from './lineage.errors.js';
import { participantDecider, type ParticipantCommand, type ParticipantRecord } from './participant.decider.js';

const decider = participantDecider(testCrypto);
const M = manifest();
const M_HASH = testCrypto.payloadHash(M);
const SPAWNED = decider.decide(P.spawn(1, M), decider.initialState());

/** A JSON value other than `value` (so a mutation always changes the body). */
const otherThan = (value: unknown) => fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null)).filter((candidate) => JSON.stringify(candidate) !== JSON.stringify(value));

/** Every path to a leaf of a JSON object, except inside `signature`. */
function leafPaths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== 'object' || value === null) return [prefix];
  const entries = Array.isArray(value) ? value.map((item, index) => [index, item] as const) : Object.entries(value);
  if (entries.length === 0) return [prefix];
  return entries.filter(([key]) => !(prefix.length === 0 && key === 'signature')).flatMap(([key, item]) => leafPaths(item, [...prefix, key]));
}

function withLeaf(value: unknown, path: readonly (string | number)[], leaf: unknown): unknown {
  if (path.length === 0) return leaf;
  const [head, ...rest] = path as [string | number, ...(string | number)[]];
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<string | number, unknown>;
  copy[head] = withLeaf(copy[head], rest, leaf);
  return copy;
}

describe('participant decider properties', () => {
  it('property: any mutation of a signed manifest body (one leaf, signature kept) is refused, never verified', () => {
    const leafOf = (path: readonly (string | number)[]) => path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], M);
    const mutation = fc.constantFrom(...leafPaths(M)).chain((path) => fc.tuple(fc.constant(path), otherThan(leafOf(path))));
    fc.assert(
      fc.property(mutation, ([path, replacement]) => {
        const tampered = withLeaf(M, path, replacement) as { seed_id?: unknown };
        // The adapter routes by seed_id (VerifySpawn requires an Id): any other manifest never reaches the decider.
        fc.pre(Id.safeParse(tampered.seed_id).success);
        const events = decider.decide(P.spawn(1, tampered, { seed_id: tampered.seed_id as string }), decider.initialState());
        expect(events.map((event) => event.type), `mutating ${path.join('.')}`).toEqual(['participant.spawn_refused']);
      }),
      { numRuns: 300 },
    );
  });

  it('property: on an active seed, any other expires_at without a new signature is SPAWN_TTL_EDITED and the TTL in force is unchanged', () => {
    const state = fold(decider, SPAWNED);
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 7_000 }).filter((s) => s !== 3_600), (seconds) => {
        const edited = { ...M, ttl: { ...M.ttl, expires_at: at(seconds) } };
        const events = decider.decide(P.spawn(1, edited), state);
        expect(events.map((event) => [event.type, (event.data as { code?: string }).code])).toEqual([['participant.spawn_refused', 'SPAWN_TTL_EDITED']]);
        expect((fold(decider, events, state) as ParticipantRecord).expires_at).toBe(at(3_600));
      }),
      { numRuns: 200 },
    );
  });

  it('property: a manifest asking for any program, provider or host the ceilings do not list is refused with SPAWN_CAPABILITY_EXCEEDS_CEILING', () => {
    const name = fc.stringMatching(/^[a-z][a-z0-9]{0,11}$/);
    fc.assert(
      fc.property(fc.constantFrom('shell', 'providers', 'net'), name, (field, value) => {
        const ceiling = field === 'net' ? INSTALL.ceilings.net : INSTALL.ceilings[field as 'shell' | 'providers'];
        const entry = field === 'net' ? `${value}.evil.test` : value;
        fc.pre(!ceiling.includes(entry));
        const m = manifest({ capabilities: { ...M.capabilities, [field]: [entry] } });
        const [event] = decider.decide(P.spawn(1, m), decider.initialState());
        expect(event).toMatchObject({ type: 'participant.spawn_refused', data: { code: 'SPAWN_CAPABILITY_EXCEEDS_CEILING' } });
      }),
      { numRuns: 200 },
    );
  });

  it('property: for any order of heartbeat sequence numbers, recorded sequences strictly increase, late ones are logged, gaps are logged, and last_seq is the highest', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 15 }), (seqs) => {
        let state = fold(decider, SPAWNED);
        const recorded: number[] = [];
        let late = 0;
        let gaps = 0;
        let highest = 0;
        seqs.forEach((seq, i) => {
          const events = decider.decide(P.beat(10 + i, heartbeat(seq, { sent_at: at(10 + i) })), state);
          for (const event of events) {
            if (event.type === 'participant.heartbeat_recorded') recorded.push(event.data.heartbeat_seq);
            if (event.type === 'participant.heartbeat_anomaly' && event.data.code === 'HEARTBEAT_OUT_OF_ORDER') late += 1;
            if (event.type === 'participant.heartbeat_anomaly' && event.data.code === 'HEARTBEAT_GAP') gaps += 1;
          }
          state = fold(decider, events, state);
        });
        let expectedGaps = 0;
        let expectedLate = 0;
        // Each heartbeat is sent at its own time, so a repeated number is a new body: late, never a duplicate.
        for (const seq of seqs) {
          if (seq <= highest) {
            expectedLate += 1;
          } else {
            if (seq > highest + 1) expectedGaps += 1;
            highest = seq;
          }
        }
        expect(recorded).toEqual([...recorded].sort((a, b) => a - b));
        expect(new Set(recorded).size).toBe(recorded.length);
        expect(gaps).toBe(expectedGaps);
        expect(late).toBe(expectedLate);
        expect((state as ParticipantRecord).heartbeat.last_seq).toBe(Math.max(...seqs));
      }),
      { numRuns: 300 },
    );
  });

  it('model: random commands never change a participant after it ended, and decide and evolve agree', () => {
    const will = lastWill(M_HASH);
    const drift = { anchor_hash: HASH.other, parent_hash: HASH.parent, policy_hash: HASH.policy };
    const parentChange = { anchor_hash: HASH.anchor, parent_hash: HASH.other, policy_hash: HASH.policy };
    const twoCalls = manifest({ resource_limits: { ...M.resource_limits, max_calls: 2 } });
    const item: fc.Arbitrary<(s: number) => ParticipantCommand> = fc.oneof(
      fc.constant((s: number) => P.spawn(s, M)),
      fc.constant((s: number) => P.spawn(s, twoCalls)),
      fc.constant((s: number) => P.spawn(s, { ...M, ttl: { ...M.ttl, expires_at: at(5_000) } })),
      fc.tuple(fc.integer({ min: 1, max: 8 }), fc.constantFrom('ok', 'drift', 'parent')).map(
        ([seq, kind]) => (s: number) => P.beat(s, heartbeat(seq, kind === 'ok' ? {} : { constraints: kind === 'drift' ? drift : parentChange })),
      ),
      fc.constant((s: number) => P.retire(s, will)),
      fc.constant((s: number) => P.retire(s, { ...will, summary: 'tampered' })),
      fc.constant((s: number) => P.crash(s, crashReport())),
      fc.constant((s: number) => P.crash(s, crashReport({}, KEYS.child))),
      fc.constant((s: number) => P.expire(s)),
      fc.integer({ min: 1, max: 40 }).map((n) => (s: number) => P.call(s, n)),
    );
    const commands = fc.array(fc.tuple(item, fc.integer({ min: 0, max: 900 })), { minLength: 1, maxLength: 12 }).map((steps) => {
      let t = 1;
      return steps.map(([make, dt]) => {
        t += dt;
        return make(t);
      });
    });
    const codes: string[] = [
      'KERNEL_COMMAND_INVALID',
      ...(['PARTICIPANT_UNKNOWN', 'PARTICIPANT_TTL_NOT_ELAPSED', 'PARTICIPANT_NOT_ACTIVE', 'PARTICIPANT_CALLS_EXHAUSTED'] satisfies LineageErrorCode[]),
    ];
    const terminal = PARTICIPANT_TERMINAL_STATES as readonly string[];
    modelCheck(decider, commands, codes, (step) => {
      if (terminal.includes(step.before.status)) {
        expect(step.after.status, 'a terminal participant never changes status').toBe(step.before.status);
        const changes = (step.events ?? []).filter((event) => !event.type.endsWith('_refused'));
        expect(changes, 'after the end only refusals are recorded').toEqual([]);
      }
      for (const event of step.events ?? []) {
        // A renewal may lower max_calls below the count; no call is ever recorded beyond the manifest in force.
        if (event.type === 'participant.call_recorded') expect(event.data.call, 'a call beyond max_calls').toBeLessThanOrEqual((step.before as ParticipantRecord).manifest.resource_limits.max_calls);
      }
      if (step.after.status !== 'none' && step.before.status !== 'active') {
        expect((step.after as ParticipantRecord).calls, 'calls are counted only while active').toBe(step.before.status === 'none' ? 0 : (step.before as ParticipantRecord).calls);
      }
      if (step.after.status === 'retired') expect((step.after as ParticipantRecord).last_will).not.toBeNull();
      if (step.after.status === 'failed' || step.after.status === 'expired') expect((step.after as ParticipantRecord).last_will).toBeNull();
    });
  });

  it('evolve is total: junk after any valid history changes no status', () => {
    const events: readonly ParticipantEvent[] = [...SPAWNED, ...decider.decide(P.beat(10, heartbeat(1)), fold(decider, SPAWNED))];
    evolveIsTotal(decider, fc.constantFrom(events, SPAWNED, []));
  });
});
