import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventEnvelope, type EventDraft } from '@writ/contracts';
import { sealedChain, taskDraft } from '../test/support/drafts.js';
import { GENESIS, computeEventHash, sealEvent, verifyEventChain, type ChainBreakReason } from './event-chain.js';

const TASK = 'task-1';

const chainOf = (drafts: readonly EventDraft[], taskId = TASK): EventEnvelope[] => sealedChain(drafts, taskId);

function chain(length: number): EventEnvelope[] {
  return chainOf(Array.from({ length }, (_, n) => taskDraft(TASK, { payload: { n } })));
}

/** Raw stored form, as the store reads it back. */
function raw(event: EventEnvelope): Record<string, unknown> {
  return JSON.parse(JSON.stringify(event)) as Record<string, unknown>;
}

describe('sealEvent', () => {
  it('fills task_id, task_seq and prev_event_hash and seals a hash that recomputes', () => {
    // given three drafts, when they are sealed in order
    const [first, second, third] = chain(3);
    // then they form a chain of valid envelopes
    expect(first).toMatchObject({ task_id: TASK, task_seq: 1, prev_event_hash: null });
    expect(second).toMatchObject({ task_seq: 2, prev_event_hash: first!.hash });
    expect(third).toMatchObject({ task_seq: 3, prev_event_hash: second!.hash });
    for (const event of [first, second, third]) {
      expect(EventEnvelope.safeParse(event).success).toBe(true);
      expect(computeEventHash(raw(event!))).toBe(event!.hash);
    }
  });

  it('hashes the canonical form, so stored key order does not matter', () => {
    // given a sealed event whose stored JSON lists its keys in reverse
    const [event] = chain(1);
    const reversed = Object.fromEntries(Object.entries(raw(event!)).reverse());
    // when its hash is recomputed, then it is the same
    expect(computeEventHash(reversed)).toBe(event!.hash);
  });

  it('refuses a payload that is not JSON', () => {
    // given a draft whose payload holds NaN, when it is sealed, then the crypto code surfaces
    expect(() => sealEvent(taskDraft(TASK, { payload: { n: Number.NaN } }), TASK, GENESIS)).toThrow(
      expect.objectContaining({ code: 'CRYPTO_NOT_CANONICALIZABLE' }),
    );
  });
});

describe('verifyEventChain', () => {
  it('accepts an empty chain and reports the genesis head', () => {
    expect(verifyEventChain([])).toEqual({ ok: true, length: 0, head: GENESIS });
  });

  it('accepts an intact chain and reports its head', () => {
    // given five sealed events, when the stored chain is verified
    const events = chain(5);
    const report = verifyEventChain(events.map(raw), { taskId: TASK });
    // then it is valid and ends at the last event
    expect(report).toEqual({ ok: true, length: 5, head: { taskSeq: 5, hash: events[4]!.hash } });
  });

  type Case = { note: string; tamper: (events: Record<string, unknown>[]) => unknown[]; index: number; reason: ChainBreakReason };
  const cases: Case[] = [
    {
      note: 'a payload altered after sealing',
      tamper: (e) => e.map((x, i) => (i === 2 ? { ...x, payload: { n: 99 } } : x)),
      index: 2,
      reason: 'modified',
    },
    {
      note: 'a field added after sealing',
      tamper: (e) => e.map((x, i) => (i === 1 ? { ...x, approved_by: 'mallory' } : x)),
      index: 1,
      reason: 'modified',
    },
    {
      note: 'an event removed from the middle',
      tamper: (e) => e.filter((_, i) => i !== 2),
      index: 2,
      reason: 'dropped',
    },
    {
      note: 'the first event removed',
      tamper: (e) => e.slice(1),
      index: 0,
      reason: 'dropped',
    },
    {
      note: 'two events swapped',
      tamper: (e) => [e[0], e[2], e[1], e[3], e[4]],
      index: 1,
      reason: 'reordered',
    },
    {
      note: 'an event rewritten with a recomputed hash breaks the next link',
      tamper: (e) =>
        e.map((x, i) => {
          if (i !== 2) return x;
          const rewritten = { ...x, payload: { n: 42 } };
          return { ...rewritten, hash: computeEventHash(rewritten) };
        }),
      index: 3,
      reason: 'forked',
    },
    {
      note: 'a first event that links to something',
      tamper: (e) =>
        e.map((x, i) => {
          if (i !== 0) return x;
          const relinked = { ...x, prev_event_hash: 'a'.repeat(64) };
          return { ...relinked, hash: computeEventHash(relinked) };
        }),
      index: 0,
      reason: 'forked',
    },
    {
      note: 'an identical event stored twice',
      tamper: (e) => [...e.slice(0, 3), e[2], ...e.slice(3)],
      index: 3,
      reason: 'duplicated',
    },
    {
      note: 'not an envelope',
      tamper: (e) => [...e.slice(0, 2), { hello: 'world' }, ...e.slice(2)],
      index: 2,
      reason: 'unparseable',
    },
    {
      note: 'undecodable bytes (read back as undefined)',
      tamper: (e) => [e[0], undefined, ...e.slice(1)],
      index: 1,
      reason: 'unparseable',
    },
  ];

  it.each(cases)('detects $note as $reason at index $index', ({ tamper, index, reason }) => {
    // given an intact chain, when it is tampered with and verified
    const report = verifyEventChain(tamper(chain(5).map(raw)), { taskId: TASK });
    // then the first bad position and its reason are reported
    expect(report).toMatchObject({ ok: false, index, taskSeq: index + 1, reason });
  });

  it('detects a fork: a second event with an existing task_seq and other content', () => {
    // given a chain 1..3 and a rival event 3 sealed on the same predecessor
    const drafts = Array.from({ length: 3 }, (_, n) => taskDraft(TASK, { payload: { n } }));
    const events = chainOf(drafts);
    const rival = sealEvent(taskDraft(TASK, { payload: { rival: true } }), TASK, { taskSeq: 2, hash: events[1]!.hash });
    // when the log holds both, then verification reports the fork at the rival
    const report = verifyEventChain([...events, rival].map(raw), { taskId: TASK });
    expect(report).toMatchObject({ ok: false, index: 3, taskSeq: 4, reason: 'forked' });
  });

  it('detects an event of another task', () => {
    // given a chain sealed for another task, when verified as this task's, then it is misfiled
    const foreign = chainOf([taskDraft('task-2')], 'task-2');
    expect(verifyEventChain(foreign.map(raw), { taskId: TASK })).toMatchObject({ ok: false, index: 0, reason: 'misfiled' });
  });

  it('accepts every sealed chain and flags any altered payload at its position (property)', () => {
    const payload = fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
    fc.assert(
      fc.property(
        fc.array(payload, { minLength: 1, maxLength: 12 }),
        fc.nat(),
        payload,
        (payloads, at, replacement) => {
          // given a chain sealed from arbitrary JSON payloads
          const events = chainOf(payloads.map((p) => taskDraft(TASK, { payload: p }))).map(raw);
          // then it verifies
          expect(verifyEventChain(events, { taskId: TASK }).ok).toBe(true);
          // when one payload is replaced by different content
          const index = at % events.length;
          const target = events[index]!;
          const tampered = { ...target, payload: replacement };
          fc.pre(computeEventHash(tampered) !== target['hash']);
          const report = verifyEventChain(events.map((e, i) => (i === index ? tampered : e)), { taskId: TASK });
          // then the chain breaks exactly there, as modified
          expect(report).toMatchObject({ ok: false, index, reason: 'modified' });
        },
      ),
      { numRuns: 200 },
    );
  });
});
