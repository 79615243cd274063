import { Controller, Inject, type Type } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { busOptions, type ConsumerOptions, type JetStreamContext } from '@writ/bus';
import { EventEnvelope, parseContract } from '@writ/contracts';
import { TaskSerializer } from '@writ/runtime';
import { TaskEventHandler } from '../application/task-event.handler.js';

/**
 * How the bus treats each failure of the task-event handler (STYLE.md: one
 * mapping table per adapter). Codes not listed use the bus defaults:
 * CONTRACT_INVALID dead-lettered at once, EVENTSTORE_CONFLICT retried soon
 * (re-read, re-decide), anything else retried with backoff, then dead-lettered.
 */
export const TASK_EVENT_ERROR_ACTIONS = Object.freeze({
  ORCHESTRATOR_LOG_BEHIND: 'retry-soon',
  ORCHESTRATOR_TASK_UNKNOWN: 'dead-letter',
  ORCHESTRATOR_GRANT_JWS_MISSING: 'dead-letter',
  EVENTSTORE_CHAIN_BROKEN: 'dead-letter',
} as const);

/**
 * The JetStream listener of every task's events. Made per app because its
 * subject comes from configuration (`<root>.evt.task.>`): parse the envelope
 * with the contract → the handler → ack (the bus acks on return, and maps a
 * thrown code through the table above).
 *
 * Up to the consumer's `concurrency` events are handled at once. Events of
 * one task wait for each other in arrival order (`TaskSerializer`): two at
 * once would read the same head and one would lose the append guard
 * (`EVENTSTORE_CONFLICT`) only to re-read and re-decide.
 */
export function createTaskEventsListener(pattern: string, consumer: ConsumerOptions): Type {
  @Controller()
  class TaskEventsListener {
    readonly #tasks = new TaskSerializer();

    constructor(@Inject(TaskEventHandler) private readonly handler: TaskEventHandler) {}

    @EventPattern<string>(pattern, busOptions({ ...consumer, errorActions: { ...TASK_EVENT_ERROR_ACTIONS, ...consumer.errorActions } }))
    async onTaskEvent(@Payload() body: unknown, @Ctx() context: JetStreamContext): Promise<void> {
      const event = parseContract('EventEnvelope', EventEnvelope, body);
      await this.#tasks.run(event.task_id, () => this.handler.handle(event, context.streamSequence));
    }
  }
  return TaskEventsListener;
}
