import { Controller, Inject, type Type } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { busOptions, type ConsumerOptions, type JetStreamContext } from '@writ/bus';
import { ProjectionError, isWritCoded } from '../application/projection-errors.js';
import { Projector } from '../application/projector.js';

/**
 * The projector's durable consumer of `<root>.evt.>`. Up to
 * `PROJECTOR_PULL_BATCH` deliveries are handed to the projector at once: it
 * orders them by stream sequence and applies those that arrived together in
 * one transaction (group commit), so each handler settles, and its message
 * is acked, only once its event is committed. The subject comes from config,
 * so the class is made per app.
 * The bytes are not decoded here (`rawPayload`): whatever they are, the
 * projector asks the log what the message at that position is (the log
 * vouches for the delivered bytes or reads its own), so junk is passed over
 * and recorded (acked), never dead-lettered or retried.
 * Outcomes go through the bus's ack table: success → ack (also for a
 * skipped redelivery); `PROJECTION_DB_UNAVAILABLE` / `PROJECTION_LOG_UNAVAILABLE`
 * and any other code → redelivery with backoff. Nothing uncoded escapes (the
 * bus's exception filter is on the microservice: `startServiceApp`).
 */
/**
 * Events pulled and handed over at once: one pull serves a burst (an action is ~15 events) instead of
 * one pull per event, and the projector commits what waits together.
 */
export const PROJECTOR_PULL_BATCH = 256;

export function createProjectorListener(pattern: string, options: ConsumerOptions): Type {
  @Controller()
  class ProjectorListener {
    constructor(@Inject(Projector) private readonly projector: Projector) {}

    @EventPattern<string>(pattern, busOptions({ ...options, concurrency: PROJECTOR_PULL_BATCH, pullBatch: PROJECTOR_PULL_BATCH, rawPayload: true }))
    async onEvent(@Payload() bytes: Uint8Array, @Ctx() context: JetStreamContext): Promise<void> {
      try {
        await this.projector.handle({ subject: context.subject, streamSeq: context.streamSequence, pending: context.getMessage().info.pending, data: bytes });
      } catch (error) {
        if (isWritCoded(error)) throw error;
        throw new ProjectionError('PROJECTION_INTERNAL', `projecting stream seq ${context.streamSequence} failed unexpectedly`, { cause: error });
      }
    }
  }
  return ProjectorListener;
}
