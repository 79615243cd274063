import type { ContextPackCompiled, ContextPackRefusalCode } from '@writ/contracts';
import type { Anomaly, Command, Decider } from '../shared/decider.js';
import { totalEvolve } from '../shared/decider.js';
import { emit } from '../shared/events.js';
import { commandNowMs, unknownCommand } from '../shared/instant.js';
import type { CompiledContextPack } from './context-compiler.js';
import { ContextPackEvent } from './context-pack.events.js';
import { KnowledgeError } from './knowledge.errors.js';

/**
 * Commands of one attempt's context pack. The adapter compiles (`compileContextPack`), stores
 * the bytes under their hash, then records where they are; a refusal records the compiler's code.
 */
export type ContextPackCommand =
  | Command<
      'record-context-pack',
      {
        readonly attempt_id: string;
        readonly through_task_seq: number;
        readonly compiled: Pick<CompiledContextPack, 'pack' | 'byte_size' | 'content_hash'>;
        /** Where the store put the bytes (`nats-obj://<bucket>/sha256-<hex>`). */
        readonly uri: string;
      }
    >
  | Command<'refuse-context-pack', { readonly attempt_id: string; readonly through_task_seq: number; readonly code: ContextPackRefusalCode; readonly message: string }>;

export interface NoContextPack {
  readonly status: 'initial';
  readonly anomalies: readonly Anomaly[];
}

export interface RecordedContextPack {
  readonly status: 'compiled';
  readonly attempt_id: string;
  readonly compiled: ContextPackCompiled;
  readonly anomalies: readonly Anomaly[];
}

export interface RefusedContextPack {
  readonly status: 'refused';
  readonly attempt_id: string;
  readonly code: ContextPackRefusalCode;
  readonly message: string;
  readonly anomalies: readonly Anomaly[];
}

export type ContextPackState = NoContextPack | RecordedContextPack | RefusedContextPack;

function initialState(): ContextPackState {
  return { status: 'initial', anomalies: [] };
}

function sameAttempt(state: RecordedContextPack | RefusedContextPack, attemptId: string): void {
  if (state.attempt_id !== attemptId) {
    throw new KnowledgeError('KNOWLEDGE_CONTEXT_PACK_CONFLICT', `this context pack belongs to attempt ${state.attempt_id}, not ${attemptId}`, { details: { attempt_id: state.attempt_id } });
  }
}

/** What is already recorded differs from what would be recorded now: never replaced (the first stands), surfaced as a bug. */
function conflict(state: RecordedContextPack | RefusedContextPack, now: string): KnowledgeError {
  const recorded = state.status === 'compiled' ? `pack sha256:${state.compiled.sha256}` : `refusal ${state.code}`;
  return new KnowledgeError(
    'KNOWLEDGE_CONTEXT_PACK_CONFLICT',
    `attempt ${state.attempt_id} already has ${recorded}; a recompile from the same log gave ${now}: the compiler or its inputs are not deterministic`,
    { details: { attempt_id: state.attempt_id, recorded, now } },
  );
}

function decide(command: ContextPackCommand, state: ContextPackState): ContextPackEvent[] {
  commandNowMs(command);
  const at = command.metadata.now;
  switch (command.type) {
    case 'record-context-pack': {
      const { attempt_id, through_task_seq, compiled, uri } = command.data;
      const sha256 = compiled.content_hash.replace(/^sha256:/, '');
      if (compiled.pack.attempt_id !== attempt_id) {
        throw new KnowledgeError('KNOWLEDGE_CONTEXT_PACK_CONFLICT', `the pack was compiled for attempt ${compiled.pack.attempt_id}, not ${attempt_id}`, { details: { attempt_id } });
      }
      if (state.status !== 'initial') {
        sameAttempt(state, attempt_id);
        // The same bytes again (a redelivery, a retry after a crash between store and append): nothing new.
        if (state.status === 'compiled' && state.compiled.sha256 === sha256) return [];
        throw conflict(state, `pack sha256:${sha256}`);
      }
      const { pack } = compiled;
      return emit(ContextPackEvent, [
        {
          type: 'context.pack_compiled',
          data: {
            attempt_id,
            sha256,
            uri,
            byte_size: compiled.byte_size,
            through_task_seq,
            as_of: pack.as_of,
            secrets: pack.secrets,
            items: pack.items.length,
            omitted: pack.omitted.length,
            at,
          },
        },
      ]);
    }
    case 'refuse-context-pack': {
      const { attempt_id, through_task_seq, code, message } = command.data;
      if (state.status !== 'initial') {
        sameAttempt(state, attempt_id);
        if (state.status === 'refused' && state.code === code) return [];
        throw conflict(state, `refusal ${code}`);
      }
      return emit(ContextPackEvent, [{ type: 'context.pack_refused', data: { attempt_id, through_task_seq, code, message: message.slice(0, 1_024), at } }]);
    }
    default:
      return unknownCommand((command as { type?: unknown }).type, 'the context pack decider');
  }
}

const evolve = totalEvolve<ContextPackState, ContextPackEvent>(ContextPackEvent, (state, event) => {
  // One record per attempt, the first: a second (a forged or raced copy) is an anomaly, never a replacement.
  if (state.status !== 'initial') return undefined;
  if (event.type === 'context.pack_compiled') return { status: 'compiled', attempt_id: event.data.attempt_id, compiled: event.data, anomalies: state.anomalies };
  return { status: 'refused', attempt_id: event.data.attempt_id, code: event.data.code, message: event.data.message, anomalies: state.anomalies };
});

/** The context pack of one attempt: compiled once from the log, recorded by where its bytes are (Hermit 15.6). */
export const contextPackDecider: Decider<ContextPackCommand, ContextPackEvent, ContextPackState> = Object.freeze({ initialState, decide, evolve });
