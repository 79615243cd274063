import { TASK_EVENT_EDGES, type TaskEventType } from '@writ/kernel';
import { idField, instant, occurredAt, text, type ProjectedEvent } from '../projected-event.js';
import { patch, type View } from './view.js';
import type { TaskRow } from '@writ/contracts';

export type { TaskRow };

function isTransition(type: string): type is Exclude<TaskEventType, 'task.created'> {
  return Object.hasOwn(TASK_EVENT_EDGES, type);
}

function fold(row: TaskRow | undefined, event: ProjectedEvent): TaskRow | undefined {
  const { envelope } = event;
  const at = occurredAt(event);
  const data = envelope.payload;
  if (row === undefined) {
    if (envelope.event_type !== 'task.created') return undefined;
    return {
      task_id: event.aggregate.id,
      title: text(data, 'title') ?? event.aggregate.id,
      goal: text(data, 'goal') ?? '',
      status: 'created',
      owner_principal_id: idField(data, 'owner_principal_id'),
      policy_profile: text(data, 'policy_profile_ref'),
      last_task_seq: envelope.task_seq,
      last_event_type: envelope.event_type,
      created_at: instant(data['at']) ?? at,
      updated_at: at,
    };
  }
  if (envelope.task_seq <= row.last_task_seq) return row;
  const changes: { -readonly [K in keyof TaskRow]?: TaskRow[K] } = { last_task_seq: envelope.task_seq, last_event_type: envelope.event_type };
  if (isTransition(envelope.event_type)) {
    // The kernel's edges: an event that is not valid from the current status leaves it (the kernel records it as an anomaly).
    const edge = TASK_EVENT_EDGES[envelope.event_type];
    if ((edge.from as readonly string[]).includes(row.status)) changes.status = edge.to;
  }
  return patch(row, changes, at);
}

export const tasksView: View<TaskRow> = {
  name: 'tasks',
  primaryKey: ['task_id'],
  published: true,
  topicId: (row) => row.task_id,
  locate: (event) => (event.aggregate.type === 'task' ? { task_id: event.aggregate.id } : undefined),
  fold,
};
