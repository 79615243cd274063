import type { CliIo, Connection } from '../cli-io.js';
import { connectNats } from '../event-log.js';
import { cell, table } from '../format.js';
import { cellIds, readCell } from './cell-common.js';

/** One cell as `writ cell list` shows it. */
export interface CellListEntry {
  readonly cell_id: string;
  readonly status: string;
  readonly director: string | null;
  readonly participants: number;
  readonly events: number;
  readonly last_at: string | null;
}

/** `writ cell list [--json]`: every cell of the event log (its stream `writ.evt.cell.<cell_id>`), its status, director, seats and last event. */
export async function cellList(options: { json?: boolean }, conn: Connection, io: CliIo): Promise<CellListEntry[]> {
  const nc = await connectNats(conn);
  const entries: CellListEntry[] = [];
  try {
    for (const cellId of await cellIds(nc, conn)) {
      const { state, events } = await readCell(nc, conn, cellId);
      entries.push({
        cell_id: cellId,
        status: state.status,
        director: state.status === 'IDLE' ? null : state.director_id,
        participants: state.status === 'IDLE' ? 0 : state.participants.length,
        events: events.length,
        last_at: events.at(-1)?.occurred_at ?? null,
      });
    }
  } finally {
    await nc.drain().catch(() => undefined);
  }
  if (options.json === true) {
    io.stdout(JSON.stringify(entries));
  } else {
    const rows = entries.map((entry) => [cell(entry.cell_id), entry.status, cell(entry.director), String(entry.participants), String(entry.events), cell(entry.last_at)]);
    for (const line of table(['CELL', 'STATUS', 'DIRECTOR', 'SEATS', 'EVENTS', 'LAST EVENT AT'], rows)) io.stdout(line);
  }
  return entries;
}
