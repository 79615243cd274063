import { Id, parseContract } from '@writ/contracts';
import type { CliIo } from '../cli-io.js';
import { cell, fields, table } from '../format.js';
import type { WritApi } from '../http-api.js';
import { TaskView, type TaskEventView } from '../projection-api.js';
import { eventDetail, summarizeSteps } from '../task-summary.js';

/** Timeline page size asked of the API (its maximum), and how many pages one command reads at most. */
const PAGE = 1_000;
const MAX_PAGES = 100;

/**
 * `writ task <task_id> [--json]`: the task's status, its steps and attempts,
 * and its whole event timeline (`GET /v1/tasks/<id>`, every page). `--json`
 * prints the task document with all the pages' events in one `events` list.
 */
export async function taskShow(id: string, options: { readonly json?: boolean }, api: WritApi, io: CliIo): Promise<TaskView> {
  const taskId = parseContract('task id', Id, id);
  const path = `/v1/tasks/${encodeURIComponent(taskId)}`;
  const first = await api.get(path, TaskView, { limit: PAGE });
  const events: TaskEventView[] = [...first.events];
  let next = first.next_after;
  for (let pages = 1; next !== null && pages < MAX_PAGES; pages++) {
    const page = await api.get(path, TaskView, { after: next, limit: PAGE });
    events.push(...page.events);
    next = page.next_after;
  }
  const view: TaskView = { ...first, events, next_after: next };
  if (options.json === true) {
    io.stdout(JSON.stringify(view));
    return view;
  }

  io.stdout(`task ${cell(view.task_id)}: ${cell(view.status)}`);
  for (const line of fields([
    ['title', view.title],
    ['goal', view.goal],
    ['owner', view.owner_principal_id],
    ['policy profile', view.policy_profile],
    ['created', view.created_at],
    ['updated', view.updated_at],
  ])) {
    io.stdout(line);
  }
  const steps = summarizeSteps(events);
  io.stdout(steps.length === 0 ? 'steps: none' : 'steps:');
  for (const step of steps) {
    io.stdout(`  step ${cell(step.step_id)}: ${cell(step.status)}`);
    for (const attempt of step.attempts) io.stdout(`    attempt ${cell(attempt.attempt_id)}: ${cell(attempt.status)} (last ${cell(attempt.last_event_type)})`);
  }
  io.stdout(`timeline (${events.length} event${events.length === 1 ? '' : 's'}${next === null ? '' : `, more after task_seq ${next}`}):`);
  const rows = events.map((event) => [
    String(event.task_seq),
    cell(event.occurred_at),
    cell(event.event_type),
    cell(`${event.actor_type}:${event.actor_id}`),
    detailOf(event),
  ]);
  for (const line of table(['SEQ', 'OCCURRED_AT', 'EVENT', 'ACTOR', 'DETAIL'], rows)) io.stdout(`  ${line}`);
  return view;
}

function detailOf(event: TaskEventView): string {
  const detail = eventDetail(event);
  return detail === '' ? '' : cell(detail, 100);
}
