import { describe, expect, it } from 'vitest';
import { assessConsumer, type ConsumerProgress, type ConsumerSample } from './consumer-stall.js';

const BOUND = 60_000;

type Case = { note: string; previous: ConsumerProgress | undefined; sample: ConsumerSample; now: number; want: { stalled: boolean; sinceMs: number; stuckMs: number } };

describe('assessConsumer', () => {
  const cases: Case[] = [
    { note: 'first sight: counting starts now', previous: undefined, sample: { pending: 5, ackPending: 1, ackFloor: 10 }, now: 1_000, want: { stalled: false, sinceMs: 1_000, stuckMs: 0 } },
    { note: 'the ack floor moved: progress', previous: { ackFloor: 10, sinceMs: 0 }, sample: { pending: 5, ackPending: 1, ackFloor: 11 }, now: 90_000, want: { stalled: false, sinceMs: 90_000, stuckMs: 0 } },
    { note: 'nothing to do: an idle consumer is not stalled', previous: { ackFloor: 10, sinceMs: 0 }, sample: { pending: 0, ackPending: 0, ackFloor: 10 }, now: 90_000, want: { stalled: false, sinceMs: 90_000, stuckMs: 0 } },
    { note: 'work waiting, no progress, within the bound', previous: { ackFloor: 10, sinceMs: 0 }, sample: { pending: 3, ackPending: 0, ackFloor: 10 }, now: 59_999, want: { stalled: false, sinceMs: 0, stuckMs: 59_999 } },
    { note: 'work waiting, no progress, past the bound: stalled', previous: { ackFloor: 10, sinceMs: 0 }, sample: { pending: 3, ackPending: 0, ackFloor: 10 }, now: 60_000, want: { stalled: true, sinceMs: 0, stuckMs: 60_000 } },
    { note: 'redeliveries that keep failing hold the floor: stalled', previous: { ackFloor: 10, sinceMs: 0 }, sample: { pending: 0, ackPending: 1, ackFloor: 10 }, now: 120_000, want: { stalled: true, sinceMs: 0, stuckMs: 120_000 } },
  ];

  it.each(cases)('$note', ({ previous, sample, now, want }) => {
    const assessment = assessConsumer(previous, sample, now, BOUND);
    expect({ stalled: assessment.stalled, sinceMs: assessment.progress.sinceMs, stuckMs: assessment.stuckMs }).toEqual(want);
  });
});
