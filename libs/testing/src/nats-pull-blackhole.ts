import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a real nats-server that can make one consumer
 * deaf: its pull requests (`$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>`)
 * still reach the server, so it stays active and is never reaped, but nothing
 * the server answers on their reply inboxes (messages, heartbeats, timeout
 * statuses) reaches the client. That is what a consumer the cluster lists but
 * no peer runs does to its reader (nats-server 2.9 after node kills and
 * partitions): its info answers, its pulls never do. Everything else of the
 * protocol (INFO, CONNECT with its signed nonce, PING, SUB, other messages)
 * goes through untouched.
 */
export interface NatsPullBlackhole {
  /** The URL to connect through. */
  readonly url: string;
  /** The next consumer pulled from becomes the deaf one, until the next call. */
  killNextConsumer(): void;
  /** The deaf consumer (`<stream>.<consumer>`), once one was pulled from. */
  readonly deadConsumer: string | undefined;
  /** How many server messages to the deaf consumer's inboxes were dropped so far. */
  readonly swallowed: number;
  close(): Promise<void>;
}

const CRLF = Buffer.from('\r\n');
const PULL_SUBJECT = /^\$JS\.API\.CONSUMER\.MSG\.NEXT\./;

/**
 * Splits a protocol stream into whole operations (a line, and for the verbs
 * that carry a payload the payload and its CRLF), each handed to `take` with
 * its verb and arguments; returns the unfinished rest.
 */
function operations(buffer: Buffer, payloadVerbs: ReadonlySet<string>, take: (verb: string, args: string[], operation: Buffer) => void): Buffer {
  let rest = buffer;
  for (;;) {
    const lineEnd = rest.indexOf(CRLF);
    if (lineEnd < 0) return rest;
    const [verb = '', ...args] = rest.subarray(0, lineEnd).toString('latin1').split(/\s+/);
    let length = lineEnd + 2;
    if (payloadVerbs.has(verb.toUpperCase())) {
      length += Number(args.at(-1)) + 2;
      if (rest.length < length) return rest;
    }
    take(verb.toUpperCase(), args, rest.subarray(0, length));
    rest = rest.subarray(length);
  }
}

/** NATS subject matching: `*` one token, `>` the rest. */
function subjectMatches(pattern: string, subject: string): boolean {
  const wanted = pattern.split('.');
  const tokens = subject.split('.');
  for (const [index, token] of wanted.entries()) {
    if (token === '>') return tokens.length > index;
    if (index >= tokens.length || (token !== '*' && token !== tokens[index])) return false;
  }
  return wanted.length === tokens.length;
}

export async function startNatsPullBlackhole(upstreamUrl: string): Promise<NatsPullBlackhole> {
  const upstream = new URL(upstreamUrl.split(',')[0]!.trim());
  const sockets = new Set<Socket>();
  const state: { armed: boolean; dead: string | undefined; swallowed: number } = { armed: false, dead: undefined, swallowed: 0 };
  const server: Server = createServer((client) => {
    const target = createConnection({ host: upstream.hostname, port: Number(upstream.port || 4222) });
    sockets.add(client).add(target);
    const closeBoth = (): void => {
      client.destroy();
      target.destroy();
    };
    client.on('error', closeBoth).on('close', closeBoth);
    target.on('error', closeBoth).on('close', closeBoth);
    // The server delivers a pull's messages under their own subjects, to the subscription (sid) of the pull's reply inbox.
    const subscriptions = new Map<string, string>();
    const deafSids = new Set<string>();
    let fromClient: Buffer = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      fromClient = operations(Buffer.concat([fromClient, chunk]), new Set(['PUB', 'HPUB']), (verb, [subject = '', reply, ...rest], operation) => {
        if (verb === 'SUB') subscriptions.set(String([reply, ...rest].at(-1)), subject);
        if ((verb === 'PUB' || verb === 'HPUB') && PULL_SUBJECT.test(subject)) {
          const consumer = subject.replace(PULL_SUBJECT, '');
          if (state.armed) {
            state.armed = false;
            state.dead = consumer;
          }
          // A reply argument is there when the line has one more token than the sizes need.
          if (consumer === state.dead && reply !== undefined && !/^\d+$/.test(reply)) {
            for (const [sid, pattern] of subscriptions) if (subjectMatches(pattern, reply)) deafSids.add(sid);
          }
        }
        target.write(operation);
      });
    });
    let fromServer: Buffer = Buffer.alloc(0);
    target.on('data', (chunk: Buffer) => {
      fromServer = operations(Buffer.concat([fromServer, chunk]), new Set(['MSG', 'HMSG']), (verb, [, sid = ''], operation) => {
        if ((verb === 'MSG' || verb === 'HMSG') && deafSids.has(sid)) {
          state.swallowed++;
          return;
        }
        client.write(operation);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the pull blackhole has no TCP port');
  return {
    url: `nats://127.0.0.1:${address.port}`,
    killNextConsumer() {
      state.armed = true;
      state.dead = undefined;
    },
    get deadConsumer() {
      return state.dead;
    },
    get swallowed() {
      return state.swallowed;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
