import { jetstreamManager } from '@nats-io/jetstream';
import { ensureEventStream, parseEventStoreConfig } from '@writ/eventstore';
import { ensureWritStreams, loadConfig, serviceEnvironment, serviceStreams, serviceSubjects } from '@writ/runtime';
import type { CliIo, Connection } from '../cli-io.js';
import { connectNats } from '../event-log.js';

export interface StreamsEnsureOptions {
  readonly json?: boolean;
}

/**
 * `writ streams ensure`, as the operator: creates the event log and the bus
 * streams, or brings their limits to the configured ones (the same variables
 * and defaults the services read: WRIT_STREAM_REPLICAS, WRIT_EVENTS_MAX_BYTES,
 * WRIT_BUS_MAX_BYTES, ...). A service's credential may create a missing stream
 * but never reconfigure one, so after an upgrade that changes a stream's
 * limits the operator runs this before the services start
 * (`scripts/writ-up.sh` does). Settings that cannot change in place are refused.
 */
export async function streamsEnsure(options: StreamsEnsureOptions, conn: Connection, io: CliIo): Promise<{ events: string; bus: readonly string[] }> {
  const env = loadConfig('writ streams ensure', serviceEnvironment({ httpPort: 0 }), { ...io.env, WRIT_NATS_URL: conn.natsUrl });
  const streams = serviceStreams(env);
  const subjects = serviceSubjects(env);
  const nc = await connectNats(conn);
  try {
    const jsm = await jetstreamManager(nc);
    const events = await ensureEventStream(
      jsm,
      parseEventStoreConfig({ stream: streams.events, subjectPrefix: streams.eventsPrefix, maxBytes: streams.eventsMaxBytes, replicas: streams.replicas }),
      { reconfigure: true },
    );
    await ensureWritStreams(jsm, {
      names: { ingress: streams.ingress, commands: streams.commands, dlq: streams.dlq },
      subjects: subjects.streams,
      maxBytes: streams.busMaxBytes,
      replicas: streams.replicas,
    });
    const result = { events: `${events.stream} ${events.action}${events.updatedFields.length > 0 ? ` (${events.updatedFields.join(', ')})` : ''}`, bus: [streams.ingress, streams.commands, streams.dlq] };
    io.stdout(options.json === true ? JSON.stringify(result) : `event log ${result.events}; bus streams ${result.bus.join(', ')} as configured (replicas ${streams.replicas})`);
    return result;
  } finally {
    await nc.drain().catch(() => undefined);
  }
}
