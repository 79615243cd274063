import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { userJwtOf } from '@writ/bus';
import type { QuarantineCounts } from '@writ/contracts';
import { METRICS, writMetrics, type MetricObserver, type WritMetrics } from '@writ/telemetry';
import type { ConsumerReading } from './consumer-stall.js';

/** A key or credential whose end of validity this process knows. */
export interface KeyExpiry {
  /** What it is: `nats_credential`, `nats_tls_certificate`, `signing_key:<kid>` (a kid is public, and few at a time). */
  readonly key: string;
  readonly expiresAt: Date;
}

/** Where the figures every service exports come from, read at each scrape. */
export interface RuntimeMetricSources {
  /**
   * The service (`policy`): the `service` label of its own series, which tells the services
   * apart where several share one process (apps/serve) and so one `service_name`.
   */
  readonly service: string;
  /** Whether the process is ready (what `/readyz` answers). */
  readonly ready: () => boolean | Promise<boolean>;
  readonly consumers: () => readonly ConsumerReading[];
  readonly quarantined: () => QuarantineCounts;
  readonly keys?: () => Promise<readonly KeyExpiry[]> | readonly KeyExpiry[];
  readonly now?: () => number;
}

/**
 * The gauges every service exports (readiness, its consumers as the stall
 * watch last sampled them — no extra call to the server per scrape — what it
 * quarantined, the keys it knows the expiry of). Returns the stop.
 */
export function observeRuntimeMetrics(sources: RuntimeMetricSources, metrics: WritMetrics = writMetrics()): () => void {
  const now = sources.now ?? Date.now;
  return metrics.observe(
    [METRICS.serviceReady, METRICS.consumerPending, METRICS.consumerAckPending, METRICS.consumerRedelivered, METRICS.consumerStalled, METRICS.quarantined, METRICS.keyExpiry],
    async (observe: MetricObserver) => {
      const { service } = sources;
      observe(METRICS.serviceReady, (await sources.ready()) ? 1 : 0, { service });
      for (const consumer of sources.consumers()) {
        const labels = { stream: consumer.stream, durable: consumer.durable };
        observe(METRICS.consumerPending, consumer.pending, labels);
        observe(METRICS.consumerAckPending, consumer.ackPending, labels);
        observe(METRICS.consumerRedelivered, consumer.redelivered, labels);
        observe(METRICS.consumerStalled, consumer.stuckMs / 1000, labels);
      }
      for (const [reason, count] of Object.entries(sources.quarantined().by_reason)) observe(METRICS.quarantined, count ?? 0, { service, reason });
      for (const key of (await sources.keys?.()) ?? []) observe(METRICS.keyExpiry, (key.expiresAt.getTime() - now()) / 1000, { service, key: key.key });
    },
  );
}

/** The bus server's side: what it dead-letters (the event carries the reason code, never the body). */
export interface DeadLetterSource {
  on(event: 'dead-letter', listener: (event: { readonly stream: string; readonly consumer: string; readonly failure: { readonly code: string } }) => void): unknown;
}

/** Counts each dead letter of a bus server by the stream it came from, its durable and the reason code. */
export function countDeadLetters(server: DeadLetterSource, metrics: WritMetrics = writMetrics()): void {
  const deadLetters = metrics.counter(METRICS.deadLetters);
  server.on('dead-letter', (event) => deadLetters.add(1, { stream: event.stream, durable: event.consumer, reason: event.failure.code }));
}

/** A signing key replaced by a rotation stops being valid at its retirement; the active one has no end (rotation is the operator's). */
export function retiringKeyExpiry(retiring: readonly { readonly kid: string; readonly retire_after: string }[]): KeyExpiry[] {
  return retiring.map((key) => ({ key: `signing_key:${key.kid}`, expiresAt: new Date(key.retire_after) }));
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * When the process's NATS credential stops being valid, where it says: the
 * user JWT's `exp` of `WRIT_NATS_CREDS` (writ init issues none: then nothing
 * is reported) and the client certificate of `WRIT_NATS_TLS_CERT`. Read at
 * each scrape, so a reissued file shows at once; the seed beside the JWT is
 * never parsed. A file that cannot be read reports nothing (the connection
 * itself reports that).
 */
export async function natsCredentialExpiry(env: Env = process.env): Promise<KeyExpiry[]> {
  const found: KeyExpiry[] = [];
  const creds = env['WRIT_NATS_CREDS']?.trim();
  if (creds) {
    const text = await readFile(creds, 'utf8').catch(() => undefined);
    const exp = text === undefined ? undefined : jwtExpiry(userJwtOf(text));
    if (exp !== undefined) found.push({ key: 'nats_credential', expiresAt: exp });
  }
  const cert = env['WRIT_NATS_TLS_CERT']?.trim();
  if (cert) {
    const pem = await readFile(cert, 'utf8').catch(() => undefined);
    try {
      if (pem !== undefined) found.push({ key: 'nats_tls_certificate', expiresAt: new Date(new X509Certificate(pem).validTo) });
    } catch {
      // Not a certificate we can read: the TLS handshake reports it.
    }
  }
  return found;
}

function jwtExpiry(jwt: string | undefined): Date | undefined {
  const payload = jwt?.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const exp = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown }).exp;
    return typeof exp === 'number' && exp > 0 ? new Date(exp * 1000) : undefined;
  } catch {
    return undefined;
  }
}
