import type { EventEnvelope } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import { planContextPacks, type ContextPackPlan } from './context-packs.js';
import { planTask, type CommandName } from './plan-task.js';
import { OrchestratorError } from './orchestrator.errors.js';
import type { Clock, CommandPublisher, ContextPackStore, ResolutionRefusals, TaskLog } from './ports.js';
import { TaskView } from './task-view.js';

export interface TaskEventHandlerOptions {
  readonly log: TaskLog;
  readonly commands: CommandPublisher;
  readonly clock: Clock;
  /** Checks every director's decision in the task before the fold acts on it (DESIGN invariant 9). */
  readonly authority: ResolutionRefusals;
  /** `actor_id` of the events the orchestrator appends. */
  readonly actorId: string;
  /** The principal grants are issued to (the executor fleet). */
  readonly executorPrincipalId: string;
  /** Where each attempt's context pack is stored (the shared artifact bucket); without it no pack is compiled. */
  readonly packs?: ContextPackStore;
  readonly logger?: Logger;
}

/** What handling one event did; returned for logs and tests. */
export interface TaskEventOutcome {
  readonly task_id: string;
  readonly trigger: string;
  /** Event types appended, in order (empty when the log already reflected everything). */
  readonly appended: readonly string[];
  /** Commands published, with whether the bus had already stored them. */
  readonly published: ReadonlyArray<{ readonly command: CommandName; readonly msgId: string; readonly duplicate: boolean }>;
}

/**
 * Handles one event of a task stream: load (read the task, check the authority of every
 * director's decision in it, and fold it without the refused ones) →
 * decide (`planTask`, the kernel's deciders) → append (guarded by the length
 * read: a lost race throws EVENTSTORE_CONFLICT, and the redelivery re-reads
 * and finds the work done) → publish the command the event calls for, with a
 * msg id derived from its cause.
 */
export class TaskEventHandler {
  constructor(private readonly options: TaskEventHandlerOptions) {}

  /**
   * `streamSeq`: where the log stores the trigger, when a consumer delivered it; the task is then read
   * through it (`TaskLog.readThrough`: no request when this process already holds it), else in full.
   */
  async handle(trigger: EventEnvelope, streamSeq?: number): Promise<TaskEventOutcome> {
    const { log, commands, clock } = this.options;
    const taskId = trigger.task_id;
    const events = streamSeq === undefined ? await log.read(taskId) : await log.readThrough(taskId, streamSeq, trigger.hash);
    const headSeq = events.length === 0 ? 0 : (events[events.length - 1] as EventEnvelope).task_seq;
    if (trigger.task_seq > headSeq) {
      throw new OrchestratorError('ORCHESTRATOR_LOG_BEHIND', `task ${taskId} reads up to ${headSeq}, but event ${trigger.task_seq} was delivered`, {
        details: { task_id: taskId, head_seq: headSeq, event_seq: trigger.task_seq },
      });
    }
    // The stored event is the one decided on (the delivered copy is only a pointer to it); a delivered
    // envelope that is not the chain's event at its task_seq (a late rival, a copy with other bytes) is quarantined: nothing to do.
    const stored = events.find((event) => event.task_seq === trigger.task_seq);
    if (stored === undefined || stored.hash !== trigger.hash) {
      this.options.logger?.warn({ task_id: taskId, task_seq: trigger.task_seq, event_id: trigger.event_id }, 'delivered event is not the chain event at its task_seq: quarantined, not handled');
      return { task_id: taskId, trigger: trigger.event_type, appended: [], published: [] };
    }
    // A director's decision counts only when its recorded signature holds up: the others are folded as absent.
    const refused = await this.options.authority.refusals(events);
    const view = TaskView.fold(taskId, events, refused);
    const now = clock().toISOString();
    const plan = planTask(view, {
      trigger: stored,
      now,
      actorId: this.options.actorId,
      executorPrincipalId: this.options.executorPrincipalId,
    });
    // Each attempt's context pack, stored before its event is drafted; a store failure holds back only the pack's event.
    const packs: ContextPackPlan = this.options.packs === undefined ? { drafts: [] } : await planContextPacks(events, this.options.packs, { taskId, now, actorId: this.options.actorId, causationId: stored.event_id });
    const drafts = [...plan.events, ...packs.drafts];
    if (drafts.length > 0) await log.append(taskId, drafts, headSeq);
    const published: Array<{ command: CommandName; msgId: string; duplicate: boolean }> = [];
    for (const command of plan.commands) {
      const result = await commands.publish(command.command, command.payload, { msgId: command.msgId, causationId: stored.event_id, correlationId: taskId });
      published.push({ command: command.command, msgId: command.msgId, duplicate: result.duplicate });
    }
    const outcome: TaskEventOutcome = { task_id: taskId, trigger: stored.event_type, appended: drafts.map((event) => event.event_type), published };
    if (outcome.appended.length > 0 || published.length > 0) {
      this.options.logger?.debug({ ...outcome, task_seq: stored.task_seq, ignored: view.ignored.length }, 'task event handled');
    }
    if (refused.has(stored.event_id)) {
      const refusal = refused.get(stored.event_id);
      this.options.logger?.warn({ task_id: taskId, event_id: stored.event_id, event_type: stored.event_type, code: refusal?.code, reason: refusal?.message }, 'resolution refused: it resolves nothing');
    }
    // Thrown last, once the governed path's events and commands are out: the redelivery stores the pack and appends its event.
    if (packs.failure !== undefined) throw packs.failure;
    return outcome;
  }
}
