import { describe, expect, it } from 'vitest';
import { SERVICE_CONNECTION, serverList } from './nats-credentials.js';

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
