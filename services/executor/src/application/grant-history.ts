import { CapabilityGrantClaims, type EventEnvelope } from '@writ/contracts';
import { fold, grantDecider, type GrantState } from '@writ/kernel';

/** A use of the grant as the log recorded its claim. */
export interface ClaimRecord {
  readonly use_id: string;
  readonly use_no: number;
  /** When the claim was decided (payload `at`). */
  readonly at: string;
  readonly event_id: string;
  /** The executor that claimed it (`grant.use_claimed.executor_id`), when the claim names one. */
  readonly executor_id?: string;
  /** The host it was claimed on (`grant.use_claimed.host_id`), when the claim names one. */
  readonly host_id?: string;
}

/** What the task stream says about one grant and one use of it. */
export interface GrantHistory {
  /** task_seq of the stream's last event: the `expectedSeq` of the next append. */
  readonly head: number;
  /** The claims `grant.issued` recorded, when the log holds it. */
  readonly recorded: CapabilityGrantClaims | undefined;
  /** The grant's own events (`grant.*` about this grant), as kernel `{ type, data }`, in order. */
  readonly events: readonly { readonly type: string; readonly data: unknown }[];
  /** The claim of this use, if any. */
  readonly claim: ClaimRecord | undefined;
  /** The refusal of this use, if any. */
  readonly refusal: { readonly code: string; readonly event_id: string } | undefined;
  /** `execution.completed` of this use (grant id and use number), if any. */
  readonly completion: { readonly outcome: string; readonly event_id: string } | undefined;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

/**
 * Whether a task-stream event is about `grantId`. Grant events carry the grant
 * as their entity (`entity_type: grant`, `entity_id: <grant_id>`); `grant.issued`
 * is also recognised by its claims' `jti`, whoever filed it.
 */
function isAboutGrant(event: EventEnvelope, grantId: string): boolean {
  if (!event.event_type.startsWith('grant.')) return false;
  if (event.entity_id === grantId) return true;
  return event.event_type === 'grant.issued' && record(record(event.payload)['claims'])['jti'] === grantId;
}

/** Reads what the log holds about a grant and one use of it. Pure. */
export function readGrantHistory(stream: readonly EventEnvelope[], grantId: string, useId: string): GrantHistory {
  let recorded: CapabilityGrantClaims | undefined;
  let claim: ClaimRecord | undefined;
  let refusal: GrantHistory['refusal'];
  const events: { type: string; data: unknown }[] = [];
  for (const event of stream) {
    if (!isAboutGrant(event, grantId)) continue;
    const payload = record(event.payload);
    events.push({ type: event.event_type, data: event.payload });
    if (event.event_type === 'grant.issued' && recorded === undefined) {
      const parsed = CapabilityGrantClaims.safeParse(payload['claims']);
      if (parsed.success) recorded = parsed.data;
    } else if (event.event_type === 'grant.use_claimed' && payload['use_id'] === useId && claim === undefined) {
      const useNo = payload['use_no'];
      const at = payload['at'];
      if (typeof useNo === 'number' && Number.isInteger(useNo) && useNo >= 1 && typeof at === 'string') {
        const executorId = payload['executor_id'];
        const hostId = payload['host_id'];
        claim = {
          use_id: useId,
          use_no: useNo,
          at,
          event_id: event.event_id,
          ...(typeof executorId === 'string' ? { executor_id: executorId } : {}),
          ...(typeof hostId === 'string' ? { host_id: hostId } : {}),
        };
      }
    } else if (event.event_type === 'grant.refused' && payload['use_id'] === useId && refusal === undefined) {
      refusal = { code: String(payload['code']), event_id: event.event_id };
    }
  }
  let completion: GrantHistory['completion'];
  if (claim !== undefined) {
    const found = stream.find((event) => {
      if (event.event_type !== 'execution.completed') return false;
      const payload = record(event.payload);
      return payload['grant_id'] === grantId && payload['use_no'] === claim.use_no;
    });
    if (found !== undefined) completion = { outcome: String(record(found.payload)['outcome']), event_id: found.event_id };
  }
  return { head: stream.at(-1)?.task_seq ?? 0, recorded, events, claim, refusal, completion };
}

/**
 * The kernel's grant state for a verified grant: the log's own `grant.issued`
 * when it holds one, else the verified claims as if issued (the signature is
 * the authority), then every later grant event (claims, refusals, revocation).
 */
export function grantStateFor(history: GrantHistory, claims: CapabilityGrantClaims): GrantState {
  if (history.recorded !== undefined) return fold(grantDecider, history.events);
  const issued = { type: 'grant.issued', data: { claims, at: new Date(claims.iat * 1000).toISOString() } };
  return fold(grantDecider, [issued, ...history.events.filter((event) => event.type !== 'grant.issued')]);
}

/**
 * The secret handles the task's cell has held: those of every grant of the task with a
 * use claimed (a use may have resolved them into the cell, and an action may have left
 * their values in the workspace). Pure; from the task stream as read.
 */
export function cellSecretHandles(stream: readonly EventEnvelope[]): string[] {
  const used = new Set(stream.filter((event) => event.event_type === 'grant.use_claimed').map((event) => event.entity_id));
  const handles = new Set<string>();
  for (const event of stream) {
    if (event.event_type !== 'grant.issued') continue;
    const parsed = CapabilityGrantClaims.safeParse(record(event.payload)['claims']);
    if (!parsed.success || !(used.has(parsed.data.jti) || used.has(event.entity_id))) continue;
    for (const handle of parsed.data.constraints?.secret_handles ?? []) handles.add(handle);
  }
  return [...handles].sort();
}
