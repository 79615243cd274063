import { hasErrorCode } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { cmd, reach } from '../../test/cell-flow.js';
import { fold } from '../shared/decider.js';
import { cellDecider, CELL_COMMANDS, type CellCommand, type CellCommandType } from './cell.decider.js';
import { CellEvent, CELL_TRANSITIONS } from './cell.events.js';
import { CellStatus } from './cell.policy.js';

// One well-formed sample per command, so that only the state decides the refusal.
const SAMPLES: Readonly<Record<CellCommandType, CellCommand>> = {
  'invite-participant': cmd.invite(5, 'exec-9'),
  'accept-invitation': cmd.accept(5),
  'expire-invitation': cmd.expire(5),
  'prepare-cell': cmd.prepare(5),
  'activate-cell': cmd.activate(5),
  'begin-checkpoint': cmd.begin(5, 'cp-9'),
  'complete-checkpoint': cmd.complete(5),
  'record-heartbeat': cmd.beat(5),
  'mark-downed': cmd.down(5),
  'revive-cell': cmd.revive(5),
  'invite-substitute': cmd.substitute(5),
  'close-cell': cmd.close(5),
  'renew-active-ttl': cmd.renew(5),
  'resurrect-cell': cmd.resurrect(5),
  'archive-cell': cmd.archive(5),
  'purge-archive': cmd.purge(5),
};

const INVALID = CellStatus.options.flatMap((status) =>
  (Object.keys(CELL_COMMANDS) as CellCommandType[]).filter((type) => !CELL_COMMANDS[type].from.includes(status)).map((type) => [status, type] as const),
);

describe('cell transitions table (Lazarus 4.1)', () => {
  it('given the state machine, then it is exactly the seed table plus the resurrect edge CLOSED → ACTIVE, and ARCHIVED is terminal', () => {
    expect(CELL_TRANSITIONS).toEqual({
      IDLE: ['INVITED'],
      INVITED: ['PREPARING', 'CLOSED'],
      PREPARING: ['ACTIVE', 'CLOSED'],
      ACTIVE: ['CHECKPOINTING', 'CLOSED', 'DOWNED'],
      CHECKPOINTING: ['ACTIVE', 'CLOSED'],
      DOWNED: ['ACTIVE', 'CLOSED'],
      CLOSED: ['ARCHIVED', 'ACTIVE'],
      ARCHIVED: [],
    });
  });

  it('given every command rule, then each changing command leads along an edge of the machine', () => {
    for (const [type, rule] of Object.entries(CELL_COMMANDS)) {
      if (rule.to === null) continue;
      for (const from of rule.from) expect(CELL_TRANSITIONS[from], `${type} from ${from}`).toContain(rule.to);
    }
  });

  it('given the event types, then each is a dotted past-tense cell.* type, none declared twice', () => {
    const types = CellEvent.options.map((option) => option.shape.type.value);
    expect(new Set(types).size).toBe(types.length);
    for (const type of types) expect(type).toMatch(/^cell\.[a-z_]+$/);
  });

  it('given the table of invalid pairs, then it is not empty and covers every command in ARCHIVED but purge-archive (a fact about the archive, not a move)', () => {
    expect(INVALID.length).toBeGreaterThan(60);
    expect(INVALID.filter(([status]) => status === 'ARCHIVED').map(([, type]) => type)).toEqual(Object.keys(CELL_COMMANDS).filter((type) => type !== 'purge-archive'));
    expect(CELL_COMMANDS['purge-archive']).toEqual({ from: ['ARCHIVED'], to: null });
  });

  it.each(INVALID)('given a %s cell, when %s, then CELL_TRANSITION_INVALID naming from and to', (status, type) => {
    const state = fold(cellDecider, reach(status));
    expect(state.status).toBe(status);
    let thrown: unknown;
    try {
      cellDecider.decide(SAMPLES[type], state);
    } catch (error) {
      thrown = error;
    }
    expect(hasErrorCode(thrown, 'CELL_TRANSITION_INVALID'), `${status} × ${type}`).toBe(true);
    const details = (thrown as { details?: { from?: unknown; to?: unknown; command?: unknown } }).details;
    expect(details?.from).toBe(status);
    expect(details?.command).toBe(type);
    expect(CellStatus.safeParse(details?.to).success).toBe(true);
  });
});
