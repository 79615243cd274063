import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { EventStore } from '@writ/eventstore';
import { connectBus, serviceAuthorship } from '@writ/runtime';
import { CliError } from './cli-errors.js';
import type { Connection } from './cli-io.js';

export async function connectNats(conn: Connection): Promise<NatsConnection> {
  try {
    return await connectBus({ servers: conn.natsUrl, name: 'writ-cli', timeout: 5_000 }, conn.env);
  } catch (cause) {
    throw new CliError('CLI_NATS_UNREACHABLE', `cannot reach NATS at ${conn.natsUrl} (set --nats or WRIT_NATS_URL)`, { cause });
  }
}

/**
 * The event log as it is deployed. An operator tool must not reconfigure it:
 * `EventStore.open` brings a stream to the settings it is given, so they are
 * read from the stream itself (nothing changes), and a missing stream is an
 * error rather than a new log created with defaults. Authors are checked as
 * the deployment's services check them (`WRIT_AUTHORSHIP=enforce`): an event
 * whose seal proves no service allowed to write it shows as quarantined
 * (`QUARANTINE_AUTHOR_UNPROVEN`), never as the task's event.
 */
export async function attachEventLog(nc: NatsConnection, conn: Connection): Promise<EventStore> {
  const jsm = await jetstreamManager(nc);
  let info;
  try {
    info = await jsm.streams.info(conn.eventsStream);
  } catch (cause) {
    if (cause instanceof JetStreamApiError && cause.code === JetStreamApiCodes.StreamNotFound) {
      throw new CliError('CLI_EVENT_LOG_MISSING', `there is no event log ${conn.eventsStream} on ${conn.natsUrl}: start the stack first (or set WRIT_EVENTS_STREAM)`, { cause });
    }
    throw cause;
  }
  const c = info.config;
  const { store: authorship } = serviceAuthorship(conn.env);
  return EventStore.open(nc, {
    stream: conn.eventsStream,
    subjectPrefix: conn.eventsPrefix,
    storage: c.storage === 'memory' ? 'memory' : 'file',
    replicas: c.num_replicas,
    duplicateWindowMs: Math.round((c.duplicate_window ?? 120e9) / 1e6),
    maxBytes: c.max_bytes,
    maxMsgs: c.max_msgs,
    maxMsgSize: c.max_msg_size,
  }, authorship === undefined ? {} : { authorship });
}
