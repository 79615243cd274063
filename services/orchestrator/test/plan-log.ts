import type { EventDraft } from '@writ/contracts';
import type { ResolutionRefusal } from '@writ/runtime';
import { planTask, type Plan } from '../src/application/plan-task.js';
import { TaskView, type LoggedEvent } from '../src/application/task-view.js';
import { instant, logged, type TaskIds } from './task-fixtures.js';

export const NOW = instant(10);

/** A task log in memory: what the planner sees, and what it would append (commit). */
export class PlanLog {
  readonly drafts: EventDraft[] = [];
  /** Director decisions the authority check refused (what ResolutionAuthority would report), by event id. */
  readonly refused = new Map<string, ResolutionRefusal>();
  constructor(readonly ids: TaskIds) {}

  add(...drafts: EventDraft[]): this {
    this.drafts.push(...drafts);
    return this;
  }

  /** Plans the handling of the last event matching `which` (an event type, or a predicate), as one delivery would. */
  handle(which: string | ((event: LoggedEvent) => boolean), now = NOW): Plan {
    const events = logged(this.drafts);
    const matches = typeof which === 'string' ? (event: LoggedEvent) => event.event_type === which : which;
    const trigger = [...events].reverse().find(matches);
    if (trigger === undefined) throw new Error(`no ${typeof which === 'string' ? which : 'matching event'} in the log`);
    return planTask(TaskView.fold(this.ids.task_id, events, this.refused), { trigger, now, actorId: 'writ-orchestrator', executorPrincipalId: 'writ-executor' });
  }

  /** Handles the event and appends what the plan decided, as the handler does. */
  step(which: string | ((event: LoggedEvent) => boolean), now = NOW): Plan {
    const plan = this.handle(which, now);
    this.drafts.push(...plan.events);
    return plan;
  }

  types(): string[] {
    return this.drafts.map((d) => d.event_type);
  }

  view(): TaskView {
    return TaskView.fold(this.ids.task_id, logged(this.drafts), this.refused);
  }
}

/** The event of `type` about `attemptId` (envelope attempt_id). */
export const about =
  (type: string, attemptId: string) =>
  (event: LoggedEvent): boolean =>
    event.event_type === type && event.attempt_id === attemptId;

export const typesOf = (plan: Plan): string[] => plan.events.map((e) => e.event_type);
