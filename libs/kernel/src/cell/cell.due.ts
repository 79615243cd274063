import { instantMs } from '../shared/instant.js';
import type { CellState } from './cell.decider.js';

/**
 * A transition whose time has come, for an adapter's timers: it turns each
 * into the named command (adding its own actor id, and `archive_ref` for
 * archive-cell) at `now`. `due_at` is when it fell due.
 */
export type DueTransition =
  /** An invitation was not accepted in time (Lazarus 4.2: unused invitations auto-revoke). */
  | { readonly kind: 'invitation_expired'; readonly command: 'expire-invitation'; readonly participant_id: string; readonly due_at: string }
  /** The active window ran out: close as ttl_expired. */
  | { readonly kind: 'active_ttl_elapsed'; readonly command: 'close-cell'; readonly reason: 'ttl_expired'; readonly due_at: string }
  /** A running participant missed its heartbeat deadline: the cell goes DOWNED. */
  | { readonly kind: 'heartbeat_missed'; readonly command: 'mark-downed'; readonly participant_id: string; readonly due_at: string }
  /** Nobody revived a DOWNED cell within its active window: close as abandoned. */
  | { readonly kind: 'downed_ttl_elapsed'; readonly command: 'close-cell'; readonly reason: 'abandoned'; readonly due_at: string }
  /** The closed grace is over: scrub the filesystem, move the checkpoints to the archive tier, archive-cell. */
  | { readonly kind: 'grace_over'; readonly command: 'archive-cell'; readonly due_at: string }
  /** The archive retention is over: delete the archived objects from the artifact store, purge-archive. */
  | { readonly kind: 'retention_over'; readonly command: 'purge-archive'; readonly due_at: string };

type Pending = DueTransition & { readonly dueMs: number };

/** Every time-driven transition the state holds, due or not, in the order they should be applied. */
function pending(state: CellState): Pending[] {
  if (state.status === 'IDLE') return [];
  if (state.status === 'ARCHIVED') {
    const archived = state.archived;
    if (archived === null || archived.purged !== null) return [];
    return [{ kind: 'retention_over', command: 'purge-archive', due_at: archived.retention_ends_at, dueMs: instantMs(archived.retention_ends_at, 'deadline') }];
  }
  const out: Pending[] = [];
  const at = (instant: string) => instantMs(instant, 'deadline');
  if (state.status === 'CLOSED') {
    const grace = state.closed?.grace_ends_at;
    return grace === undefined ? [] : [{ kind: 'grace_over', command: 'archive-cell', due_at: grace, dueMs: at(grace) }];
  }
  for (const p of state.participants) {
    if (p.status === 'invited') out.push({ kind: 'invitation_expired', command: 'expire-invitation', participant_id: p.participant_id, due_at: p.expires_at, dueMs: at(p.expires_at) });
  }
  const expires = state.active_expires_at;
  if (state.status === 'ACTIVE' && expires !== null) {
    out.push({ kind: 'active_ttl_elapsed', command: 'close-cell', reason: 'ttl_expired', due_at: expires, dueMs: at(expires) });
    for (const r of state.running) out.push({ kind: 'heartbeat_missed', command: 'mark-downed', participant_id: r.participant_id, due_at: r.deadline, dueMs: at(r.deadline) });
  }
  if (state.status === 'DOWNED' && expires !== null) out.push({ kind: 'downed_ttl_elapsed', command: 'close-cell', reason: 'abandoned', due_at: expires, dueMs: at(expires) });
  return out;
}

const strip = ({ dueMs: _dueMs, ...due }: Pending): DueTransition => due as DueTransition;

/**
 * What is due at `now` (pure; the adapter owns the timers). Invitation
 * expiries come first, each on its own. Of the transitions that change an
 * ACTIVE cell only one is returned, since the first moves the cell on: the
 * active TTL closing it wins over a missed heartbeat, and of several missed
 * heartbeats the earliest. A CHECKPOINTING cell is left to finish: its TTL
 * and heartbeats fall due once it resumes.
 */
export function dueTransitions(state: CellState, now: string): readonly DueTransition[] {
  const nowMs = instantMs(now, 'now');
  const due = pending(state).filter((p) => p.dueMs <= nowMs);
  const invitations = due.filter((p) => p.kind === 'invitation_expired');
  const ttl = due.find((p) => p.kind !== 'invitation_expired' && p.kind !== 'heartbeat_missed');
  const heartbeat = due.filter((p) => p.kind === 'heartbeat_missed').sort((a, b) => a.dueMs - b.dueMs)[0];
  const transition = ttl ?? heartbeat;
  return [...invitations, ...(transition ? [transition] : [])].map(strip);
}

/** The earliest instant at which something falls due (possibly already past), or null: when to wake the timer. */
export function nextDueAt(state: CellState): string | null {
  const all = pending(state).sort((a, b) => a.dueMs - b.dueMs);
  return all[0]?.due_at ?? null;
}
