import { workingStateDecider, type WorkingStateRecord } from '@writ/kernel';
import { redactSecrets } from '@writ/telemetry';
import { occurredAt, type ProjectedEvent } from '../projected-event.js';
import type { Folded, Locator, View } from './view.js';
import type { WorkingStateRow } from '@writ/contracts/projection-rows';

/**
 * The working state view (Hermit 13.6, 15.2): one row per task, folded by the
 * kernel's own `evolve` from the row as it stands, so the projection applies
 * exactly what the orchestrator's decider would: a revision out of order, past
 * the recorded limits or leaving a dangling ref is not applied, even when it
 * sits in the log. Secret-marked entries are kept by key and kind, their value
 * withheld (invariant 6); every other value passes the secret redaction.
 */
export type { WorkingStateRow };

type RowEntry = WorkingStateRow['entries'][number];

function locate(event: ProjectedEvent): Locator | undefined {
  if (event.aggregate.type !== 'task' || !event.envelope.event_type.startsWith('working_state.')) return undefined;
  return { task_id: event.aggregate.id };
}

/**
 * The kernel's record as this row holds it. A withheld value stays withheld, so a secret entry
 * counts with its marker's size here: for a task with secret entries this fold's size check is
 * looser than the orchestrator's, which decided with the real sizes (and alone may append them:
 * EVENT_AUTHORSHIP). Keys, kinds, refs and pins, which steer everything else, are all kept.
 */
function recordOf(row: WorkingStateRow): WorkingStateRecord {
  const entries = row.entries as unknown as WorkingStateRecord['entries'];
  return {
    status: 'open',
    task_id: row.task_id,
    limits: row.limits,
    revision: row.revision,
    entries,
    total_bytes: 0,
    last_request_id: row.last_request_id,
    updated_at: row.updated_at,
    anomalies: [],
  };
}

function shown(entry: WorkingStateRecord['entries'][number] | RowEntry): RowEntry {
  if ('value_withheld' in entry && entry.value_withheld === true) return entry;
  if (entry.sensitivity === 'secret') return { ...entry, value: null, value_withheld: true };
  return redactSecrets(entry) as RowEntry;
}

function fold(row: WorkingStateRow | undefined, event: ProjectedEvent): Folded<WorkingStateRow> | undefined {
  const { envelope } = event;
  // Opened once; nothing else applies before it.
  if ((envelope.event_type === 'working_state.opened') !== (row === undefined)) return row;
  const after = workingStateDecider.evolve(row === undefined ? workingStateDecider.initialState() : recordOf(row), { type: envelope.event_type, data: envelope.payload });
  // Not applied by the kernel (out of order, past the limits, forged, malformed): the row stays as it was.
  if (after.status !== 'open' || (row !== undefined && after.revision === row.revision)) return row;
  const at = occurredAt(event);
  const payload = envelope.payload;
  const by = typeof payload['revised_by'] === 'string' ? payload['revised_by'] : typeof payload['compacted_by'] === 'string' ? payload['compacted_by'] : null;
  return {
    task_id: event.aggregate.id,
    revision: after.revision,
    limits: after.limits,
    entries: after.entries.map(shown),
    entry_count: after.entries.length,
    last_request_id: after.last_request_id,
    last_revised_by: row === undefined ? null : (by ?? row.last_revised_by),
    compactions: (row?.compactions ?? 0) + (envelope.event_type === 'working_state.compacted' ? 1 : 0),
    opened_at: row?.opened_at ?? at,
    updated_at: at,
  };
}

export const workingStatesView: View<WorkingStateRow> = {
  name: 'working_states',
  primaryKey: ['task_id'],
  published: true,
  topicId: (row) => row.task_id,
  locate,
  fold,
};
