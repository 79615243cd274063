import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { readReplicas, replaceReplica, streamPeers, type ReplicaReading } from '@writ/runtime';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { connectNats } from '../event-log.js';

/** How many times a repaired stream is compared again (2 s apart) while its fresh copy catches up. */
const REPAIR_CHECKS = 5;

/** How many of a replicated stream's last messages are compared across its peers. */
export const REPLICA_CHECK_TAIL = 1_000;

export interface StreamsReplicasOptions {
  /** Streams to check (default: the event log and the bus streams). */
  readonly stream?: readonly string[];
  /** Replace each diverged peer's copy with the quorum's. */
  readonly repair?: boolean;
  readonly tail?: number;
  readonly json?: boolean;
}

/** What one stream's peers hold, and what was done about a diverged one. */
export interface StreamReplicasReport {
  readonly stream: string;
  readonly replicas: number;
  readonly peers: readonly string[];
  readonly compared: { readonly from_seq: number; readonly to_seq: number } | null;
  readonly unreached: readonly string[];
  readonly diverged: readonly { readonly peer: string; readonly seq: number; readonly holds: string | null; readonly others_hold: string | null }[];
  readonly repaired: readonly string[];
  readonly error?: string;
}

/** The event log and the bus streams, as `writ doctor` names them. */
export function writStreams(conn: Connection): string[] {
  return [conn.eventsStream, 'WRIT_INGRESS', 'WRIT_COMMANDS', 'WRIT_DLQ'];
}

/** One stream's replicas compared (reads only). */
export async function streamReplicas(nc: NatsConnection, stream: string, tail = REPLICA_CHECK_TAIL): Promise<StreamReplicasReport> {
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  const info = await jsm.streams.info(stream).catch((error: unknown) => {
    if (/stream not found/i.test(String((error as Error).message))) {
      throw new CliError('CLI_USAGE', `no stream ${stream} on this server: name one of the log and bus streams (WRIT_EVENTS, WRIT_INGRESS, WRIT_COMMANDS, WRIT_DLQ unless configured otherwise)`, { cause: error });
    }
    throw error;
  });
  const peers = streamPeers(info);
  const base = { stream, replicas: info.config.num_replicas, peers, repaired: [] as string[] };
  if (peers.length < 2) return { ...base, compared: null, unreached: [], diverged: [] };
  let reading: ReplicaReading;
  try {
    reading = await readReplicas(nc, stream, { tail });
  } catch (error) {
    return { ...base, compared: null, unreached: peers, diverged: [], error: (error as Error).message };
  }
  return {
    ...base,
    compared: { from_seq: reading.agreement.fromSeq, to_seq: reading.agreement.toSeq },
    unreached: reading.unreached,
    diverged: reading.agreement.diverged.map((peer) => ({ peer: peer.peer, seq: peer.seq, holds: peer.found?.subject ?? null, others_hold: peer.expected?.subject ?? null })),
  };
}

/** The report in one line: what agrees, or where a peer diverged. */
export function describeReplicas(report: StreamReplicasReport): string {
  if (report.error !== undefined) return `cannot compare its peers: ${report.error}`;
  if (report.compared === null) return report.peers.length === 0 ? 'one server, no cluster: nothing to compare' : `one replica (${report.peers.join(', ')}): nothing to compare`;
  if (report.compared.to_seq < Math.max(1, report.compared.from_seq)) return `${report.peers.join(', ')}: no messages to compare yet`;
  const range = `stream seq ${report.compared.from_seq}–${report.compared.to_seq}`;
  const missed = report.unreached.length > 0 ? `; not reached: ${report.unreached.join(', ')}` : '';
  if (report.diverged.length === 0) return `${report.peers.join(', ')} hold the same messages (${range})${missed}`;
  const where = report.diverged.map((peer) => `${peer.peer} from seq ${peer.seq} (holds ${peer.holds ?? 'nothing'} where the others hold ${peer.others_hold ?? 'nothing'})`).join('; ');
  return `replicas diverged: ${where}${missed}`;
}

/**
 * `writ streams replicas [--repair]`: whether every peer of each replicated
 * stream holds the same last messages. A peer that does not serves its own
 * log to every consumer it leads, and the chains its readers check break
 * (quarantines, a stalled projection, dead-lettered events) though the
 * quorum's copy is whole: nats-server 2.9 leaves such a copy on a stream
 * leader cut off by a partition that kept a write no quorum accepted
 * (docs/operations.md). `--repair` replaces each diverged peer's copy with the
 * quorum's (`replaceReplica`); the projections folded from it are then
 * rebuilt with `writ projections rebuild --force`. Exit 1 while any diverged.
 */
export async function streamsReplicas(options: StreamsReplicasOptions, conn: Connection, io: CliIo): Promise<StreamReplicasReport[]> {
  const nc = await connectNats(conn);
  const reports: StreamReplicasReport[] = [];
  try {
    for (const stream of options.stream !== undefined && options.stream.length > 0 ? options.stream : writStreams(conn)) {
      let report = await streamReplicas(nc, stream, options.tail);
      if (options.repair === true && report.diverged.length > 0) {
        const repaired: string[] = [];
        for (const { peer } of report.diverged) {
          await replaceReplica(nc, stream, peer, { onProgress: (line) => io.stderr(line) });
          repaired.push(peer);
        }
        // The fresh copy may still be catching up: compare again a few times before calling the repair failed.
        for (let check = 1; ; check++) {
          report = { ...(await streamReplicas(nc, stream, options.tail)), repaired };
          if ((report.error === undefined && report.diverged.length === 0 && report.unreached.length === 0) || check === REPAIR_CHECKS) break;
          await new Promise((resolve) => setTimeout(resolve, 2_000));
        }
      }
      reports.push(report);
      if (options.json !== true) io.stdout(`${report.diverged.length > 0 || report.error !== undefined ? 'FAIL' : 'ok  '}  ${stream.padEnd(14)} ${describeReplicas(report)}${report.repaired.length > 0 ? ` (replaced: ${report.repaired.join(', ')})` : ''}`);
    }
  } finally {
    await nc.drain().catch(() => undefined);
  }
  if (options.json === true) io.stdout(JSON.stringify({ streams: reports }));
  const diverged = reports.filter((report) => report.diverged.length > 0 || report.error !== undefined);
  if (diverged.length > 0) {
    const next = options.repair === true ? 'read the nats-server logs of the peers named' : "writ streams replicas --repair replaces the diverged copy with the quorum's; then writ projections rebuild --force";
    throw new CliError('CLI_REPLICAS_DIVERGED', `${diverged.map((report) => `${report.stream}: ${describeReplicas(report)}`).join('; ')}; next: ${next}`, {
      details: { streams: diverged.map((report) => report.stream) },
    });
  }
  if (reports.some((report) => report.repaired.length > 0) && options.json !== true) io.stdout('replaced copies catch up from the leader; rebuild the views folded while they served readers: writ projections rebuild --force');
  return reports;
}
