import { Controller, Inject, type Type } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { busOptions, type ConsumerOptions, type JetStreamContext } from '@writ/bus';
import { ProjectionError, isWritCoded } from '../application/projection-errors.js';
import { Projector } from '../application/projector.js';

/**
 * The projector's durable consumer of `<root>.evt.>` (concurrency 1: stream
 * order). The subject comes from config, so the class is made per app.
 * The bytes are not decoded here (`rawPayload`): whatever they are, the
 * projector asks the log what the message at that position is, so junk is
 * passed over and recorded (acked), never dead-lettered or retried.
 * Outcomes go through the bus's ack table: success → ack (also for a
 * skipped redelivery); `PROJECTION_DB_UNAVAILABLE` / `PROJECTION_LOG_UNAVAILABLE`
 * and any other code → redelivery with backoff. Nothing uncoded escapes (the
 * bus's exception filter is on the microservice: `startServiceApp`).
 */
/**
 * Events pulled ahead of the one being folded: one pull serves a burst (an action is ~15 events)
 * instead of one pull per event; the rest wait, kept ours, in stream order (the bus's `pullBatch`).
 */
export const PROJECTOR_PULL_BATCH = 64;

export function createProjectorListener(pattern: string, options: ConsumerOptions): Type {
  @Controller()
  class ProjectorListener {
    constructor(@Inject(Projector) private readonly projector: Projector) {}

    @EventPattern<string>(pattern, busOptions({ ...options, concurrency: 1, pullBatch: PROJECTOR_PULL_BATCH, rawPayload: true }))
    async onEvent(@Payload() _bytes: Uint8Array, @Ctx() context: JetStreamContext): Promise<void> {
      try {
        await this.projector.handle({ subject: context.subject, streamSeq: context.streamSequence, pending: context.getMessage().info.pending });
      } catch (error) {
        if (isWritCoded(error)) throw error;
        throw new ProjectionError('PROJECTION_INTERNAL', `projecting stream seq ${context.streamSequence} failed unexpectedly`, { cause: error });
      }
    }
  }
  return ProjectorListener;
}
