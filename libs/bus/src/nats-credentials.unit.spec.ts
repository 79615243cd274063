import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SERVICE_CONNECTION, consumerCredsFile, serverList } from './nats-credentials.js';

describe('serverList', () => {
  it('given one URL naming a cluster with commas, then it is one URL per server, blanks dropped', () => {
    expect(serverList('nats://127.0.0.1:4223, nats://127.0.0.1:4224,,nats://127.0.0.1:4225 ')).toEqual(['nats://127.0.0.1:4223', 'nats://127.0.0.1:4224', 'nats://127.0.0.1:4225']);
  });

  it('given a list whose entries hold commas, then they are split too', () => {
    expect(serverList(['nats://a:1,nats://b:2', 'nats://c:3'])).toEqual(['nats://a:1', 'nats://b:2', 'nats://c:3']);
  });

  it('given no servers, then none are chosen (the caller\'s default applies)', () => {
    expect(serverList(undefined)).toBeUndefined();
  });
});

describe('SERVICE_CONNECTION', () => {
  it('never gives up reconnecting: a service without a bus must wait for it, not close for good', () => {
    expect(SERVICE_CONNECTION.maxReconnectAttempts).toBe(-1);
    expect(SERVICE_CONNECTION.ignoreAuthErrorAbort).toBe(true);
  });

  it('builds no stack trace per request: the client library\'s async traces cost a tenth of a busy service\'s CPU', () => {
    expect(SERVICE_CONNECTION.noAsyncTraces).toBe(true);
  });
});

describe('consumerCredsFile', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'writ-creds-'));
  const own = path.join(dir, 'policy.creds');
  const beside = path.join(dir, 'policy.consumer.creds');
  writeFileSync(own, 'x');

  it('given WRIT_NATS_CONSUMER_CREDS, then it is the consumer credential, whatever lies beside the service\'s', () => {
    expect(consumerCredsFile({ WRIT_NATS_CREDS: own, WRIT_NATS_CONSUMER_CREDS: '/elsewhere/c.creds' })).toBe('/elsewhere/c.creds');
  });

  it('given no consumer credential beside the service\'s, then there is none (the consumers pull on the service\'s connection)', () => {
    expect(consumerCredsFile({ WRIT_NATS_CREDS: own })).toBeUndefined();
    expect(consumerCredsFile({})).toBeUndefined();
  });

  it('given the file writ init issues beside the service\'s credential, then it is the consumer credential', () => {
    writeFileSync(beside, 'x');
    expect(consumerCredsFile({ WRIT_NATS_CREDS: own })).toBe(beside);
    // a credential not named *.creds has no sibling by convention
    expect(consumerCredsFile({ WRIT_NATS_CREDS: path.join(dir, 'policy.jwt') })).toBeUndefined();
  });
});
