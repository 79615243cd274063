import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { fold, type Decider } from '../shared/decider.js';
import { beliefDecider, type BeliefSetState } from './belief.decider.js';
import { compileContextPack, type ContextCompileInput } from './context-compiler.js';
import { ingressBindingDecider } from './ingress-binding.decider.js';
import { memoryDecider } from './memory.decider.js';
import { workingStateDecider, type WorkingStateRecord } from './working-state.decider.js';

// Golden replay: knowledge streams recorded under __fixtures__ must still fold, with today's
// evolve, to the state recorded beside them, without an anomaly; and the recorded pack inputs
// must still compile to the recorded bytes. Regenerate only on a deliberate, migrated change.
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8')) as unknown;
const codec = { canonicalJson: (value: unknown) => canonicalize(value) as string, sha256Hex: (text: string) => createHash('sha256').update(text, 'utf8').digest('hex') };

const STREAMS: readonly [string, Decider<never, never, { status: string; anomalies: readonly unknown[] }>, string][] = [
  ['working-state-compacted', workingStateDecider as never, 'open'],
  ['beliefs-revised', beliefDecider as never, 'holding'],
  ['memory-invalidated', memoryDecider as never, 'invalidated'],
  ['ingress-bound', ingressBindingDecider as never, 'bound'],
];

describe('golden replay of recorded knowledge streams', () => {
  it.each(STREAMS)("given the recorded %s stream, then today's evolve folds it to the recorded state", (name, decider, status) => {
    const events = fixture(`${name}.events.json`) as unknown[];
    const state = fold(decider, events);
    expect(state.anomalies).toEqual([]);
    expect(state.status).toBe(status);
    expect(state).toEqual(fixture(`${name}.expected.json`));
  });

  it('given the recorded pack inputs, then the compiler still produces the recorded bytes and hash (byte-identical rebuild)', () => {
    const expected = fixture('context-pack.expected.json') as { content_hash: string; bytes: string };
    const compiled = compileContextPack(fixture('context-pack.input.json') as ContextCompileInput, codec);
    expect(compiled.bytes).toBe(expected.bytes);
    expect(compiled.content_hash).toBe(expected.content_hash);
    expect(compiled.bytes).not.toContain('sk-CANARY-golden');
  });

  it('given a pack compiled from the states folded from the log, then folding the log again compiles byte-identically', () => {
    const compile = () => {
      const ws = fold(workingStateDecider, fixture('working-state-compacted.events.json') as unknown[]) as WorkingStateRecord;
      const beliefs = fold(beliefDecider, fixture('beliefs-revised.events.json') as unknown[]) as BeliefSetState;
      return compileContextPack(
        {
          task_id: 'task-1',
          attempt_id: 'attempt-2',
          as_of: '2030-01-01T00:01:00Z',
          task_contract: { ref: 'artifact:contract-1', content: 'make the build green' },
          working_state: [...ws.entries],
          beliefs: [...beliefs.beliefs],
          profile: { max_items: 32, max_bytes: 16_384, allow_secret_references: false },
        },
        codec,
      );
    };
    const first = compile();
    expect(compile().bytes).toBe(first.bytes);
    expect(first.pack.items.map((item) => item.source.id)).toEqual(['artifact:contract-1', 'cache.logs', 'objective.main', 'plan.current', 'b-2']);
    expect(first.pack.omitted.map((o) => [o.source.id, o.reason])).toEqual([['b-1', 'BELIEF_NOT_ACTIVE'], ['b-3', 'BELIEF_NOT_ACTIVE']]);
  });
});
