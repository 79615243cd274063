import { safeParseCapabilityGrantClaims, type CapabilityGrantClaims } from '@writ/contracts';
import type { Anomaly, Command, Decider } from '../shared/decider.js';
import { totalEvolve } from '../shared/decider.js';
import { emit } from '../shared/events.js';
import { commandNowMs, unknownCommand } from '../shared/instant.js';
import { checkGrantUse, type GrantUse } from './grant-use.js';
import { GrantError } from './grant.errors.js';
import { GrantEvent } from './grant.events.js';

/**
 * Commands of the CapabilityGrant aggregate. `claim-grant-use` is how an
 * executor claims one use through the log before any side effect: the first
 * claim of a `use_id` wins, a redelivered claim produces no event, and a claim
 * that fails `checkGrantUse` is recorded as `grant.refused`.
 */
export type GrantCommand =
  | Command<'issue-grant', { readonly claims: CapabilityGrantClaims }>
  | Command<'claim-grant-use', { readonly use_id: string; readonly use: Omit<GrantUse, 'now'> }>
  | Command<'revoke-grant', { readonly revoked_by: string; readonly reason: string }>
  /** A claimed use proven never to have started gives its use back (`grant.use_released`); only the executor proves it. */
  | Command<'release-grant-use', { readonly use_id: string; readonly reason_code: string; readonly reason: string }>;

export type GrantCommandType = GrantCommand['type'];

export interface NoGrant {
  readonly status: 'initial';
  readonly anomalies: readonly Anomaly[];
}

export interface ClaimedUse {
  readonly use_id: string;
  readonly use_no: number;
  readonly at: string;
  /** Set when the use was released (proven never started): it no longer counts against `max_uses`. */
  readonly released_at?: string;
}

/** Uses that count against `max_uses`: claimed and not released. */
export function consumedUses(state: GrantRecord): number {
  return state.uses.filter((use) => use.released_at === undefined).length;
}

/**
 * How one claimed use of a grant stands in the log: `not_run` (proven never started and
 * released), `in_flight` (claimed, nothing recorded yet: it may be running), or how its
 * execution ended (`completed`, `errored`, `unknown`: it ran, or may have).
 */
export type GrantUseSettlement = 'not_run' | 'in_flight' | 'completed' | 'errored' | 'unknown';

export interface SettledUse {
  readonly use_no: number;
  readonly settlement: GrantUseSettlement;
}

/** What an `execution.completed` under the grant says of one use. */
export interface UseCompletion {
  readonly use_no: number;
  readonly outcome: 'completed' | 'errored' | 'unknown' | 'not_run';
}

/**
 * Every claimed use of the grant, in use order, and how it stands, from the grant's fold and the
 * executions recorded under it. Only a released use is `not_run`: the executor releases a use in
 * the same append that records it not run, and only once it proved the use never started. A
 * completion saying `not_run` without that release is not taken at its word (`unknown`).
 */
export function useSettlements(state: GrantRecord, completions: readonly UseCompletion[]): SettledUse[] {
  return state.uses.map((use) => {
    if (use.released_at !== undefined) return { use_no: use.use_no, settlement: 'not_run' };
    const completion = completions.find((candidate) => candidate.use_no === use.use_no);
    if (completion === undefined) return { use_no: use.use_no, settlement: 'in_flight' };
    return { use_no: use.use_no, settlement: completion.outcome === 'not_run' ? 'unknown' : completion.outcome };
  });
}

export interface GrantRecord {
  readonly status: 'issued' | 'revoked';
  readonly grant_id: string;
  readonly claims: CapabilityGrantClaims;
  readonly issued_at: string;
  readonly uses: readonly ClaimedUse[];
  readonly refusals: number;
  readonly revoked_at: string | null;
  readonly anomalies: readonly Anomaly[];
}

export type GrantState = NoGrant | GrantRecord;

export function initialState(): GrantState {
  return { status: 'initial', anomalies: [] };
}

/** True when every allowed use was claimed. */
export function isGrantExhausted(state: GrantState): boolean {
  return state.status !== 'initial' && consumedUses(state) >= state.claims.max_uses;
}

export function decide(command: GrantCommand, state: GrantState): GrantEvent[] {
  const now = commandNowMs(command);
  const at = command.metadata.now;
  switch (command.type) {
    case 'issue-grant': {
      if (state.status !== 'initial') throw new GrantError('GRANT_ALREADY_ISSUED', `grant ${state.grant_id} already exists`);
      const parsed = safeParseCapabilityGrantClaims(command.data.claims);
      if (!parsed.ok) {
        throw new GrantError('GRANT_CLAIMS_INVALID', 'the grant claims are invalid', { cause: parsed.error, details: { issues: parsed.error.issues } });
      }
      const claims = parsed.value;
      if (claims.approval_ref === undefined && claims.policy_result_ref === undefined) {
        throw new GrantError('GRANT_AUTHORITY_MISSING', `grant ${claims.jti} cites neither a policy allow nor a granted approval`);
      }
      if (Math.floor(now / 1000) >= claims.exp) throw new GrantError('GRANT_EXPIRED', `grant ${claims.jti} would be expired at issue`, { details: { exp: claims.exp } });
      return emit(GrantEvent, [{ type: 'grant.issued', data: { claims, at } }]);
    }
    case 'claim-grant-use': {
      if (state.status === 'initial') throw new GrantError('GRANT_NOT_FOUND', 'claim-grant-use needs an issued grant');
      const { use_id: useId, use } = command.data;
      if (state.uses.some((claimed) => claimed.use_id === useId)) return [];
      if (state.status === 'revoked') {
        return emit(GrantEvent, [{ type: 'grant.refused', data: { use_id: useId, code: 'GRANT_REVOKED', message: `grant ${state.grant_id} was revoked`, at } }]);
      }
      const check = checkGrantUse(state.claims, { ...use, now: at }, consumedUses(state));
      if (!check.ok) return emit(GrantEvent, [{ type: 'grant.refused', data: { use_id: useId, code: check.code, message: check.message.slice(0, 4_096), at } }]);
      // Numbered after every claim, released ones included: a use number names one use of the grant for good.
      const useNo = state.uses.length + 1;
      return emit(GrantEvent, [
        { type: 'grant.use_claimed', data: { use_id: useId, use_no: useNo, task_id: use.task_id, attempt_id: use.attempt_id, action_class: use.action_class, at } },
      ]);
    }
    case 'release-grant-use': {
      if (state.status === 'initial') throw new GrantError('GRANT_NOT_FOUND', 'release-grant-use needs an issued grant');
      const claimed = state.uses.find((use) => use.use_id === command.data.use_id);
      if (claimed === undefined || claimed.released_at !== undefined) {
        throw new GrantError('GRANT_USE_NOT_RELEASABLE', `use ${command.data.use_id} of grant ${state.grant_id} is ${claimed === undefined ? 'not claimed' : 'already released'}`, {
          details: { use_id: command.data.use_id },
        });
      }
      // Released even when revoked or expired: the use never ran; whether a new one may is the claim's check.
      return emit(GrantEvent, [
        { type: 'grant.use_released', data: { use_id: claimed.use_id, use_no: claimed.use_no, reason_code: command.data.reason_code, reason: command.data.reason.slice(0, 4_096), at } },
      ]);
    }
    case 'revoke-grant':
      if (state.status === 'initial') throw new GrantError('GRANT_NOT_FOUND', 'revoke-grant needs an issued grant');
      if (state.status === 'revoked') throw new GrantError('GRANT_REVOKED', `grant ${state.grant_id} is already revoked`);
      return emit(GrantEvent, [{ type: 'grant.revoked', data: { ...command.data, at } }]);
    default:
      return unknownCommand((command as { type?: unknown }).type, 'the grant decider');
  }
}

export const evolve = totalEvolve<GrantState, GrantEvent>(GrantEvent, (state, event) => {
  if (event.type === 'grant.issued') {
    if (state.status !== 'initial') return undefined;
    const { claims, at } = event.data;
    return { status: 'issued', grant_id: claims.jti, claims, issued_at: at, uses: [], refusals: 0, revoked_at: null, anomalies: state.anomalies };
  }
  if (state.status === 'initial') return undefined;
  switch (event.type) {
    case 'grant.use_claimed':
      if (
        state.status !== 'issued' ||
        event.data.use_no !== state.uses.length + 1 ||
        consumedUses(state) >= state.claims.max_uses ||
        state.uses.some((use) => use.use_id === event.data.use_id)
      ) {
        return undefined;
      }
      return { ...state, uses: [...state.uses, { use_id: event.data.use_id, use_no: event.data.use_no, at: event.data.at }] };
    case 'grant.use_released': {
      const index = state.uses.findIndex((use) => use.use_id === event.data.use_id && use.use_no === event.data.use_no && use.released_at === undefined);
      if (index < 0) return undefined;
      const uses = state.uses.map((use, i) => (i === index ? { ...use, released_at: event.data.at } : use));
      return { ...state, uses };
    }
    case 'grant.refused':
      return { ...state, refusals: state.refusals + 1 };
    case 'grant.revoked':
      if (state.status !== 'issued') return undefined;
      return { ...state, status: 'revoked', revoked_at: event.data.at };
    default:
      return undefined;
  }
});

export const grantDecider: Decider<GrantCommand, GrantEvent, GrantState> = Object.freeze({ initialState, decide, evolve });
