import { APPROVAL_TERMINAL_STATES, type ApprovalStatus } from '@writ/contracts';
import type { Anomaly, Command, Decider } from '../shared/decider.js';
import { totalEvolve } from '../shared/decider.js';
import { emit } from '../shared/events.js';
import { commandNowMs, instantMs, unknownCommand } from '../shared/instant.js';
import { ApprovalError } from './approval.errors.js';
import { ApprovalEvent, type Fingerprints, type InvalidationCause, type StateWitness } from './approval.events.js';

/** The one role that may resolve approvals. */
export const APPROVER_ROLE = 'director';

/**
 * The policy profile version the approval's policy result was evaluated under, and the
 * profile's current version (Hermit 19.6). Null on either side is unknown: a result
 * missing from the log, or a profile no longer stored. Anything but two equal
 * versions is policy drift.
 */
export interface PolicyVersions {
  readonly evaluated: string | null;
  readonly current: string | null;
}

/** Who resolves: an authenticated principal and its roles (the approval service looks them up). */
export interface Resolver {
  readonly principal_id: string;
  readonly roles: readonly string[];
}

/** Commands of the Approval aggregate (Hermit 8.9, 12.4, 16.7, 16.8). */
export type ApprovalCommand =
  | Command<
      'request-approval',
      {
        readonly approval_id: string;
        readonly task_id: string;
        readonly step_id: string;
        readonly attempt_id: string;
        readonly approval_type: string;
        readonly requested_action_ref: string;
        readonly approval_packet_ref: string;
        readonly requested_by: string;
        readonly policy_result_ref?: string;
        readonly expires_at: string;
        readonly state_witness?: StateWitness;
      }
    >
  | Command<
      'grant-approval',
      {
        readonly resolver: Resolver;
        readonly note?: string;
        /** The director's signed resolution (compact JWS) the decision answers: recorded on the event it yields. */
        readonly resolution_jws?: string;
        readonly current_fingerprints?: Fingerprints;
        /** Required when the approval answers a policy result (Hermit 19.6): its profile version then and now. */
        readonly policy_versions?: PolicyVersions;
      }
    >
  | Command<'deny-approval', { readonly resolver: Resolver; readonly note?: string; readonly resolution_jws?: string }>
  | Command<'expire-approval', { readonly resolved_by: string }>
  | Command<'cancel-approval', { readonly resolved_by: string; readonly reason: string }>
  | Command<'invalidate-approval', { readonly resolved_by: string; readonly cause: InvalidationCause; readonly note?: string }>
  /**
   * A resolution event in the log failed its authority check (the refuser checked the director's
   * signature, role and packet itself): recorded, and it resolves nothing.
   */
  | Command<'refuse-resolution', { readonly resolution_event_id: string; readonly code: string; readonly reason: string; readonly refused_by: string }>;

export type ApprovalCommandType = ApprovalCommand['type'];

export interface NoApproval {
  readonly status: 'initial';
  readonly anomalies: readonly Anomaly[];
}

export interface ApprovalRecord {
  readonly status: ApprovalStatus;
  readonly approval_id: string;
  readonly task_id: string;
  readonly step_id: string;
  readonly attempt_id: string;
  readonly approval_type: string;
  readonly requested_action_ref: string;
  readonly approval_packet_ref: string;
  readonly requested_by: string;
  readonly policy_result_ref: string | null;
  readonly requested_at: string;
  readonly expires_at: string;
  readonly state_witness: StateWitness | null;
  readonly resolved_at: string | null;
  readonly resolved_by: string | null;
  readonly resolution_note: string | null;
  readonly witness_validated: boolean;
  readonly invalidation: { readonly cause: InvalidationCause; readonly drifted_resources: readonly string[] } | null;
  readonly anomalies: readonly Anomaly[];
}

export type ApprovalState = NoApproval | ApprovalRecord;

export function initialState(): ApprovalState {
  return { status: 'initial', anomalies: [] };
}

/** Resolvers that may never resolve this approval: without the director role, or the requester itself. */
function requireResolver(state: ApprovalRecord, resolver: Resolver): void {
  if (!resolver.roles.includes(APPROVER_ROLE)) {
    throw new ApprovalError('APPROVAL_RESOLVER_NOT_ALLOWED', `${resolver.principal_id} lacks the ${APPROVER_ROLE} role`, {
      details: { principal_id: resolver.principal_id, reason: 'role_missing' },
    });
  }
  if (resolver.principal_id === state.requested_by) {
    throw new ApprovalError('APPROVAL_RESOLVER_NOT_ALLOWED', `${resolver.principal_id} requested this action and may not resolve it`, {
      details: { principal_id: resolver.principal_id, reason: 'self_resolution' },
    });
  }
}

/** The director's signed resolution, when the command brings one: recorded on the event. */
function signedBy(jws: string | undefined): { resolution_jws?: string } {
  return jws === undefined ? {} : { resolution_jws: jws };
}

function requirePending(state: ApprovalRecord, command: string): void {
  if (state.status !== 'pending') {
    throw new ApprovalError('APPROVAL_NOT_PENDING', `approval ${state.approval_id} is ${state.status}; ${command} is not allowed`, {
      details: { approval_id: state.approval_id, status: state.status },
    });
  }
}

/** Resources whose fingerprint differs between capture and now (missing on either side counts). */
export function driftedResources(captured: Fingerprints, current: Fingerprints): string[] {
  const keys = new Set([...Object.keys(captured), ...Object.keys(current)]);
  return [...keys].filter((key) => !Object.hasOwn(captured, key) || !Object.hasOwn(current, key) || captured[key] !== current[key]).sort();
}

function policyDriftNote(versions: PolicyVersions): string {
  if (versions.evaluated === null) return 'the policy result this approval answers is not in the log; policy must evaluate again';
  if (versions.current === null) return `the policy profile evaluated at version ${versions.evaluated} is no longer stored; policy must evaluate again`;
  return `the policy profile changed from version ${versions.evaluated} to ${versions.current} since evaluation; policy must evaluate again`;
}

function decideFor(command: ApprovalCommand, state: ApprovalRecord, now: number): ApprovalEvent[] {
  const at = command.metadata.now;
  const expired = now >= instantMs(state.expires_at, 'expires_at');
  switch (command.type) {
    case 'request-approval':
      throw new ApprovalError('APPROVAL_ALREADY_REQUESTED', `approval ${state.approval_id} already exists`);
    case 'grant-approval': {
      requirePending(state, command.type);
      const { resolver } = command.data;
      requireResolver(state, resolver);
      const signed = signedBy(command.data.resolution_jws);
      if (expired) return [{ type: 'approval.expired', data: { resolved_by: resolver.principal_id, ...signed, at } }];
      // Policy before the witness: a changed policy re-enters evaluation whatever the workspace looks like.
      if (state.policy_result_ref !== null) {
        const versions = command.data.policy_versions;
        if (versions === undefined) {
          throw new ApprovalError('APPROVAL_POLICY_UNCHECKED', `approval ${state.approval_id} answers ${state.policy_result_ref}; its policy profile version must be compared before a grant`);
        }
        if (versions.evaluated === null || versions.current === null || versions.evaluated !== versions.current) {
          const note = policyDriftNote(versions);
          return [{ type: 'approval.invalidated', data: { resolved_by: resolver.principal_id, cause: 'policy_drift', note, ...signed, at } }];
        }
      }
      const witness = state.state_witness;
      if (witness !== null) {
        if (witness.expires_at !== undefined && now >= instantMs(witness.expires_at, 'state_witness.expires_at')) {
          return [{ type: 'approval.invalidated', data: { resolved_by: resolver.principal_id, cause: 'witness_expired', ...signed, at } }];
        }
        const current = command.data.current_fingerprints;
        if (current === undefined) {
          throw new ApprovalError('APPROVAL_WITNESS_MISSING', `approval ${state.approval_id} needs current fingerprints to revalidate its state witness`);
        }
        const drifted = driftedResources(witness.fingerprints, current);
        if (drifted.length > 0) {
          return [{ type: 'approval.invalidated', data: { resolved_by: resolver.principal_id, cause: 'witness_drift', drifted_resources: drifted, ...signed, at } }];
        }
      }
      const note = command.data.note === undefined ? {} : { note: command.data.note };
      return [{ type: 'approval.granted', data: { resolved_by: resolver.principal_id, ...note, witness_validated: witness !== null, ...signed, at } }];
    }
    case 'deny-approval': {
      requirePending(state, command.type);
      const { resolver } = command.data;
      requireResolver(state, resolver);
      const signed = signedBy(command.data.resolution_jws);
      if (expired) return [{ type: 'approval.expired', data: { resolved_by: resolver.principal_id, ...signed, at } }];
      const note = command.data.note === undefined ? {} : { note: command.data.note };
      return [{ type: 'approval.denied', data: { resolved_by: resolver.principal_id, ...note, ...signed, at } }];
    }
    case 'expire-approval':
      requirePending(state, command.type);
      if (!expired) {
        throw new ApprovalError('APPROVAL_NOT_EXPIRED', `approval ${state.approval_id} expires at ${state.expires_at}`, { details: { expires_at: state.expires_at } });
      }
      return [{ type: 'approval.expired', data: { resolved_by: command.data.resolved_by, at } }];
    case 'cancel-approval':
      requirePending(state, command.type);
      return [{ type: 'approval.cancelled', data: { resolved_by: command.data.resolved_by, reason: command.data.reason, at } }];
    case 'invalidate-approval': {
      if (APPROVAL_TERMINAL_STATES.includes(state.status)) {
        throw new ApprovalError('APPROVAL_TERMINAL', `approval ${state.approval_id} is ${state.status}`, { details: { status: state.status } });
      }
      const note = command.data.note === undefined ? {} : { note: command.data.note };
      return [{ type: 'approval.invalidated', data: { resolved_by: command.data.resolved_by, cause: command.data.cause, ...note, at } }];
    }
    case 'refuse-resolution': {
      const { resolution_event_id, code, reason, refused_by } = command.data;
      return [{ type: 'approval.resolution_refused', data: { resolution_event_id, code, reason, refused_by, at } }];
    }
    default:
      return unknownCommand((command as { type?: unknown }).type, 'the approval decider');
  }
}

const COMMAND_TYPES: readonly string[] = ['request-approval', 'grant-approval', 'deny-approval', 'expire-approval', 'cancel-approval', 'invalidate-approval', 'refuse-resolution'];

export function decide(command: ApprovalCommand, state: ApprovalState): ApprovalEvent[] {
  const now = commandNowMs(command);
  if (!COMMAND_TYPES.includes(command.type)) return unknownCommand((command as { type?: unknown }).type, 'the approval decider');
  if (state.status === 'initial') {
    if (command.type !== 'request-approval') throw new ApprovalError('APPROVAL_NOT_FOUND', `${command.type} needs a requested approval`);
    if (instantMs(command.data.expires_at, 'data.expires_at') <= now) {
      throw new ApprovalError('APPROVAL_EXPIRY_INVALID', 'an approval must expire after it is requested', { details: { expires_at: command.data.expires_at } });
    }
    return emit(ApprovalEvent, [{ type: 'approval.requested', data: { ...command.data, at: command.metadata.now } }]);
  }
  return emit(ApprovalEvent, decideFor(command, state, now));
}

export const evolve = totalEvolve<ApprovalState, ApprovalEvent>(ApprovalEvent, (state, event) => {
  if (event.type === 'approval.requested') {
    if (state.status !== 'initial') return undefined;
    const { at, policy_result_ref, state_witness, ...rest } = event.data;
    return {
      ...rest,
      status: 'pending',
      policy_result_ref: policy_result_ref ?? null,
      state_witness: state_witness ?? null,
      requested_at: at,
      resolved_at: null,
      resolved_by: null,
      resolution_note: null,
      witness_validated: false,
      invalidation: null,
      anomalies: state.anomalies,
    };
  }
  if (state.status === 'initial') return undefined;
  // A refused resolution changes nothing: the refusal is on the record, the approval stays as it was.
  if (event.type === 'approval.resolution_refused') return state;
  const resolved = { resolved_at: event.data.at, resolved_by: event.data.resolved_by };
  switch (event.type) {
    case 'approval.granted':
      if (state.status !== 'pending') return undefined;
      return { ...state, ...resolved, status: 'granted', resolution_note: event.data.note ?? null, witness_validated: event.data.witness_validated };
    case 'approval.denied':
      if (state.status !== 'pending') return undefined;
      return { ...state, ...resolved, status: 'denied', resolution_note: event.data.note ?? null };
    case 'approval.expired':
      if (state.status !== 'pending') return undefined;
      return { ...state, ...resolved, status: 'expired', resolution_note: 'expired before resolution' };
    case 'approval.cancelled':
      if (state.status !== 'pending') return undefined;
      return { ...state, ...resolved, status: 'cancelled', resolution_note: event.data.reason };
    case 'approval.invalidated':
      if (state.status !== 'pending' && state.status !== 'granted') return undefined;
      return {
        ...state,
        ...resolved,
        status: 'invalidated',
        resolution_note: event.data.note ?? event.data.cause,
        invalidation: { cause: event.data.cause, drifted_resources: event.data.drifted_resources ?? [] },
      };
    default:
      return undefined;
  }
});

export const approvalDecider: Decider<ApprovalCommand, ApprovalEvent, ApprovalState> = Object.freeze({ initialState, decide, evolve });
