import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { hasErrorCode } from '@writ/contracts';
import type { PolicyApp } from '@writ/policy';
import type { ReceiptApp } from '@writ/receipt';
import { NatsAuthority, ServiceRuntime, busLayout, serviceConsumerPermissions, servicePermissions, writeSecret } from '@writ/runtime';
import { createLogger, type Logger } from '@writ/telemetry';
import { connectTestNats, deleteStreams, uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WRIT_SERVICES_IN_START_ORDER, startServices, type SharedProcessServices } from './serve.js';

/**
 * Two services in one process (policy and receipt: NATS alone, no Postgres or Docker), started
 * the way apps/serve starts all seven, against Writ's own NATS with auth: sharing the process
 * must not share a credential. Each service's connection can do what ITS credential allows and
 * nothing more, though the process's own environment carries the operator's (`WRIT_NATS_CREDS`
 * of writ.env, which may publish anything).
 */
const home = process.env['WRIT_HOME'];
const root = uniqueName('serve');
const upper = root.toUpperCase();
const streams = { events: `${upper}_EVENTS`, ingress: `${upper}_INGRESS`, commands: `${upper}_COMMANDS`, dlq: `${upper}_DLQ` };
const policyBucket = `${upper}_POLICY`;
const definitions = WRIT_SERVICES_IN_START_ORDER.filter((service) => ['policy', 'receipt'].includes(service.serviceName));

let dir: string;
let operator: NatsConnection;
let running: SharedProcessServices | undefined;

/** The environment of the one process: the test process's own (the operator's credential included) plus this deployment's layout. */
function processEnvironment(extra: Record<string, string> = {}): Record<string, string | undefined> {
  return {
    ...process.env,
    WRIT_SERVE_CREDS_DIR: join(dir, 'creds'),
    WRIT_SUBJECT_ROOT: root,
    WRIT_EVENTS_STREAM: streams.events,
    WRIT_INGRESS_STREAM: streams.ingress,
    WRIT_COMMANDS_STREAM: streams.commands,
    WRIT_DLQ_STREAM: streams.dlq,
    WRIT_EVENTS_MAX_BYTES: String(64 * 1024 ** 2),
    WRIT_BUS_MAX_BYTES: String(64 * 1024 ** 2),
    WRIT_POLICY_BUCKET: policyBucket,
    WRIT_SEAL_KEY_DIR: join(dir, 'keys'),
    WRIT_RECEIPT_KEY_FILE: join(dir, 'keys', 'receipt.jwk.json'),
    WRIT_AUTHORSHIP: 'enforce',
    WRIT_BUS_PULL_EXPIRES_MS: '1000',
    WRIT_SERVE_POLICY__WRIT_HTTP_PORT: '0',
    WRIT_SERVE_RECEIPT__WRIT_HTTP_PORT: '0',
    ...extra,
  };
}

/** A request the server refuses for permissions rejects with its violation; anything else is not a refusal. */
async function publishVerdict(nc: NatsConnection, subject: string): Promise<string> {
  try {
    await jetstream(nc).publish(subject, '{}', { timeout: 2_000 });
    return 'stored';
  } catch (error) {
    return (error as Error).message;
  }
}

/** The NATS connection a running service publishes on (its runtime's, as its composition root binds it). */
function connectionOf(name: string): NatsConnection {
  const service = running?.services.find((entry) => entry.name === name)?.service;
  if (service === undefined) throw new Error(`${name} is not running`);
  return service.app.get(ServiceRuntime).nc;
}

beforeAll(async () => {
  if (home === undefined) throw new Error('WRIT_HOME is not set: run through npm test (writ init made var/writ)');
  dir = await mkdtemp(join(tmpdir(), `writ-${root}-`));
  // Each service's credentials for this deployment's subjects, issued as writ init issues them.
  await mkdir(join(dir, 'creds'), { mode: 0o700 });
  const authority = await NatsAuthority.load(home);
  const layout = busLayout({ root, eventsPrefix: `${root}.evt`, streams });
  for (const name of ['policy', 'receipt'] as const) {
    await writeSecret(join(dir, 'creds', `${name}.creds`), await authority.writUserCreds(`svc-${name}`, servicePermissions(name, layout)));
    await writeSecret(join(dir, 'creds', `${name}.consumer.creds`), await authority.writUserCreds(`svc-${name}`, serviceConsumerPermissions(name, layout)));
  }
  operator = await connectTestNats('serve-test');
});

afterAll(async () => {
  await running?.close();
  await deleteStreams(operator, ...Object.values(streams), `KV_${policyBucket}`);
  await operator?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('every service in one process (apps/serve)', () => {
  it('given policy and receipt started in one process whose environment holds the operator credential, then each connects with its own and may not publish what its own forbids', async () => {
    // given the process environment names the operator's credential, which may publish anything
    expect(process.env['WRIT_NATS_CREDS']).toMatch(/operator\.creds$/);
    // when both services start in this one process
    running = await startServices(definitions, processEnvironment());
    const policy = connectionOf('policy');
    const receipt = connectionOf('receipt');
    // then each answers its own /readyz on its own port
    const urls = running.services.map(({ service }) => (service as PolicyApp | ReceiptApp).url);
    expect(new Set(urls).size).toBe(2);
    for (const url of urls) await expect(fetch(`${url}/readyz`).then((response) => response.status)).resolves.toBe(200);
    // and the policy service's connection may not write an executor-only stream (a cell's) nor the receipt service's principal
    expect(await publishVerdict(policy, `${root}.evt.cell.c1`)).toMatch(/Permissions Violation for Publish/);
    expect(await publishVerdict(policy, `${root}.evt.principal.writ-receipt`)).toMatch(/Permissions Violation for Publish/);
    // and the receipt service's may not write the policy service's principal, while the policy service's may (its own)
    expect(await publishVerdict(receipt, `${root}.evt.principal.writ-policy`)).toMatch(/Permissions Violation for Publish/);
    expect(await publishVerdict(policy, `${root}.evt.principal.writ-policy`)).toBe('stored');
  });

  it('given one service cannot start (its credential is missing), then the start fails with its code and the service started before it is closed again', async () => {
    await running?.close();
    running = undefined;
    // given the receipt service (started after policy) names a credential file that is not there
    const env = processEnvironment({ WRIT_SERVE_RECEIPT__WRIT_NATS_CREDS: join(dir, 'creds', 'missing.creds') });
    // when the process starts them
    const started: string[] = [];
    const failure = await startServices(definitions, env, { logger: recordingLogger(started) }).then(
      () => undefined,
      (error: unknown) => error,
    );
    // then the start fails with the receipt service's own error code
    expect(hasErrorCode(failure) ? failure.code : failure).toBe('RUNTIME_NATS_UNAVAILABLE');
    const cause = (failure as { cause?: unknown }).cause;
    expect(hasErrorCode(cause) ? cause.code : cause).toBe('BUS_CREDENTIALS_INVALID');
    // and the policy service, which had started, was stopped again
    expect(started).toEqual(['started policy', 'failed receipt', 'stopped policy']);
  });
});

/** A logger whose lines say which service started, failed and stopped, in order (what the test checks). */
function recordingLogger(lines: string[]): Logger {
  const verbs: Record<string, string> = { 'service started': 'started', 'service stopped': 'stopped' };
  return createLogger('writ-serve', {
    level: 'info',
    destination: {
      write(line: string) {
        const { msg, service, level } = JSON.parse(line) as { msg: string; service?: string; level: number };
        const verb = level >= 60 ? 'failed' : verbs[msg];
        if (verb !== undefined && service !== undefined) lines.push(`${verb} ${service}`);
      },
    },
  });
}
