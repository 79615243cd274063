import type { MemoryRecord } from '@writ/contracts';
import type { Anomaly, Command, Decider } from '../shared/decider.js';
import { totalEvolve } from '../shared/decider.js';
import { emit } from '../shared/events.js';
import { commandNowMs, tryInstantMs } from '../shared/instant.js';
import { deletionForbidden, knowledgeUnknownCommand } from './deletion.js';
import { KnowledgeError } from './knowledge.errors.js';
import { assertionHoldsSecretByValue, entryHoldsSecretByValue } from './secret-by-reference.js';
import { judgeMemoryPromotion, type MemoryPromotionFacts, type MemoryPromotionRequest, type PromotionDegradeReason } from './memory-promotion.js';
import { MemoryEvent } from './memory.events.js';
import { trustGate } from './trust-tier.gates.js';

export type MemoryCommand =
  | Command<'promote-memory', { readonly request: MemoryPromotionRequest; readonly facts: MemoryPromotionFacts }>
  | Command<'invalidate-memory', { readonly invalidated_by: string; readonly reason: string; readonly superseded_by?: string }>
  | Command<'revoke-memory', { readonly revoked_by: string; readonly reason: string }>
  /** Marks the record expired when its invalidation policy is `at_expiry` and the instant has passed; otherwise nothing. */
  | Command<'expire-memory', Record<string, never>>;

export interface NoMemory {
  readonly status: 'initial';
  readonly anomalies: readonly Anomaly[];
}

/** A promotion that degraded: no record exists; a later, supported promotion of the same id may still succeed. */
export interface DegradedMemory {
  readonly status: 'degraded';
  readonly memory_id: string;
  readonly reasons: readonly PromotionDegradeReason[];
  readonly anomalies: readonly Anomaly[];
}

export interface MemoryState {
  readonly status: MemoryRecord['status'];
  readonly record: MemoryRecord;
  readonly anomalies: readonly Anomaly[];
}

export type MemoryRecordState = NoMemory | DegradedMemory | MemoryState;

export function initialState(): MemoryRecordState {
  return { status: 'initial', anomalies: [] };
}

function activeRecord(state: MemoryRecordState, what: string): MemoryRecord {
  if (state.status === 'initial' || state.status === 'degraded') throw new KnowledgeError('KNOWLEDGE_MEMORY_NOT_FOUND', `${what} needs a promoted memory record`);
  if (state.status !== 'active') {
    throw new KnowledgeError('KNOWLEDGE_MEMORY_NOT_ACTIVE', `memory ${state.record.memory_id} is ${state.status}: promote a new record that supersedes it`, { details: { status: state.status } });
  }
  return state.record;
}

export function decide(command: MemoryCommand, state: MemoryRecordState): MemoryEvent[] {
  const nowMs = commandNowMs(command);
  const at = command.metadata.now;
  switch (command.type) {
    case 'promote-memory': {
      if (state.status !== 'initial' && state.status !== 'degraded') {
        throw new KnowledgeError('KNOWLEDGE_MEMORY_EXISTS', `memory ${state.record.memory_id} exists: promote a new id that supersedes it`);
      }
      const judgment = judgeMemoryPromotion(command.data.request, command.data.facts, at, nowMs);
      if (judgment.outcome === 'promote') return emit(MemoryEvent, [{ type: 'memory.promoted', data: { record: judgment.record, at } }]);
      const { memory_id, task_id } = command.data.request;
      return emit(MemoryEvent, [{ type: 'memory.promotion_degraded', data: { memory_id, task_id, reasons: [...judgment.reasons], entry: judgment.entry, at } }]);
    }
    case 'invalidate-memory': {
      const record = activeRecord(state, 'invalidate-memory');
      const { invalidated_by, reason, superseded_by } = command.data;
      return emit(MemoryEvent, [{ type: 'memory.invalidated', data: { memory_id: record.memory_id, invalidated_by, reason, ...(superseded_by === undefined ? {} : { superseded_by }), at } }]);
    }
    case 'revoke-memory': {
      const record = activeRecord(state, 'revoke-memory');
      return emit(MemoryEvent, [{ type: 'memory.revoked', data: { memory_id: record.memory_id, revoked_by: command.data.revoked_by, reason: command.data.reason, at } }]);
    }
    case 'expire-memory': {
      const record = activeRecord(state, 'expire-memory');
      const policy = record.invalidation_policy;
      const expires = policy.mode === 'at_expiry' ? tryInstantMs(policy.expires_at) : undefined;
      if (expires === undefined || nowMs < expires) return [];
      return emit(MemoryEvent, [{ type: 'memory.expired', data: { memory_id: record.memory_id, at } }]);
    }
    default: {
      const type = (command as { type?: unknown }).type;
      deletionForbidden(type, 'a memory record', 'invalidate it (invalidate-memory), or promote a new record that supersedes it');
      return knowledgeUnknownCommand(type, 'the memory decider');
    }
  }
}

export const evolve = totalEvolve<MemoryRecordState, MemoryEvent>(MemoryEvent, (state, event) => {
  switch (event.type) {
    case 'memory.promoted': {
      const { record } = event.data;
      if (state.status !== 'initial' && state.status !== 'degraded') return undefined;
      if (state.status === 'degraded' && state.memory_id !== record.memory_id) return undefined;
      // The gate holds on replay too: an untrusted claim written as memory is not folded.
      if (record.status !== 'active' || !trustGate(record.trust_tier, 'promote_to_memory')) return undefined;
      if (assertionHoldsSecretByValue(record)) return undefined;
      return { status: 'active', record, anomalies: state.anomalies };
    }
    case 'memory.promotion_degraded':
      if (state.status !== 'initial' && state.status !== 'degraded') return undefined;
      if (entryHoldsSecretByValue(event.data.entry)) return undefined;
      return { status: 'degraded', memory_id: event.data.memory_id, reasons: event.data.reasons, anomalies: state.anomalies };
    default: {
      if (state.status !== 'active' || event.data.memory_id !== state.record.memory_id) return undefined;
      if (event.type === 'memory.invalidated') {
        return { ...state, status: 'invalidated', record: { ...state.record, status: 'invalidated', invalidated_at: event.data.at, invalidation_reason: event.data.reason } };
      }
      const status = event.type === 'memory.revoked' ? 'revoked' : 'expired';
      return { ...state, status, record: { ...state.record, status } };
    }
  }
});

export const memoryDecider: Decider<MemoryCommand, MemoryEvent, MemoryRecordState> = Object.freeze({ initialState, decide, evolve });
