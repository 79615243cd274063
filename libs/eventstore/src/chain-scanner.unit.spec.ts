import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EventDraft } from '@writ/contracts';
import { sealedChain, taskDraft } from '../test/support/drafts.js';
import { ChainScanner, NOT_JSON, computeEventHash, sealEvent, type ChainAggregate, type ChainLink, type MessageVerdict } from './event-chain.js';

const TASK = 'task-1';
const TASK_AGGREGATE: ChainAggregate = { entityType: 'task', entityId: TASK };

/** The chain as stored JSON reads back. */
const chainOf = (drafts: readonly EventDraft[], taskId = TASK): Record<string, unknown>[] =>
  sealedChain(drafts, taskId).map((event) => JSON.parse(JSON.stringify(event)) as Record<string, unknown>);

const honest = (length: number) => chainOf(Array.from({ length }, (_, n) => taskDraft(TASK, { payload: { n } })));
const link = (event: Record<string, unknown>): ChainLink => ({ taskSeq: event['task_seq'] as number, hash: event['hash'] as string });
/** `event` with its hash sealed again over what it now holds. */
const resealed = (event: Record<string, unknown>) => ({ ...event, hash: computeEventHash(event) });

/** The verdicts on `messages` in stored order, each given the messages after it (as the store gives them). */
function judge(messages: readonly unknown[], aggregate: ChainAggregate = TASK_AGGREGATE): MessageVerdict[] {
  const scanner = new ChainScanner(aggregate);
  const verdicts: MessageVerdict[] = [];
  for (let index = 0; index < messages.length; index++) {
    const verdict = scanner.classify(messages[index], () => messages.slice(index + 1));
    verdicts.push(verdict);
    if (verdict.kind === 'broken') break;
  }
  return verdicts;
}

/** `event`, `quarantined:<REASON>` or `broken:<reason>` per verdict. */
const summary = (verdicts: readonly MessageVerdict[]) =>
  verdicts.map((verdict) => (verdict.kind === 'event' ? 'event' : verdict.kind === 'quarantined' ? `quarantined:${verdict.reason}` : `broken:${verdict.reason}`));

type Case = { note: string; messages: (chain: Record<string, unknown>[]) => unknown[]; want: string[] };

describe('ChainScanner: junk is quarantined, tampering still breaks (docs/verification.md, Quarantine)', () => {
  const cases: Case[] = [
    // junk that never was an event of this chain: the chain goes on without it
    { note: 'bytes that are not JSON between two events', messages: ([a, b, c]) => [a, NOT_JSON, b, c], want: ['event', 'quarantined:QUARANTINE_NOT_JSON', 'event', 'event'] },
    { note: 'JSON that is not an envelope', messages: ([a, b]) => [a, { hello: 'world' }, b], want: ['event', 'quarantined:QUARANTINE_NOT_ENVELOPE', 'event'] },
    { note: 'junk before the first event', messages: ([a, b]) => ['junk', NOT_JSON, a, b], want: ['quarantined:QUARANTINE_NOT_ENVELOPE', 'quarantined:QUARANTINE_NOT_JSON', 'event', 'event'] },
    { note: "another task's event", messages: ([a, b]) => [a, chainOf([taskDraft('task-2')], 'task-2')[0], b], want: ['event', 'quarantined:QUARANTINE_WRONG_AGGREGATE', 'event'] },
    { note: 'an identical copy of an earlier event (dedupe failed)', messages: ([a, b, c]) => [a, b, a, c], want: ['event', 'event', 'quarantined:QUARANTINE_DUPLICATE', 'event'] },
    {
      note: 'a rival for a task_seq the chain holds, stored after it (a late fork branch)',
      messages: ([a, b, c]) => [a, b, sealEvent(taskDraft(TASK, { payload: { rival: true } }), TASK, link(a!)), c],
      want: ['event', 'event', 'quarantined:QUARANTINE_FORKED', 'event'],
    },
    { note: 'a held task_seq whose hash does not recompute', messages: ([a, b, c]) => [a, b, { ...a, payload: { n: 9 } }, c], want: ['event', 'event', 'quarantined:QUARANTINE_HASH_MISMATCH', 'event'] },
    {
      note: 'the next task_seq neither hashing nor linking (vouches for nothing)',
      messages: ([a, b, c]) => [a, b, { ...c, prev_event_hash: 'b'.repeat(64), payload: { n: 9 } }, c],
      want: ['event', 'event', 'quarantined:QUARANTINE_HASH_MISMATCH', 'event'],
    },
    { note: 'a far task_seq whose hash does not recompute', messages: ([a, b]) => [a, { ...b, task_seq: 9 }, b], want: ['event', 'quarantined:QUARANTINE_HASH_MISMATCH', 'event'] },
    // what a changed, dropped, reordered or forked event looks like: a break, never skipped
    { note: 'the next event, linked, with its payload changed', messages: ([a, b, c]) => [a, b, { ...c, payload: { n: 9 } }], want: ['event', 'event', 'broken:modified'] },
    { note: 'an event replaced by junk, with events after it', messages: ([a, _b, c]) => [a, NOT_JSON, c], want: ['event', 'quarantined:QUARANTINE_NOT_JSON', 'broken:modified'] },
    { note: 'an event turned into an envelope of another task, with events after it', messages: ([a, b, c]) => [a, resealed({ ...b, task_id: 'task-2' }), c], want: ['event', 'quarantined:QUARANTINE_WRONG_AGGREGATE', 'broken:modified'] },
    { note: 'an event rewritten with a recomputed hash (its successor no longer links)', messages: ([a, b, c]) => [a, resealed({ ...b, payload: { n: 42 } }), c], want: ['event', 'event', 'broken:forked'] },
    { note: 'an intact next event linking to another history', messages: ([a, b]) => [a, resealed({ ...b, prev_event_hash: 'c'.repeat(64) })], want: ['event', 'broken:forked'] },
    { note: 'an event missing', messages: ([a, _b, c]) => [a, c], want: ['event', 'broken:dropped'] },
    { note: 'two events swapped', messages: ([a, b, c]) => [a, c, b], want: ['event', 'broken:reordered'] },
    // the limit of any hash chain: the last event destroyed reads as junk after the chain (a truncation)
    { note: 'the last event replaced by junk', messages: ([a, b]) => [a, b, NOT_JSON], want: ['event', 'event', 'quarantined:QUARANTINE_NOT_JSON'] },
  ];

  it.each(cases)('$note → $want', ({ messages, want }) => {
    // given an honest chain of three events, when these messages are stored in this order
    const verdicts = judge(messages(honest(3)));
    // then each is judged so
    expect(summary(verdicts)).toEqual(want);
  });

  it('holds a non-task aggregate to its entity: an event about another entity on its subject is junk', () => {
    // given a principal's chain and an intact event about a cell on the principal's subject
    const principal = chainOf([taskDraft('p-1', { entity_type: 'principal', entity_id: 'p-1' })], 'p-1');
    const stray = sealEvent(taskDraft('p-1', { entity_type: 'cell', entity_id: 'cell-1' }), 'p-1', link(principal[0]!));
    // then it is quarantined and the principal's chain stands
    expect(summary(judge([...principal, stray], { entityType: 'principal', entityId: 'p-1' }))).toEqual(['event', 'quarantined:QUARANTINE_WRONG_AGGREGATE']);
  });

  it('continues a chain from a known head, telling duplicates from forks by the hashes it was given', () => {
    // given a scanner resumed after the first two events
    const [a, b, c] = honest(3);
    const scanner = new ChainScanner(TASK_AGGREGATE, { head: link(b!), hashes: [a!['hash'] as string, b!['hash'] as string] });
    // then a copy of the first is a duplicate, the third an event, and the head moves
    expect(scanner.classify(a)).toMatchObject({ kind: 'quarantined', reason: 'QUARANTINE_DUPLICATE' });
    expect(scanner.classify(c)).toMatchObject({ kind: 'event' });
    expect(scanner.head).toEqual(link(c!));
  });

  it('never lets junk change the chain, wherever it lands (property)', () => {
    const chain = honest(6);
    const junk = fc.oneof(
      fc.constant(NOT_JSON),
      fc.jsonValue({ maxDepth: 3 }),
      fc.constantFrom(...chainOf([taskDraft('task-2'), taskDraft('task-2')], 'task-2')),
      fc.nat({ max: chain.length - 1 }).map((index) => ({ copyOf: index })),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat({ max: chain.length }), junk), { maxLength: 8 }), (insertions) => {
        // given junk inserted at arbitrary places (a copy of an event only after that event was stored)
        const stored: unknown[] = [...chain];
        for (const [at, item] of insertions) {
          const copied = typeof item === 'object' && item !== null && 'copyOf' in item ? chain[(item as { copyOf: number }).copyOf] : undefined;
          stored.splice(copied === undefined ? at : Math.max(at, stored.indexOf(copied) + 1), 0, copied ?? item);
        }
        // when the subject is judged, then the chain is exactly the honest one and nothing breaks
        const verdicts = judge(stored);
        expect(verdicts.filter((verdict) => verdict.kind === 'broken')).toEqual([]);
        expect(verdicts.flatMap((verdict) => (verdict.kind === 'event' ? [verdict.event.hash] : []))).toEqual(chain.map((event) => event['hash']));
      }),
      { numRuns: 300 },
    );
  });

  it('always breaks when the bytes of an event with a successor change, however (property)', () => {
    const chain = honest(5);
    const change = fc.oneof(
      fc.constant<(event: Record<string, unknown>) => unknown>(() => NOT_JSON),
      fc.jsonValue({ maxDepth: 2 }).map((value) => () => value),
      fc.jsonValue({ maxDepth: 2 }).map((payload) => (event: Record<string, unknown>) => ({ ...event, payload: { changed: payload } })),
      fc.jsonValue({ maxDepth: 2 }).map((payload) => (event: Record<string, unknown>) => resealed({ ...event, payload: { changed: payload } })),
      fc.nat({ max: 9 }).map((seq) => (event: Record<string, unknown>) => resealed({ ...event, task_seq: seq + 1 })),
    );
    fc.assert(
      fc.property(fc.nat({ max: chain.length - 2 }), change, (index, alter) => {
        // given an event that is not the last, changed in place
        const altered = alter(chain[index]!);
        fc.pre(JSON.stringify(altered) !== JSON.stringify(chain[index]));
        // when the subject is judged, then the chain breaks at or after it
        const verdicts = judge(chain.map((event, i) => (i === index ? altered : event)));
        expect(verdicts.at(-1)?.kind).toBe('broken');
        expect(verdicts.length).toBeGreaterThan(index);
      }),
      { numRuns: 300 },
    );
  });
});
