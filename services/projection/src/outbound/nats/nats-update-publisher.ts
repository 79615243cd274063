import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { PROJECTION_HEADERS, PROJECTION_ROW_SCHEMA_VERSIONS, projectionMsgId } from '@writ/contracts/projection-rows';
import type { Logger } from '@writ/telemetry';
import type { UpdatePublisher } from '../../application/ports.js';
import type { PublishedChange } from '../../application/published-change.js';

const encoder = new TextEncoder();

/**
 * Publishes each changed row as JSON on `<root>.proj.<view>.<id>` (core NATS,
 * never captured by a stream), with the headers of the dashboard contract
 * (`PROJECTION_HEADERS`: message id, view, schema version, row version, the
 * view's previous version and how many rows the version changed). Called
 * after the commit; a publish that fails is logged and dropped: the row is in
 * Postgres, and a reader that missed it sees the gap in `Writ-Prev-Version`
 * and re-reads `GET /v1/changes?since=`.
 */
export class NatsUpdatePublisher implements UpdatePublisher {
  constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
    private readonly logger: Logger,
  ) {}

  publish(changes: readonly PublishedChange[]): void {
    for (const change of changes) {
      const subject = `${this.prefix}.${change.view}.${change.id}`;
      try {
        this.nc.publish(subject, encoder.encode(JSON.stringify(change.row)), { headers: projectionHeaders(change) });
      } catch (error) {
        this.logger.warn({ err: error, subject }, 'projection update not published');
      }
    }
  }
}

/** The NATS headers of one published change. */
export function projectionHeaders(change: PublishedChange) {
  const headers = natsHeaders();
  headers.set(PROJECTION_HEADERS.msgId, projectionMsgId(change.view, change.id, change.rowVersion));
  headers.set(PROJECTION_HEADERS.view, change.view);
  headers.set(PROJECTION_HEADERS.schemaVersion, String(PROJECTION_ROW_SCHEMA_VERSIONS[change.view]));
  headers.set(PROJECTION_HEADERS.rowVersion, String(change.rowVersion));
  headers.set(PROJECTION_HEADERS.prevVersion, String(change.prevVersion));
  headers.set(PROJECTION_HEADERS.versionRows, String(change.versionRows));
  return headers;
}
