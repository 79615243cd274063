import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { EventEnvelope } from '@writ/contracts';
import { cellDecider, type CellState } from '@writ/kernel';
import type { Connection } from '../cli-io.js';
import { attachEventLog } from '../event-log.js';

/** A cell as its stream (`<prefix>.cell.<cell_id>`) folds with the kernel's decider, and the events it folded. */
export interface FoldedCell {
  readonly cell_id: string;
  readonly state: CellState;
  readonly events: readonly EventEnvelope[];
}

/** Reads and folds one cell's stream (chain-verified by the event store). */
export async function readCell(nc: NatsConnection, conn: Connection, cellId: string): Promise<FoldedCell> {
  const store = await attachEventLog(nc, conn);
  const events = (await store.readEntity('cell', cellId)).map((stored) => stored.event);
  const state = events.reduce<CellState>((current, event) => cellDecider.evolve(current, { type: event.event_type, data: event.payload }), cellDecider.initialState());
  return { cell_id: cellId, state, events };
}

/** Every cell id the event log holds a stream for, sorted. */
export async function cellIds(nc: NatsConnection, conn: Connection): Promise<string[]> {
  await attachEventLog(nc, conn);
  const prefix = `${conn.eventsPrefix}.cell.`;
  const info = await (await jetstreamManager(nc)).streams.info(conn.eventsStream, { subjects_filter: `${prefix}*` });
  return Object.keys(info.state.subjects ?? {})
    .map((subject) => subject.slice(prefix.length))
    .sort();
}
