import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cmd } from '../../test/cell-flow.js';
import { at, codeOf } from '../../test/decider-spec.js';
import { evolveIsTotal, modelCheck } from '../../test/model.js';
import { archivedObjects, cellDecider, type CellCommand, type CellRecord, type CellState } from './cell.decider.js';
import { dueTransitions, type DueTransition } from './cell.due.js';
import type { CellErrorCode } from './cell.errors.js';
import { CELL_TRANSITIONS, type CellEvent } from './cell.events.js';
import { cellPermissions } from './cell.roles.js';

// Short TTLs so that random gaps cross them: invitation 60 s, active 600 s (max 1 800 s), grace 300 s, archive retention 600 s, heartbeat 30 s.
const POLICY = {
  invitation_ttl_ms: 60_000,
  active_ttl_ms: 600_000,
  active_ttl_max_ms: 1_800_000,
  closed_grace_ms: 300_000,
  archive_retention_ms: 600_000,
  heartbeat_timeout_ms: 30_000,
  allow_guest: true,
  allow_substitute: true,
};
const CODES: readonly string[] = [
  'KERNEL_COMMAND_INVALID',
  ...([
    'CELL_TRANSITION_INVALID',
    'CELL_ID_INVALID',
    'CELL_ID_MISMATCH',
    'CELL_POLICY_INVALID',
    'CELL_NOT_DIRECTOR',
    'CELL_PARTICIPANT_EXISTS',
    'CELL_PARTICIPANT_UNKNOWN',
    'CELL_ROLE_INVALID',
    'CELL_ROLE_NOT_ENABLED',
    'CELL_ISOLATION_INSUFFICIENT',
    'CELL_INVITATION_NOT_PENDING',
    'CELL_INVITATION_EXPIRED',
    'CELL_INVITATION_NOT_EXPIRED',
    'CELL_NO_RUNNING_PARTICIPANT',
    'CELL_PARTICIPANT_NOT_RUNNING',
    'CELL_HEARTBEAT_NOT_MISSED',
    'CELL_REVIVER_INVALID',
    'CELL_CHECKPOINT_EXISTS',
    'CELL_CHECKPOINT_MISMATCH',
    'CELL_CLOSE_REASON_INVALID',
    'CELL_TTL_NOT_ELAPSED',
    'CELL_ACTIVE_TTL_EXPIRED',
    'CELL_TTL_CAP_EXCEEDED',
    'CELL_GRACE_EXPIRED',
    'CELL_GRACE_NOT_OVER',
    'CELL_RETENTION_NOT_OVER',
    'CELL_ARCHIVE_PURGED',
    'CELL_PURGE_OBJECTS_MISMATCH',
  ] satisfies CellErrorCode[]),
];

const who = fc.constantFrom('exec-1', 'exec-2', 'guest-1', 'sub-1', 'obs-1', 'dir-1');
const item: fc.Arbitrary<(s: number) => CellCommand> = fc.oneof(
  fc.tuple(who, fc.constantFrom('executor', 'observer', 'guest', 'director') as fc.Arbitrary<'executor' | 'observer' | 'guest' | 'director'>, fc.constantFrom('dir-1', 'exec-1')).map(
    ([id, role, by]) => (s: number) => cmd.invite(s, id, role, { invited_by: by }),
  ),
  who.map((id) => (s: number) => cmd.accept(s, id)),
  who.map((id) => (s: number) => cmd.expire(s, id)),
  fc.constantFrom('docker', 'process' as const).map((backend) => (s: number) => cmd.prepare(s, backend)),
  fc.constant((s: number) => cmd.activate(s)),
  fc.tuple(fc.constantFrom('cp-1', 'cp-2', 'cp-3'), fc.boolean(), fc.constantFrom('dir-1', 'exec-1')).map(([id, final, by]) => (s: number) => cmd.begin(s, id, final, by)),
  fc.constantFrom('cp-1', 'cp-2', 'cp-3').map((id) => (s: number) => cmd.complete(s, id)),
  who.map((id) => (s: number) => cmd.beat(s, id)),
  who.map((id) => (s: number) => cmd.down(s, id)),
  who.map((id) => (s: number) => cmd.revive(s, id)),
  fc.constantFrom('sub-1', 'exec-2').map((id) => (s: number) => cmd.substitute(s, id)),
  fc.tuple(fc.constantFrom('explicit', 'ttl_expired', 'abandoned', 'failed') as fc.Arbitrary<'explicit'>, fc.constantFrom('dir-1', 'writ-executor')).map(
    ([reason, by]) => (s: number) => cmd.close(s, reason, by),
  ),
  fc.option(fc.constantFrom(60_000, 600_000, 1_200_000), { nil: undefined }).map((extend) => (s: number) => cmd.renew(s, extend)),
  fc.constantFrom('dir-1', 'exec-1').map((by) => (s: number) => cmd.resurrect(s, by)),
  fc.constant((s: number) => cmd.archive(s)),
  // The archived objects of a generated cell: none (no content-hash ref), or the one tarball every `complete` stores.
  fc.constantFrom([] as string[], ['a'.repeat(64)]).map((deleted) => (s: number) => cmd.purge(s, deleted)),
);
// Sequences start from a fresh invitation, a spawned cell (ACTIVE at 3 s), a closed one (at 4 s), a downed one (its heartbeat missed, at 40 s)
// or an archived one (closed at 4 s, archived after its 300 s grace; for depth 5 the sequence starts past its 600 s retention),
// so that the deep states are reached on every run, not only on the runs whose random gaps happen to cross the heartbeat timeout.
const commands = fc
  .tuple(
    fc.constantFrom(0, 1, 2, 3, 4, 5),
    fc.array(item, { maxLength: 40 }),
    fc.array(fc.oneof({ arbitrary: fc.integer({ min: 0, max: 20 }), weight: 5 }, { arbitrary: fc.integer({ min: 20, max: 700 }), weight: 1 }), { minLength: 40, maxLength: 40 }),
  )
  .map(([depth, items, gaps]) => {
    let t = depth === 3 ? 40 : depth === 4 ? 305 : depth === 5 ? 905 : depth + 2;
    const start = [
      cmd.invite(0, 'exec-1', 'executor', { policy: POLICY }),
      ...(depth > 0 ? [cmd.accept(1), cmd.prepare(2), cmd.activate(3)] : []),
      ...(depth === 2 || depth >= 4 ? [cmd.close(4)] : []),
      ...(depth === 3 ? [cmd.down(40, 'exec-1')] : []),
      ...(depth >= 4 ? [cmd.archive(305)] : []),
    ];
    return [...start, ...items.map((build, i) => build((t += gaps[i] ?? 0)))];
  });

/** The command an adapter dispatches for a due transition, acting as `writ-executor`. */
function dueCommand(due: DueTransition, s: number, state: CellState): CellCommand {
  switch (due.kind) {
    case 'invitation_expired':
      return cmd.expire(s, due.participant_id);
    case 'heartbeat_missed':
      return cmd.down(s, due.participant_id);
    case 'active_ttl_elapsed':
      return cmd.close(s, 'ttl_expired', 'writ-executor');
    case 'downed_ttl_elapsed':
      return cmd.close(s, 'abandoned', 'writ-executor');
    case 'grace_over':
      return cmd.archive(s);
    case 'retention_over':
      return cmd.purge(s, archivedObjects(state as CellRecord));
  }
}

const secondsOf = (command: CellCommand) => (Date.parse(command.metadata.now) - Date.parse(at(0))) / 1000;

describe('cell decider model', () => {
  it('property: any command sequence moves only along the machine\'s edges, keeps roles fixed and runners legitimate, and ARCHIVED is terminal (a purge changes its archive, never its status)', () => {
    const seen = new Set<string>();
    let purges = 0;
    modelCheck(cellDecider, commands, CODES, (step) => {
      const { before, after } = step;
      seen.add(after.status);
      // Every event, one at a time, is an edge of the machine (or no move).
      let state: CellState = before;
      for (const event of (step.events ?? []) as CellEvent[]) {
        const next = cellDecider.evolve(state, event);
        if (next.status !== state.status) expect(CELL_TRANSITIONS[state.status], `${state.status} → ${next.status} by ${event.type}`).toContain(next.status);
        state = next;
      }
      if (before.status === 'ARCHIVED') {
        if (step.command.type === 'purge-archive') {
          expect(after.status).toBe('ARCHIVED');
          if (step.code === null) {
            purges += 1;
            expect((after as CellRecord).archived?.purged).not.toBeNull();
          }
          else expect(['CELL_RETENTION_NOT_OVER', 'CELL_ARCHIVE_PURGED', 'CELL_PURGE_OBJECTS_MISMATCH']).toContain(step.code);
        } else {
          expect(step.code).toBe('CELL_TRANSITION_INVALID');
          expect(after).toBe(before);
        }
      }
      if (after.status === 'IDLE' || before.status === 'IDLE') return;
      for (const p of before.participants) expect(after.participants.find((q) => q.participant_id === p.participant_id)?.role).toBe(p.role);
      for (const r of after.running) {
        const seat = after.participants.find((p) => p.participant_id === r.participant_id);
        expect(seat?.status).toBe('accepted');
        expect(cellPermissions(seat!.role).runs).toBe(true);
      }
      if (after.status === 'DOWNED') expect(after.downed).not.toBeNull();
      if (after.status === 'CLOSED') expect(after.closed).not.toBeNull();
      if (after.active_expires_at !== null && after.activated_at !== null) {
        expect(Date.parse(after.active_expires_at) - Date.parse(after.activated_at)).toBeLessThanOrEqual(POLICY.active_ttl_max_ms);
      }
    });
    // The generator is only worth its runs if it reaches every state.
    expect([...seen].sort()).toEqual(['ACTIVE', 'ARCHIVED', 'CHECKPOINTING', 'CLOSED', 'DOWNED', 'INVITED', 'PREPARING']);
    expect(purges, 'some archives are purged').toBeGreaterThan(0);
  });

  it('property: every due transition, dispatched in order at its time, is accepted', () => {
    modelCheck(cellDecider, commands, CODES, (step) => {
      const s = secondsOf(step.command) + 1;
      let state = step.after;
      for (const due of dueTransitions(state, at(s))) {
        const command = dueCommand(due, s, state);
        expect(codeOf(() => cellDecider.decide(command, state)), `${due.kind} in ${state.status}`).toBeUndefined();
        state = cellDecider.decide(command, state).reduce<CellState>((acc, e) => cellDecider.evolve(acc, e), state);
      }
    }, 150);
  });

  it('property: evolve is total', () => {
    evolveIsTotal(cellDecider, fc.constant([]));
  });
});
