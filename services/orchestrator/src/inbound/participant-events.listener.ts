import { Controller, Inject, type Type } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { busOptions, type ConsumerOptions, type JetStreamContext } from '@writ/bus';
import { TaskSerializer } from '@writ/runtime';
import type { Logger } from '@writ/telemetry';
import { LastWillBeliefsHandler } from '../application/last-will-beliefs.handler.js';

/**
 * How the bus treats a failure of the Last Will handler: a stale read of the participant
 * stream is retried soon; anything else (a task that kept changing, the artifact bucket) is
 * retried with backoff, then dead-lettered (the bus defaults).
 */
export const PARTICIPANT_EVENT_ERROR_ACTIONS = Object.freeze({
  ORCHESTRATOR_LOG_BEHIND: 'retry-soon',
  EVENTSTORE_CHAIN_BROKEN: 'dead-letter',
} as const);

/** The participant events that may land a Last Will (`LastWillBeliefsHandler`); the rest are acked unread. */
const LAST_WILL_TRIGGERS = new Set(['participant.retired', 'participant.call_recorded']);

/**
 * The JetStream listener of participants' events (`<events>.participant.>`, its own durable):
 * where the message is stored → the Last Will handler, one participant's events in arrival order.
 */
export function createParticipantEventsListener(pattern: string, consumer: ConsumerOptions, logger: Logger): Type {
  @Controller()
  class ParticipantEventsListener {
    readonly #participants = new TaskSerializer();

    constructor(@Inject(LastWillBeliefsHandler) private readonly handler: LastWillBeliefsHandler) {}

    @EventPattern<string>(pattern, busOptions({ ...consumer, errorActions: { ...PARTICIPANT_EVENT_ERROR_ACTIONS, ...consumer.errorActions } }))
    async onParticipantEvent(@Payload() body: unknown, @Ctx() context: JetStreamContext): Promise<void> {
      // The delivered message is the stored one, so its type says whether it can matter (most are heartbeats):
      // those that cannot are acked unread. Whether it is a valid event of the chain is the log's to judge.
      if (!LAST_WILL_TRIGGERS.has(String((body as { event_type?: unknown } | null)?.event_type))) return;
      const delivery = { subject: context.subject, streamSeq: context.streamSequence };
      const outcome = await this.#participants.run(context.subject, () => this.handler.handle(delivery));
      for (const landed of outcome.landed) {
        logger.info({ seed_id: outcome.seed_id, trigger: outcome.trigger, task_id: landed.task_id, beliefs: landed.beliefs.length, refused: landed.refused }, 'Last Will beliefs landed');
      }
    }
  }
  return ParticipantEventsListener;
}
