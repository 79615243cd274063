import { hasErrorCode } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { refusedByName } from '@writ/testing';
import { atLeast, busConsumerSettings, busConsumerVariables, serviceEnvironment, serviceHttp, serviceStreams, serviceSubjects, SubjectToken } from './service-environment.js';
import { loadConfig } from './service-config.js';

const GiB = 1024 ** 3;

function issuePaths(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    expect(hasErrorCode(error, 'RUNTIME_CONFIG_INVALID')).toBe(true);
    return (error as { details: { issues: { path: string }[] } }).details.issues.map((issue) => issue.path).sort();
  }
  throw new Error('expected RUNTIME_CONFIG_INVALID');
}

describe('serviceEnvironment', () => {
  it('given no environment, then the documented defaults, with the service its own port', () => {
    const env = loadConfig('svc', serviceEnvironment({ httpPort: 8083 }), {});
    expect(env).toEqual({
      WRIT_NATS_URL: 'nats://127.0.0.1:4223',
      WRIT_HTTP_HOST: '127.0.0.1',
      WRIT_HTTP_PORT: 8083,
      WRIT_SUBJECT_ROOT: 'writ',
      WRIT_EVENTS_STREAM: 'WRIT_EVENTS',
      WRIT_INGRESS_STREAM: 'WRIT_INGRESS',
      WRIT_COMMANDS_STREAM: 'WRIT_COMMANDS',
      WRIT_DLQ_STREAM: 'WRIT_DLQ',
      WRIT_EVENTS_MAX_BYTES: 10 * GiB,
      WRIT_EVENTS_READ_CACHE: 50_000,
      WRIT_BUS_MAX_BYTES: GiB,
      WRIT_STREAM_REPLICAS: 1,
      WRIT_CONSUMER_STALL_SECONDS: 120,
      WRIT_CONSUMER_STALL_CHECK_MS: 5_000,
    });
    expect(serviceHttp(env)).toEqual({ host: '127.0.0.1', port: 8083 });
    expect(serviceStreams(env)).toEqual({
      events: 'WRIT_EVENTS',
      eventsPrefix: 'writ.evt',
      ingress: 'WRIT_INGRESS',
      commands: 'WRIT_COMMANDS',
      dlq: 'WRIT_DLQ',
      replicas: 1,
      eventsMaxBytes: 10 * GiB,
      eventsReadCache: 50_000,
      busMaxBytes: GiB,
      consumerStallMs: 120_000,
      consumerStallCheckMs: 5_000,
    });
  });

  it('given WRIT_BUS_MAX_BYTES, the name every service reads, then it bounds the bus streams of a service that read WRIT_BUS_STREAMS_MAX_BYTES; the old name is refused by name', () => {
    const schema = serviceEnvironment({ httpPort: 8081 });
    expect(serviceStreams(loadConfig('svc', schema, { WRIT_BUS_MAX_BYTES: '16777216' })).busMaxBytes).toBe(16 * 1024 ** 2);
    expect(serviceStreams(loadConfig('svc', schema, {})).busMaxBytes).toBe(GiB);
    expect(() => loadConfig('svc', schema, { WRIT_BUS_STREAMS_MAX_BYTES: '16777216', WRIT_BUS_MAX_BYTES: '16777216' })).toThrow(refusedByName(/WRIT_BUS_STREAMS_MAX_BYTES.*renamed WRIT_BUS_MAX_BYTES/));
    expect(issuePaths(() => loadConfig('svc', schema, { WRIT_BUS_STREAMS_MAX_BYTES: '16777216' }))).toEqual(['WRIT_BUS_STREAMS_MAX_BYTES']);
  });

  it('given a subject root and stream names, then the streams and subjects derive from them', () => {
    const env = loadConfig('svc', serviceEnvironment({ httpPort: 1 }), {
      WRIT_SUBJECT_ROOT: 't_1',
      WRIT_EVENTS_STREAM: 'EVT_1',
      WRIT_COMMANDS_STREAM: 'CMD_1',
      WRIT_STREAM_REPLICAS: '3',
      WRIT_HTTP_PORT: '0',
    });
    expect(serviceStreams(env)).toMatchObject({ events: 'EVT_1', eventsPrefix: 't_1.evt', commands: 'CMD_1', replicas: 3 });
    expect(serviceSubjects(env).commands.receiptIssue).toBe('t_1.cmd.receipt.issue');
    expect(serviceHttp(env).port).toBe(0);
    expect(serviceStreams(loadConfig('svc', serviceEnvironment({ httpPort: 1 }), { WRIT_SUBJECT_ROOT: 't_1', WRIT_EVENTS_PREFIX: 'x.evt' })).eventsPrefix).toBe('x.evt');
  });

  it('given bad values, then start-up fails listing every offending variable', () => {
    const paths = issuePaths(() =>
      loadConfig('svc', serviceEnvironment({ httpPort: 1 }), {
        WRIT_HTTP_PORT: '70000',
        WRIT_SUBJECT_ROOT: 'a.*',
        WRIT_EVENTS_STREAM: 'has.dot',
        WRIT_STREAM_REPLICAS: '0',
        WRIT_BUS_MAX_BYTES: '0',
        WRIT_NATS_URL: '',
      }),
    );
    expect(paths).toEqual(['WRIT_BUS_MAX_BYTES', 'WRIT_EVENTS_STREAM', 'WRIT_HTTP_PORT', 'WRIT_NATS_URL', 'WRIT_STREAM_REPLICAS', 'WRIT_SUBJECT_ROOT']);
  });

  it('given a service that extends it, then its own variables and overrides apply', () => {
    const schema = serviceEnvironment({ httpPort: 8080 }).extend({ WRIT_SUBJECT_ROOT: SubjectToken.default('writ'), WRIT_X: z.string().default('x') });
    expect(loadConfig('svc', schema, {})).toMatchObject({ WRIT_SUBJECT_ROOT: 'writ', WRIT_X: 'x' });
    expect(issuePaths(() => loadConfig('svc', schema, { WRIT_SUBJECT_ROOT: 'a.b' }))).toEqual(['WRIT_SUBJECT_ROOT']);
  });
});

describe('atLeast', () => {
  it('given a service that narrows a shared bound, then values under it are refused and the shared default still applies', () => {
    const common = serviceEnvironment({ httpPort: 8081 });
    const schema = common.extend({ WRIT_BUS_MAX_BYTES: atLeast(common.shape.WRIT_BUS_MAX_BYTES, 1024 ** 2) });
    expect(loadConfig('svc', schema, {}).WRIT_BUS_MAX_BYTES).toBe(GiB);
    expect(loadConfig('svc', schema, { WRIT_BUS_MAX_BYTES: String(1024 ** 2) }).WRIT_BUS_MAX_BYTES).toBe(1024 ** 2);
    expect(issuePaths(() => loadConfig('svc', schema, { WRIT_BUS_MAX_BYTES: String(1024 ** 2 - 1) }))).toEqual(['WRIT_BUS_MAX_BYTES']);
    // The shared declaration itself is left as it was.
    expect(loadConfig('svc', common, { WRIT_BUS_MAX_BYTES: '1' }).WRIT_BUS_MAX_BYTES).toBe(1);
  });
});

describe('busConsumerVariables', () => {
  it('given no environment, then the bus defaults, as busOptions fields', () => {
    const env = loadConfig('svc', z.object(busConsumerVariables), {});
    expect(busConsumerSettings(env)).toEqual({ maxDeliver: 10, ackWaitMs: 30_000, backoff: { initialMs: 1_000 }, pullExpiresMs: 5_000 });
  });

  it('given a pull shorter than a second, then start-up fails', () => {
    expect(issuePaths(() => loadConfig('svc', z.object(busConsumerVariables), { WRIT_BUS_PULL_EXPIRES_MS: '10' }))).toEqual(['WRIT_BUS_PULL_EXPIRES_MS']);
  });
});
