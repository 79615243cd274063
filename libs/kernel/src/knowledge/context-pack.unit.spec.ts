import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { ContextSection, authorsOf, type ContinuationAnchor } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { at, codeOf, deciderSpec } from '../../test/decider-spec.js';
import { request } from '../../test/samples.js';
import { attemptDecider } from '../attempt/attempt.decider.js';
import { stepDecider } from '../attempt/step.decider.js';
import { fold, type Decider } from '../shared/decider.js';
import { taskDecider } from '../task/task.decider.js';
import { beliefDecider } from './belief.decider.js';
import { compileContextPack, type ContextPackCodec } from './context-compiler.js';
import { contextInputsFromLog, foldContextPack, type ContextLogEvent } from './context-inputs.js';
import { contextPackDecider, type ContextPackCommand } from './context-pack.decider.js';
import { ContextPackEvent } from './context-pack.events.js';
import { workingStateDecider } from './working-state.decider.js';

const codec: ContextPackCodec = {
  canonicalJson: (value) => canonicalize(value) as string,
  sha256Hex: (text) => createHash('sha256').update(text, 'utf8').digest('hex'),
};

const CANARY = 'CANARY-ctx-5d1e9b';
/** A secret the agent tried to record by value: refused, so it is in no event and no pack. */
const SECRET_CANARY = 'CANARY-secret-7c2a41';
const TASK = 'task-1';

/** A task's log as the services append it: each decider's events in envelopes with a task_seq, in the order given. */
class Log {
  readonly events: ContextLogEvent[] = [];
  readonly #states = new Map<string, unknown>();

  run<C, E extends { type: string; data: unknown }, S>(decider: Decider<C, E, S>, key: string, command: C, place: Partial<ContextLogEvent> = {}): this {
    const state = (this.#states.get(key) as S | undefined) ?? decider.initialState();
    const events = decider.decide(command, state);
    this.#states.set(key, fold(decider, events, state));
    for (const event of events) {
      const seq = this.events.length + 1;
      this.events.push({ event_type: event.type, payload: event.data as Record<string, unknown>, task_seq: seq, task_id: TASK, entity_type: 'task', entity_id: TASK, occurred_at: at(seq), ...place });
    }
    return this;
  }
}

const meta = (s: number) => ({ metadata: { now: at(s) } });

/** The task and attempt 1 (ingress's events), then knowledge, then attempt 2 submitted: the pack of attempt 2 holds the knowledge. */
function story(continuation_anchor?: ContinuationAnchor): Log {
  const log = new Log();
  const anchored = continuation_anchor === undefined ? {} : { continuation_anchor };
  log.run(taskDecider, 'task', {
    type: 'create-task',
    data: { task_id: TASK, title: 'Fix the bug', goal: 'make the build green', owner_principal_id: 'agent-1', policy_profile_ref: 'local_edit_allowed', task_contract_ref: 'task:task-1', files_owned: ['src/**'], ...anchored },
    ...meta(0),
  });
  for (const n of [1, 2]) {
    const place = { step_id: `step-${n}`, attempt_id: `attempt-${n}`, entity_type: 'attempt' as const, entity_id: `attempt-${n}` };
    log.run(stepDecider, `step-${n}`, { type: 'plan-step', data: { step_id: `step-${n}`, task_id: TASK, kind: 'edit', title: `edit ${n}`, contract_ref: `step:step-${n}`, max_attempts: 3 }, ...meta(n) }, { ...place, entity_type: 'step', entity_id: `step-${n}` });
    log.run(attemptDecider, `attempt-${n}`, { type: 'create-attempt', data: { attempt_id: `attempt-${n}`, task_id: TASK, step_id: `step-${n}`, attempt_no: 1, idempotency_key: `idem-${n}` }, ...meta(n) }, place);
    log.run(attemptDecider, `attempt-${n}`, { type: 'lease-workspace', data: { workspace_lease_ref: 'lease:l-1' }, ...meta(n) }, place);
    log.run(attemptDecider, `attempt-${n}`, { type: 'submit-action', data: { action_request: request({ action_request_id: `ar-${n}`, params: { path: 'src/a.ts', content: CANARY } }) }, ...meta(n) }, place);
    if (n === 2) break;
    log.run(workingStateDecider, 'ws', { type: 'open-working-state', data: { task_id: TASK }, ...meta(10) });
    const revise = (requestId: string, value: unknown) => ({
      type: 'revise-working-state' as const,
      data: {
        task_id: TASK,
        request_id: requestId,
        revised_by: 'agent-1',
        expected_revision: 0,
        set: [
          { key: 'objective.main', kind: 'objective' as const, value: 'green build' },
          { key: 'handle.token', kind: 'resource_handle' as const, value: value as never, sensitivity: 'secret' as const },
        ],
      },
      ...meta(11),
    });
    // The secret by value is refused (nothing recorded); by reference it is recorded.
    expect(codeOf(() => log.run(workingStateDecider, 'ws', revise('req-0', SECRET_CANARY)))).toBe('KNOWLEDGE_SECRET_BY_VALUE');
    log.run(workingStateDecider, 'ws', revise('req-1', { secret_ref: 'vault:deploy/token' }));
    const belief = (id: string, over: object = {}) => ({
      type: 'assert-belief' as const,
      data: {
        belief: { belief_id: id, task_id: TASK, claim: `claim ${id}`, scope: 'repo:writ', evidence_refs: [{ kind: 'observation' as const, id: `obs-${id}` }], confidence: 0.8, trust_tier: 'observed' as const, ...over },
        asserted_by: { principal_id: 'agent-1', principal_type: 'agent' as const },
      },
      ...meta(12),
    });
    log.run(beliefDecider, 'beliefs', belief('b-1'));
    expect(codeOf(() => log.run(beliefDecider, 'beliefs', belief('b-secret', { claim: 'the deploy token', structured_assertion: { token: SECRET_CANARY }, sensitivity: 'secret' })))).toBe(
      'KNOWLEDGE_SECRET_BY_VALUE',
    );
    log.run(beliefDecider, 'beliefs', belief('b-secret', { claim: 'the deploy token is in the vault', structured_assertion: { secret_ref: 'vault:deploy/token' }, sensitivity: 'secret' }));
  }
  return log;
}

const compiled = (log: Log, attemptId: string) => {
  const inputs = contextInputsFromLog(log.events, attemptId);
  if (inputs === undefined) throw new Error(`no inputs for ${attemptId}`);
  return { ...inputs, ...compileContextPack(inputs.input, codec) };
};

describe('context pack inputs from the log (Hermit 15.6, 15.7)', () => {
  it('given a task with working state and beliefs before attempt 2, then its pack holds them in 15.7 order, each naming its source, the secrets left out', () => {
    const log = story();
    // The secret the agent tried to record by value was refused: no event holds it.
    expect(JSON.stringify(log.events)).not.toContain(SECRET_CANARY);
    const { pack, bytes, through_task_seq } = compiled(log, 'attempt-2');
    const order = ContextSection.options;
    const sections = pack.items.map((item) => order.indexOf(item.section));
    expect(sections).toEqual([...sections].sort((a, b) => a - b));
    expect(pack.items.map((item) => `${item.section}/${item.source.kind}:${item.source.id}`)).toEqual([
      'task_contract/task_contract:task:task-1',
      'step_contract/step_contract:step:step-2',
      'policy_constraints/policy:policy:local_edit_allowed',
      'working_state/working_state_entry:objective.main',
      'beliefs/belief:b-1',
    ]);
    expect(pack.omitted).toEqual([
      { section: 'working_state', source: { kind: 'working_state_entry', id: 'handle.token' }, reason: 'SECRET_EXCLUDED' },
      { section: 'beliefs', source: { kind: 'belief', id: 'b-secret' }, reason: 'SECRET_EXCLUDED' },
    ]);
    // The request's params (which may carry content) are not in the step contract, nor is any secret.
    expect(bytes).not.toContain(CANARY);
    expect(bytes).not.toContain(SECRET_CANARY);
    expect(bytes).not.toContain('vault:deploy/token');
    expect(pack.as_of).toBe(at(through_task_seq));
  });

  it('given events appended after the attempt was submitted, then its pack is the same bytes: the inputs end at its attempt.awaiting_policy', () => {
    const log = story();
    const before = compiled(log, 'attempt-1');
    // Attempt 1's pack was compiled when it was submitted: the working state and beliefs came after.
    expect(before.pack.items.map((item) => item.section)).toEqual(['task_contract', 'step_contract', 'policy_constraints']);
    const after = compiled(log, 'attempt-1');
    expect(after.bytes).toBe(before.bytes);
    expect(after.content_hash).toBe(before.content_hash);
  });

  it('given a follow-up task (created with a continuation anchor), then its task contract item carries the ended outcome it continues; a task without one carries none', () => {
    const anchor: ContinuationAnchor = {
      anchor_task_id: 'task-0',
      anchor_kind: 'completed_outcome',
      selection_reason: 'explicit task ref task-0',
      outcome_status: 'completed',
      outcome_summary: 'task task-0 completed: Fix the bug; 1 receipt(s)',
      source_artifact_refs: ['receipt:rct-0'],
    };
    const contractOf = (log: Log) => compiled(log, 'attempt-1').pack.items.find((item) => item.section === 'task_contract')!.content as Record<string, unknown>;
    expect(contractOf(story(anchor))['continues']).toEqual(anchor);
    expect(contractOf(story())).not.toHaveProperty('continues');
  });

  it('given a verdict before attempt 2 recording a profile with a small pack budget and secret references, then its pack is compiled within them; a verdict after it changes nothing', () => {
    const log = story();
    const opening = log.events.findIndex((event) => event.event_type === 'attempt.awaiting_policy' && event.attempt_id === 'attempt-2');
    const knowledge = { working_state: { max_entries: 64, max_entry_bytes: 4_096, max_total_bytes: 65_536 }, context_pack: { max_items: 4, max_bytes: 4_096, allow_secret_references: true } };
    const verdict = (seq: number, pack: object): ContextLogEvent => ({ event_type: 'policy.evaluated', payload: { knowledge: { ...knowledge, context_pack: pack } }, task_seq: seq, task_id: TASK, entity_type: 'task', entity_id: TASK, occurred_at: at(seq) });
    // A stub verdict placed before the attempt's request (only its knowledge matters here), sequences renumbered.
    const events = [...log.events.slice(0, opening), verdict(0, knowledge.context_pack), ...log.events.slice(opening)].map((event, i) => ({ ...event, task_seq: i + 1 }));
    const inputs = contextInputsFromLog(events, 'attempt-2');
    expect(inputs?.input.profile).toEqual(knowledge.context_pack);
    const { pack } = compileContextPack(inputs!.input, codec);
    expect(pack.budget).toMatchObject({ max_items: 4, max_bytes: 4_096, used_items: 4 });
    expect(pack.omitted.map((o) => `${o.source.id}:${o.reason}`)).toEqual(['objective.main:BUDGET_EXCEEDED', 'b-1:BUDGET_EXCEEDED', 'b-secret:BUDGET_EXCEEDED']);
    expect(pack.items.find((item) => item.source.id === 'handle.token')?.secret_ref).toBe('vault:deploy/token');
    // A verdict after the request (a later profile) is not in this pack's prefix.
    const later = [...events, verdict(events.length + 1, { max_items: 128, max_bytes: 65_536, allow_secret_references: false })];
    expect(compileContextPack(contextInputsFromLog(later, 'attempt-2')!.input, codec).bytes).toBe(compileContextPack(inputs!.input, codec).bytes);
  });

  it('given an attempt the log has not seen submitted, then there are no inputs (nothing to compile yet)', () => {
    expect(contextInputsFromLog(story().events, 'attempt-9')).toBeUndefined();
  });
});

describe('context pack decider', () => {
  const spec = deciderSpec(contextPackDecider);
  const log = story();
  const pack = compiled(log, 'attempt-2');
  const record = (over: Partial<Extract<ContextPackCommand, { type: 'record-context-pack' }>['data']> = {}): ContextPackCommand => ({
    type: 'record-context-pack',
    data: { attempt_id: 'attempt-2', through_task_seq: pack.through_task_seq, compiled: pack, uri: `nats-obj://ART/sha256-${pack.content_hash.slice(7)}`, ...over },
    ...meta(60),
  });
  const recordedEvent = {
    type: 'context.pack_compiled',
    data: {
      attempt_id: 'attempt-2',
      sha256: pack.content_hash.slice(7),
      uri: `nats-obj://ART/sha256-${pack.content_hash.slice(7)}`,
      byte_size: pack.byte_size,
      through_task_seq: pack.through_task_seq,
      as_of: pack.pack.as_of,
      secrets: 'excluded',
      items: 5,
      omitted: 2,
      at: at(60),
    },
  } as const;

  it('given no pack, when one is recorded, then context.pack_compiled names its hash, where it is, the log prefix and the counts', () => {
    spec.given([]).when(record()).then([recordedEvent]);
  });

  it('given the same pack recorded, when it is recorded again (a redelivery, a retry after a crash between store and append), then nothing', () => {
    spec.given([recordedEvent]).when(record()).then([]);
  });

  it('given a pack recorded, when a different one is recorded for the same attempt, then KNOWLEDGE_CONTEXT_PACK_CONFLICT (the first stands)', () => {
    const other = compileContextPack({ ...pack.input, as_of: at(999) }, codec);
    spec.given([recordedEvent]).when(record({ compiled: other })).thenThrows('KNOWLEDGE_CONTEXT_PACK_CONFLICT');
    spec.given([recordedEvent]).when({ type: 'refuse-context-pack', data: { attempt_id: 'attempt-2', through_task_seq: 9, code: 'KNOWLEDGE_CONTEXT_INPUT_INVALID', message: 'x' }, ...meta(61) }).thenThrows('KNOWLEDGE_CONTEXT_PACK_CONFLICT');
  });

  it('given a pack compiled for another attempt, when it is recorded, then KNOWLEDGE_CONTEXT_PACK_CONFLICT', () => {
    spec.given([]).when(record({ attempt_id: 'attempt-1' })).thenThrows('KNOWLEDGE_CONTEXT_PACK_CONFLICT');
  });

  it('given inputs the compiler refuses, when the refusal is recorded, then context.pack_refused with the code, once', () => {
    const refuse: ContextPackCommand = { type: 'refuse-context-pack', data: { attempt_id: 'attempt-2', through_task_seq: 9, code: 'KNOWLEDGE_CONTEXT_BUDGET_TOO_SMALL', message: 'too big' }, ...meta(61) };
    const [event] = spec.given([]).when(refuse).thenEvents();
    expect(event).toEqual({ type: 'context.pack_refused', data: { attempt_id: 'attempt-2', through_task_seq: 9, code: 'KNOWLEDGE_CONTEXT_BUDGET_TOO_SMALL', message: 'too big', at: at(61) } });
    spec.given([event]).when(refuse).then([]);
  });

  it('given a second pack event for an attempt in the log (forged or raced), then the fold keeps the first and records an anomaly', () => {
    const second = { ...recordedEvent, data: { ...recordedEvent.data, sha256: 'f'.repeat(64) } };
    const state = fold(contextPackDecider, [recordedEvent, second]);
    expect(state.status === 'compiled' && state.compiled.sha256).toBe(recordedEvent.data.sha256);
    expect(state.anomalies).toEqual([{ event_type: 'context.pack_compiled', status: 'compiled', reason: 'unexpected' }]);
  });

  it('given the log, then foldContextPack reads the attempt\'s record and no other attempt\'s', () => {
    const events: ContextLogEvent[] = [...log.events, { event_type: 'context.pack_compiled', payload: recordedEvent.data, task_seq: 99, task_id: TASK, entity_type: 'attempt', entity_id: 'attempt-2', occurred_at: at(99) }];
    expect(foldContextPack(events, 'attempt-2').status).toBe('compiled');
    expect(foldContextPack(events, 'attempt-1').status).toBe('initial');
  });

  it('given the event types, then they are dotted context.* types only the orchestrator appends on a task', () => {
    const types = ContextPackEvent.options.map((option) => option.shape.type.value);
    expect(types).toEqual(['context.pack_compiled', 'context.pack_refused']);
    for (const type of types) expect(authorsOf('task', type), type).toEqual(['orchestrator']);
    expect(codeOf(() => contextPackDecider.decide({ type: 'nope' } as never, contextPackDecider.initialState()))).toBeDefined();
  });
});
