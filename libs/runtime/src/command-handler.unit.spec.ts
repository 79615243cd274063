import { WritError, type EventDraft } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { decision, handleCommand, type CommandStream } from './command-handler.js';

class ConflictError extends WritError<'EVENTSTORE_CONFLICT'> {}
class OtherError extends WritError<'EVENTSTORE_UNAVAILABLE'> {}

const draft = (id: string): EventDraft => ({
  event_id: id,
  schema_version: 1,
  event_type: 'test.happened',
  entity_type: 'task',
  entity_id: 'tsk-1',
  occurred_at: '2026-11-28T00:00:00.000Z',
  actor_type: 'service',
  actor_id: 'writ-test',
  payload: {},
  causation_id: null,
  correlation_id: 'tsk-1',
});

/** A stream in memory whose appends answer, in turn, what the test scripts (then succeed). */
function scriptedStream(outcomes: Array<'conflict' | 'duplicate' | 'other'> = []): CommandStream<{ seq: number }> & { reads: number; appended: Array<{ drafts: readonly EventDraft[]; expectedSeq: number }> } {
  const stream = {
    reads: 0,
    appended: [] as Array<{ drafts: readonly EventDraft[]; expectedSeq: number }>,
    read: async () => ({ seq: ++stream.reads * 10 }),
    append: async (drafts: readonly EventDraft[], expectedSeq: number) => {
      const outcome = outcomes.shift();
      if (outcome === 'conflict') throw new ConflictError('EVENTSTORE_CONFLICT', 'someone appended first');
      if (outcome === 'other') throw new OtherError('EVENTSTORE_UNAVAILABLE', 'the log did not answer');
      stream.appended.push({ drafts, expectedSeq });
      return { duplicate: outcome === 'duplicate' };
    },
  };
  return stream;
}

const exhausted = () => new Error('kept changing');

describe('handleCommand', () => {
  it('given a decision to append, when the append lands, then the result is answered and the append was guarded by the version read', async () => {
    const stream = scriptedStream();
    const result = await handleCommand({ stream, decide: () => decision.append([draft('e1')], 'appended'), exhausted });
    expect(result).toBe('appended');
    expect(stream.appended).toEqual([{ drafts: [draft('e1')], expectedSeq: 10 }]);
  });

  it('given a decision that the log already answers, then nothing is appended', async () => {
    const stream = scriptedStream();
    expect(await handleCommand({ stream, decide: () => decision.done('already'), exhausted })).toBe('already');
    expect(stream.appended).toEqual([]);
  });

  it('given a lost race (conflict), then the stream is read again and the command decided again on the new version', async () => {
    const stream = scriptedStream(['conflict']);
    const seen: number[] = [];
    const result = await handleCommand({
      stream,
      decide: (history) => {
        seen.push(history.seq);
        return decision.append([draft(`e${history.seq}`)], history.seq);
      },
      exhausted,
    });
    expect(seen).toEqual([10, 20]);
    expect(result).toBe(20);
    expect(stream.appended).toEqual([{ drafts: [draft('e20')], expectedSeq: 20 }]);
  });

  it('given every draft already in the log (another delivery landed first), then it decides again from what landed', async () => {
    const stream = scriptedStream(['duplicate']);
    let round = 0;
    const result = await handleCommand({ stream, decide: () => (++round === 1 ? decision.append([draft('e1')], 'first') : decision.done('from the log')), exhausted });
    expect(result).toBe('from the log');
  });

  it('given an error that is not a lost race, then it reaches the caller at once, unretried', async () => {
    const stream = scriptedStream(['other']);
    await expect(handleCommand({ stream, decide: () => decision.append([draft('e1')], 'x'), exhausted })).rejects.toMatchObject({ code: 'EVENTSTORE_UNAVAILABLE' });
    expect(stream.reads).toBe(1);
  });

  it("given a refusal thrown by the decision, then it reaches the caller and nothing is appended", async () => {
    const stream = scriptedStream();
    await expect(handleCommand({ stream, decide: () => Promise.reject(new Error('refused')), exhausted })).rejects.toThrow('refused');
    expect(stream.appended).toEqual([]);
  });

  it("given a stream that keeps changing, then after maxRounds the caller's exhausted error", async () => {
    const stream = scriptedStream(['conflict', 'conflict', 'conflict']);
    await expect(handleCommand({ stream, decide: () => decision.append([draft('e1')], 'x'), exhausted, maxRounds: 3 })).rejects.toThrow('kept changing');
    expect(stream.reads).toBe(3);
  });
});
