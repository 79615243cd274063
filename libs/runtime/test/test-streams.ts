import { createLogger } from '@writ/telemetry';
import { uniqueName } from '@writ/testing';
import type { ServiceStreams } from '../src/service-environment.js';

const MiB = 1024 ** 2;

export const quiet = createLogger('runtime-test', { level: 'silent' });

/** A test's own log and bus streams under `root`, small (the server reserves max_bytes); delete them afterwards. */
export function testStreams(root: string): ServiceStreams {
  return {
    events: uniqueName('EVT'),
    eventsPrefix: `${root}.evt`,
    ingress: uniqueName('ING'),
    commands: uniqueName('CMD'),
    dlq: uniqueName('DLQ'),
    replicas: 1,
    eventsMaxBytes: 64 * MiB,
    eventsReadCache: 50_000,
    busMaxBytes: 8 * MiB,
  };
}
