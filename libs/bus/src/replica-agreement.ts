import { createHash } from 'node:crypto';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JsMsg, type StreamInfo } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { BusError } from './bus-errors.js';

/** One stored message as one replica holds it: where, on which subject, and what (digest of id header and payload). */
export interface ReplicaMessage {
  readonly seq: number;
  readonly subject: string;
  readonly digest: string;
}

/** The messages one peer of a replicated stream holds from `fromSeq` on, in stream order. */
export interface ReplicaView {
  readonly peer: string;
  readonly messages: readonly ReplicaMessage[];
}

/** A peer whose copy differs from what the other peers agree on: the first position where it does, and both versions. */
export interface DivergedReplica {
  readonly peer: string;
  readonly seq: number;
  readonly expected: { readonly subject: string } | null;
  readonly found: { readonly subject: string } | null;
}

export interface ReplicaAgreement {
  /** The stream positions compared: `fromSeq` to the last position every peer's read reached. */
  readonly fromSeq: number;
  readonly toSeq: number;
  readonly peers: readonly string[];
  readonly diverged: readonly DivergedReplica[];
}

/**
 * Which replicas differ from the majority, position by position (pure).
 * A replicated stream's peers must hold the same message at every sequence:
 * when one does not (nats-server 2.9 can let a leader cut off by a partition
 * keep a write no quorum accepted, after which its copy is shifted for good),
 * each reader sees the log of whichever peer leads its consumer, and the
 * event chains it checks break. Without a majority at a position (two peers,
 * or three different copies) every peer differing from the first is named.
 */
export function compareReplicas(views: readonly ReplicaView[], fromSeq: number): ReplicaAgreement {
  const bySeq = views.map((view) => new Map(view.messages.map((message) => [message.seq, message])));
  // Up to where every peer was read: the stream grows while they are, and a later read holding more is no divergence.
  const toSeq = Math.min(...views.map((view) => view.messages.at(-1)?.seq ?? fromSeq - 1));
  const diverged = new Map<string, DivergedReplica>();
  for (let seq = fromSeq; seq <= toSeq; seq++) {
    const copies = bySeq.map((messages) => messages.get(seq));
    const keyOf = (message: ReplicaMessage | undefined): string => (message === undefined ? '' : `${message.subject}\n${message.digest}`);
    const counts = new Map<string, number>();
    for (const copy of copies) counts.set(keyOf(copy), (counts.get(keyOf(copy)) ?? 0) + 1);
    if (counts.size === 1) continue;
    const [majorityKey, majorityCount] = [...counts].sort((a, b) => b[1] - a[1])[0] as [string, number];
    const reference = majorityCount * 2 > copies.length ? majorityKey : keyOf(copies[0]);
    const expected = copies.find((copy) => keyOf(copy) === reference);
    copies.forEach((copy, index) => {
      const peer = views[index]?.peer as string;
      if (keyOf(copy) === reference || diverged.has(peer)) return;
      diverged.set(peer, { peer, seq, expected: expected === undefined ? null : { subject: expected.subject }, found: copy === undefined ? null : { subject: copy.subject } });
    });
  }
  return { fromSeq, toSeq, peers: views.map((view) => view.peer), diverged: [...diverged.values()] };
}

export interface ReadReplicasOptions {
  /** How many of the stream's last messages to compare (default 1,000). */
  readonly tail?: number;
  /** Consumers opened in search of one led by each peer before giving up on the rest (default 8 per peer). */
  readonly attemptsPerPeer?: number;
  readonly timeoutMs?: number;
}

export interface ReplicaReading {
  readonly agreement: ReplicaAgreement;
  /** Peers no probe consumer landed on within the attempts: their copy was not compared. */
  readonly unreached: readonly string[];
}

const MSG_ID_HEADER = 'Nats-Msg-Id';

/** The servers holding a copy of the stream, its leader first (none on a server that is not clustered). */
export function streamPeers(info: StreamInfo): string[] {
  return [info.cluster?.leader, ...(info.cluster?.replicas ?? []).map((replica) => replica.name)].filter((peer): peer is string => typeof peer === 'string');
}

function toReplicaMessage(message: JsMsg): ReplicaMessage {
  const digest = createHash('sha256')
    .update(message.headers?.get(MSG_ID_HEADER) ?? '')
    .update('\n')
    .update(message.data)
    .digest('hex');
  return { seq: message.seq, subject: message.subject, digest };
}

/**
 * Reads the last `tail` messages of `stream` from each of its peers and
 * compares them. The client cannot name the peer a consumer runs on, so
 * ephemeral R1 probe consumers (memory, no acks, reaped when idle) are opened
 * until one is led by each peer; each reads from its leader's own copy.
 * Reads only (the probes are deleted). A stream of one replica agrees with itself.
 */
export async function readReplicas(nc: NatsConnection, stream: string, options: ReadReplicasOptions = {}): Promise<ReplicaReading> {
  const tail = options.tail ?? 1_000;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const jsm = await jetstreamManager(nc, { checkAPI: false, timeout: timeoutMs });
  const js = jetstream(nc, { timeout: timeoutMs });
  const info = await jsm.streams.info(stream);
  const peers = streamPeers(info);
  const fromSeq = Math.max(info.state.first_seq, info.state.last_seq - tail + 1);
  if (peers.length <= 1 || info.state.messages === 0) return { agreement: { fromSeq, toSeq: info.state.last_seq, peers, diverged: [] }, unreached: [] };
  const views = new Map<string, ReplicaView>();
  const attempts = (options.attemptsPerPeer ?? 8) * peers.length;
  for (let attempt = 0; attempt < attempts && views.size < peers.length; attempt++) {
    const created = await jsm.consumers.add(stream, {
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: fromSeq,
      mem_storage: true,
      num_replicas: 1,
      inactive_threshold: 30_000_000_000, // 30 s in nanoseconds: a probe left behind by a dead doctor is reaped
    });
    try {
      const leader = created.cluster?.leader;
      if (leader === undefined || views.has(leader)) continue;
      const consumer = await js.consumers.get(stream, created.name);
      const messages: ReplicaMessage[] = [];
      // Until the probe has nothing more: each peer's copy may end elsewhere (a diverged one is often shorter).
      try {
        for (;;) {
          const batch = await consumer.fetch({ max_messages: Math.min(tail, 500), expires: Math.min(timeoutMs, 2_000) });
          let received = 0;
          let pending = 1;
          for await (const message of batch) {
            received++;
            pending = message.info.pending;
            messages.push(toReplicaMessage(message));
          }
          // Nothing left on this peer's copy (pending 0), or nothing arrived before the fetch expired.
          if (received === 0 || pending === 0 || messages.length >= tail + peers.length) break;
        }
      } catch {
        // The probe's peer did not serve it (heartbeats missed: a copy still being placed or catching up): try another probe.
        continue;
      }
      views.set(leader, { peer: leader, messages });
    } finally {
      await jsm.consumers.delete(stream, created.name).catch(() => undefined);
    }
  }
  const reached = peers.filter((peer) => views.has(peer));
  if (reached.length < 2) {
    throw new BusError('BUS_REPLICAS_UNREADABLE', `no probe consumer of ${stream} landed on more than ${reached.length} of its ${peers.length} peers in ${attempts} attempts; try again`, {
      details: { stream, peers, reached },
    });
  }
  return {
    agreement: compareReplicas(
      reached.map((peer) => views.get(peer) as ReplicaView),
      fromSeq,
    ),
    unreached: peers.filter((peer) => !views.has(peer)),
  };
}

export interface ReplaceReplicaOptions {
  /** How long the stream may take to run its configured replicas again, all current (default 120 s). */
  readonly timeoutMs?: number;
  /** One line per step, for a human watching. */
  readonly onProgress?: (line: string) => void;
}

/** JetStream's "peer remap failed": the peer was removed but no spare server could take its place (every server already holds a copy). */
const PEER_REMAP_FAILED = 10075;

/**
 * Makes `peer` drop its copy of `stream` and take the quorum's: the peer is
 * removed from the stream (the server deletes its copy), and when no other
 * server took its place the stream is scaled to the peers left and back to
 * its configured replicas, so a fresh copy is placed, which catches up from
 * the leader. Returns the stream's peers once every configured replica runs
 * and is current. Run only on a peer found diverged: while it catches up the
 * stream has one copy fewer.
 */
export async function replaceReplica(nc: NatsConnection, stream: string, peer: string, options: ReplaceReplicaOptions = {}): Promise<readonly string[]> {
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  const progress = options.onProgress ?? (() => undefined);
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  const fail = (message: string, details: Record<string, unknown> = {}, cause?: unknown): BusError =>
    new BusError('BUS_REPLICA_REPAIR_FAILED', `${stream}, peer ${peer}: ${message}`, { details: { stream, peer, ...details }, ...(cause === undefined ? {} : { cause }) });
  const peersOf = async () => {
    const info = await jsm.streams.info(stream);
    const replicas = info.cluster?.replicas ?? [];
    return {
      configured: info.config.num_replicas,
      peers: streamPeers(info),
      current: info.cluster?.leader !== undefined && replicas.every((replica) => replica.current === true),
      config: info.config,
    };
  };
  const until = async (what: string, done: (state: Awaited<ReturnType<typeof peersOf>>) => boolean) => {
    for (;;) {
      const state = await peersOf();
      if (done(state)) return state;
      if (Date.now() > deadline) throw fail(`${what} did not happen in time`, { peers: state.peers });
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  };
  const before = await peersOf();
  if (!before.peers.includes(peer)) throw fail(`not one of its peers (${before.peers.join(', ')})`, { peers: before.peers });
  if (before.peers.length < 2) throw fail('the only copy: nothing to take a copy from');
  progress(`removing ${peer} from ${stream} (peers ${before.peers.join(', ')})`);
  const reply = await nc.request(`$JS.API.STREAM.PEER.REMOVE.${stream}`, JSON.stringify({ peer }), { timeout: 10_000 }).catch((error: unknown) => {
    throw fail('the server did not answer the removal', {}, error);
  });
  const answer = JSON.parse(new TextDecoder().decode(reply.data)) as { success?: boolean; error?: { err_code?: number; description?: string } };
  if (answer.error !== undefined && answer.error.err_code !== PEER_REMAP_FAILED) throw fail(`the server refused the removal: ${answer.error.description ?? 'no reason given'}`, { error: answer.error });
  let state = await until(`${peer} leaving ${stream}`, (s) => !s.peers.includes(peer));
  if (state.peers.length < state.configured) {
    // No spare server took the copy: shrinking to the peers left and growing back places a fresh one (on the peer just emptied).
    progress(`no spare server: scaling ${stream} to ${state.peers.length} and back to ${state.configured} replicas`);
    // The server ignores growing a group whose shrinking it has not finished applying, and says nothing: grow
    // after a pause, and when no peer joins, shrink and grow again with a longer one.
    const configured = state.configured;
    const left = state.peers.length;
    for (let pauseMs = 2_000; ; pauseMs *= 2) {
      await jsm.streams.update(stream, { ...state.config, num_replicas: left });
      await until(`${stream} scaled to ${left}`, (s) => s.configured === left && s.current);
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      state = await peersOf();
      await jsm.streams.update(stream, { ...state.config, num_replicas: configured });
      const joinBy = Date.now() + 5 * pauseMs;
      while (Date.now() < joinBy && (await peersOf()).peers.length < configured) await new Promise((resolve) => setTimeout(resolve, 500));
      state = await peersOf();
      if (state.peers.length >= configured) break;
      if (Date.now() > deadline) throw fail(`no copy was placed when ${stream} grew back to ${configured} replicas`, { peers: state.peers });
      progress(`no copy placed yet; scaling ${stream} again after a ${(pauseMs * 2) / 1000} s pause`);
    }
  }
  state = await until(`${stream} running ${state.configured} current replicas`, (s) => s.peers.length >= s.configured && s.current);
  progress(`${stream} runs ${state.peers.length} current replicas: ${state.peers.join(', ')}`);
  return state.peers;
}
