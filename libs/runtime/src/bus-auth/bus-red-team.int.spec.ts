import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, credsAuthenticator, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { NATS_URL, connectTestNats, deleteStreams, uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentPermissions, busLayout, dashboardPermissions, serviceConsumerPermissions, servicePermissions, userInbox, type BusLayout } from './bus-permissions.js';
import { NatsAuthority, pushAccountJwt } from './nats-authority.js';

/**
 * The red team on the bus: Writ's own nats-server (auth on), credentials issued
 * the way `writ init` and `writ principal add` issue them, and every attempt
 * below refused by the server itself. Each party is a real connection.
 */
const home = process.env['WRIT_HOME'];
const root = uniqueName('rt');
const upper = root.toUpperCase();
const streams = { events: `${upper}_EVENTS`, ingress: `${upper}_INGRESS`, commands: `${upper}_COMMANDS`, dlq: `${upper}_DLQ` };
const layout: BusLayout = busLayout({ root, eventsPrefix: `${root}.evt`, streams });

let authority: NatsAuthority;
let operator: NatsConnection;
let system: NatsConnection;
const opened: NatsConnection[] = [];

async function as(creds: string, name: string): Promise<NatsConnection> {
  const nc = await connect({ servers: NATS_URL, name, authenticator: credsAuthenticator(new TextEncoder().encode(creds)), reconnect: false });
  opened.push(nc);
  return nc;
}

async function agent(principalId: string): Promise<NatsConnection> {
  const issued = await authority.issueAgent(principalId, layout, agentPermissions(principalId, layout));
  await pushAccountJwt(system, issued.accountJwt);
  return as(issued.creds, principalId);
}

async function service(name: Parameters<typeof servicePermissions>[0], permissions = servicePermissions(name, layout)): Promise<NatsConnection> {
  const creds = await authority.writUserCreds(`svc-${name}`, permissions);
  const nc = await connect({ servers: NATS_URL, name: `stolen-${name}`, authenticator: credsAuthenticator(new TextEncoder().encode(creds)), inboxPrefix: userInbox(`svc-${name}`), reconnect: false });
  opened.push(nc);
  return nc;
}

/** A request the server refuses for permissions rejects with its violation; anything else is not a refusal. */
async function refusedRequest(nc: NatsConnection, subject: string, body = '{}'): Promise<string> {
  try {
    await nc.request(subject, body, { timeout: 2_000 });
  } catch (error) {
    return (error as Error).message;
  }
  return 'answered';
}

/** A plain publish (no reply inbox needed): the server's asynchronous -ERR for it, or 'accepted'. */
async function refusedPublish(nc: NatsConnection, subject: string): Promise<string> {
  const statuses = nc.status();
  const verdict = (async () => {
    for await (const status of statuses) {
      if (status.type === 'error' && String(status.error?.message).includes(subject)) return status.error.message;
    }
    return 'accepted';
  })();
  nc.publish(subject, '{}');
  await nc.flush();
  return Promise.race([verdict, new Promise<string>((resolve) => setTimeout(() => resolve('accepted'), 1_000))]);
}

/** Subscribes and waits for the server's verdict: the subscription's close reason, or 'open' when it stands. */
async function subscriptionVerdict(nc: NatsConnection, subject: string): Promise<{ verdict: string; sub: Subscription }> {
  const sub = nc.subscribe(subject);
  const closed = sub.closed.then((error) => (error ? error.message : 'closed'));
  await nc.flush();
  const verdict = await Promise.race([closed, new Promise<string>((resolve) => setTimeout(() => resolve('open'), 500))]);
  return { verdict, sub };
}

const messagesIn = async (stream: string) => (await (await jetstreamManager(operator)).streams.info(stream)).state.messages;

beforeAll(async () => {
  if (home === undefined) throw new Error('WRIT_HOME is not set: run through npm test (writ init made var/writ)');
  authority = await NatsAuthority.load(home);
  operator = await connectTestNats('red-team-operator');
  const jsm = await jetstreamManager(operator);
  await jsm.streams.add({ name: streams.events, subjects: [`${root}.evt.>`], max_bytes: 8 * 1024 * 1024 });
  await jsm.streams.add({ name: streams.ingress, subjects: [`${root}.ingress.>`], max_bytes: 8 * 1024 * 1024 });
  system = await as(await authority.systemUserCreds('red-team-system'), 'red-team-system');
});

afterAll(async () => {
  for (const nc of opened) await nc.close().catch(() => undefined);
  await deleteStreams(operator, streams.events, streams.ingress);
  await operator.close();
});

describe('anonymous', () => {
  it('given no credential, then the connection is refused', async () => {
    await expect(connect({ servers: NATS_URL, reconnect: false, timeout: 3_000 })).rejects.toThrow(/Authorization Violation/);
  });
});

describe('an agent', () => {
  it('given its own credential, then it publishes its own ingress subject and JetStream stores it', async () => {
    const principal = uniqueName('agent-a');
    const nc = await agent(principal);
    const ack = await jetstream(nc).publish(`${root}.ingress.action.${principal}`, 'signed request', { msgID: randomUUID() });
    expect(ack.stream).toBe(streams.ingress);
  });

  it('given its credential, then another agent\'s ingress subject, any event, command or query subject, and self-registration are refused; nothing is stored', async () => {
    const self = uniqueName('agent-b');
    const nc = await agent(self);
    const before = await messagesIn(streams.events);
    for (const subject of [
      `${root}.ingress.action.someone-else`,
      `${root}.evt.task.t1`,
      `${root}.evt.principal.${self}`,
      `${root}.evt.principal.writ-approval`,
      `${root}.cmd.executor.run`,
      `${root}.qry.ingress.register-principal`,
      `${root}.qry.approval.resolve`,
    ]) {
      expect(await refusedRequest(nc, subject), subject).toMatch(/Permissions Violation for Publish/);
    }
    expect(await messagesIn(streams.events)).toBe(before);
  });

  it('given its credential, then the JetStream API (delete, purge, update, consumer delete) is refused', async () => {
    const nc = await agent(uniqueName('agent-c'));
    for (const subject of [`$JS.API.STREAM.DELETE.${streams.events}`, `$JS.API.STREAM.PURGE.${streams.events}`, `$JS.API.STREAM.UPDATE.${streams.events}`, `$JS.API.CONSUMER.DELETE.${streams.events}.x`, `$JS.API.STREAM.INFO.${streams.events}`]) {
      expect(await refusedRequest(nc, subject), subject).toMatch(/Permissions Violation for Publish/);
    }
    expect(await messagesIn(streams.events)).toBeGreaterThanOrEqual(0);
  });

  it("given its credential, then another agent's subjects and the projections cannot be subscribed, and its _INBOX.> holds only its own account's replies", async () => {
    const nc = await agent(uniqueName('agent-d'));
    for (const subject of [`${root}.ingress.action.>`, `${root}.proj.>`, `${root}.evt.>`, '>']) {
      expect((await subscriptionVerdict(nc, subject)).verdict, subject).toMatch(/Permissions Violation for Subscription/);
    }
    // when it subscribes to every inbox while a service answers an operator's request in the Writ account
    const { sub } = await subscriptionVerdict(nc, '_INBOX.>');
    const seen: string[] = [];
    void (async () => {
      for await (const message of sub) seen.push(message.subject);
    })();
    const responder = operator.subscribe(`${root}.qry.red-team.echo`, { callback: (_error, message) => void message.respond('grant-jws') });
    await operator.request(`${root}.qry.red-team.echo`, 'hello', { timeout: 2_000 });
    await nc.flush();
    responder.unsubscribe();
    // then it saw nothing
    expect(seen).toEqual([]);
  });

  it('given a revoked agent, then its live connection is cut and its credential no longer connects', async () => {
    const principal = uniqueName('agent-r');
    const issued = await authority.issueAgent(principal, layout, agentPermissions(principal, layout));
    await pushAccountJwt(system, issued.accountJwt);
    const nc = await as(issued.creds, principal);
    // when the operator revokes it
    await pushAccountJwt(system, (await authority.revokeAgent(principal, new Date())) ?? '');
    // then the connection closes (within the server's handling of the update) and a new one is refused
    await waitFor(async () => (nc.isClosed() ? true : undefined), { timeoutMs: 10_000, what: 'the revoked agent disconnected' });
    await expect(connect({ servers: NATS_URL, authenticator: credsAuthenticator(new TextEncoder().encode(issued.creds)), reconnect: false, timeout: 3_000 })).rejects.toThrow(/Authorization Violation|authentication/i);
  });
});

describe('a dashboard', () => {
  it('given its credential, then it reads projections and nothing else, and publishes nothing', async () => {
    const nc = await as(await authority.writUserCreds('dashboard', dashboardPermissions(layout)), 'dashboard');
    expect((await subscriptionVerdict(nc, `${root}.proj.>`)).verdict).toBe('open');
    for (const subject of [`${root}.evt.>`, '_INBOX.>', `${root}.ingress.>`]) {
      expect((await subscriptionVerdict(nc, subject)).verdict, subject).toMatch(/Permissions Violation for Subscription/);
    }
    for (const subject of [`${root}.proj.actions.a1`, `${root}.evt.task.t1`, `$JS.API.STREAM.DELETE.${streams.events}`]) {
      expect(await refusedPublish(nc, subject), subject).toMatch(/Permissions Violation for Publish/);
    }
  });
});

describe('a stolen service credential', () => {
  it("given the policy service's credential, then another service's principal, a cell or a grant stream, and every stream or consumer change are refused", async () => {
    const nc = await service('policy');
    const before = await messagesIn(streams.events);
    for (const subject of [
      `${root}.evt.principal.writ-approval`,
      `${root}.evt.principal.agent-1`,
      `${root}.evt.cell.c1`,
      `${root}.evt.transparency_log.main`,
      `$JS.API.STREAM.DELETE.${streams.events}`,
      `$JS.API.STREAM.PURGE.${streams.events}`,
      `$JS.API.STREAM.UPDATE.${streams.events}`,
      `$JS.API.STREAM.MSG.DELETE.${streams.events}`,
      `$JS.API.CONSUMER.DELETE.${streams.events}.anything`,
      '$SYS.REQ.CLAIMS.UPDATE',
    ]) {
      expect(await refusedRequest(nc, subject), subject).toMatch(/Permissions Violation for Publish/);
    }
    expect(await messagesIn(streams.events)).toBe(before);
    // and it cannot read other parties' replies or the raw event traffic
    for (const subject of ['_INBOX.>', '_INBOX.svc-approval.>', `${root}.evt.>`, `${root}.ingress.>`]) {
      expect((await subscriptionVerdict(nc, subject)).verdict, subject).toMatch(/Permissions Violation for Subscription/);
    }
  });

  it("given the policy service's consumer credential, then it may do nothing the service's own may not, and cannot even answer a request sent to the service", async () => {
    // given the service's own connection, answering on its query subject, and its consumer credential
    const own = await service('policy');
    const consumer = await service('policy', serviceConsumerPermissions('policy', layout));
    const subject = `${root}.qry.policy.evaluate`;
    const answer = async (nc: NatsConnection): Promise<string> => {
      const sub = nc.subscribe(subject, { max: 1, callback: (_error, message) => void message.respond('answered') });
      await nc.flush();
      try {
        return (await operator.request(subject, '{}', { timeout: 1_000 })).string();
      } catch (error) {
        return (error as Error).message;
      } finally {
        sub.unsubscribe();
      }
    };
    // then the service answers, and its consumer credential's answer never reaches the caller
    expect(await answer(own)).toBe('answered');
    expect(await answer(consumer)).not.toBe('answered');
    // and what the service may not publish, its consumer credential may not either
    for (const subject of [`${root}.evt.principal.writ-approval`, `${root}.evt.cell.c1`, `$JS.API.STREAM.DELETE.${streams.events}`, '$SYS.REQ.CLAIMS.UPDATE']) {
      expect(await refusedRequest(consumer, subject), subject).toMatch(/Permissions Violation for Publish/);
    }
    for (const subject of ['_INBOX.>', `${root}.evt.>`]) {
      expect((await subscriptionVerdict(consumer, subject)).verdict, subject).toMatch(/Permissions Violation for Subscription/);
    }
  });

  it("given the approval service's credential, then it still cannot add a key to the receipt service's principal", async () => {
    const nc = await service('approval');
    expect(await refusedRequest(nc, `${root}.evt.principal.writ-receipt`)).toMatch(/Permissions Violation for Publish/);
    // while its own subject is its to write (the event store's append)
    const ack = await jetstream(nc).publish(`${root}.evt.principal.writ-approval`, '{}', { msgID: randomUUID() });
    expect(ack.stream).toBe(streams.events);
  });
});
