import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '@writ/telemetry';
import type { UpdatePublisher } from '../../application/ports.js';
import type { RowChange } from '../../application/project-event.js';
import { VIEWS } from '../../application/views/index.js';

const encoder = new TextEncoder();

/**
 * Publishes each changed row as JSON on `<root>.proj.<view>.<id>` (core NATS,
 * never captured by a stream). Called after the commit; a publish that fails
 * is logged and dropped: the row is in Postgres, and readers that missed an
 * update re-read it over HTTP.
 */
export class NatsUpdatePublisher implements UpdatePublisher {
  constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
    private readonly logger: Logger,
  ) {}

  publish(changes: readonly RowChange[]): void {
    for (const change of changes) {
      const view = VIEWS[change.view] as { published: boolean; topicId: (row: unknown) => string };
      if (!view.published) continue;
      const subject = `${this.prefix}.${change.view}.${view.topicId(change.row)}`;
      try {
        this.nc.publish(subject, encoder.encode(JSON.stringify(change.row)));
      } catch (error) {
        this.logger.warn({ err: error, subject }, 'projection update not published');
      }
    }
  }
}
