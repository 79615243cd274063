import { EventEmitter } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTelemetry, type TelemetryHandle } from '@writ/telemetry';
import { afterEach, describe, expect, it } from 'vitest';
import { countDeadLetters, natsCredentialExpiry, observeRuntimeMetrics, retiringKeyExpiry } from './runtime-metrics.js';

const NOW = Date.parse('2026-11-29T02:00:00Z');
const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
/** A `.creds` text as `nsc` writes it; the seed line is a placeholder, never parsed. */
const credsWith = (claims: object) =>
  `-----BEGIN NATS USER JWT-----\n${b64({ typ: 'JWT', alg: 'ed25519-nkey' })}.${b64(claims)}.c2ln\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\nnot-a-seed\n------END USER NKEY SEED------\n`;

describe('natsCredentialExpiry', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'writ-creds-'));

  it('given a user JWT with exp, then its expiry is reported as nats_credential', async () => {
    const file = path.join(dir, 'exp.creds');
    writeFileSync(file, credsWith({ sub: 'UABC', exp: NOW / 1000 + 3600 }));
    expect(await natsCredentialExpiry({ WRIT_NATS_CREDS: file })).toEqual([{ key: 'nats_credential', expiresAt: new Date(NOW + 3_600_000) }]);
  });

  it('given a user JWT without exp (what writ init issues), or no credential file, then nothing is reported', async () => {
    const file = path.join(dir, 'forever.creds');
    writeFileSync(file, credsWith({ sub: 'UABC' }));
    expect(await natsCredentialExpiry({ WRIT_NATS_CREDS: file })).toEqual([]);
    expect(await natsCredentialExpiry({ WRIT_NATS_CREDS: path.join(dir, 'missing.creds') })).toEqual([]);
    expect(await natsCredentialExpiry({})).toEqual([]);
  });
});

describe('retiringKeyExpiry', () => {
  it('given a key replaced by a rotation, then it expires at its retire_after, named by its kid', () => {
    expect(retiringKeyExpiry([{ kid: 'k1', retire_after: '2026-11-29T02:05:00Z' }])).toEqual([{ key: 'signing_key:k1', expiresAt: new Date('2026-11-29T02:05:00Z') }]);
  });
});

describe('the runtime metrics of a service', () => {
  let handle: TelemetryHandle | undefined;
  afterEach(async () => {
    await handle?.shutdown();
    handle = undefined;
  });

  it('given a ready process with one consumer behind, a quarantined message, a key retiring and a dead letter, when scraped, then each figure is there', async () => {
    handle = startTelemetry({ serviceName: 'runtime-test' });
    const bus = new EventEmitter();
    countDeadLetters(bus);
    const stop = observeRuntimeMetrics({
      service: 'policy',
      ready: async () => true,
      consumers: () => [{ stream: 'WRIT_COMMANDS', durable: 'policy', pending: 7, ackPending: 2, redelivered: 1, stuckMs: 30_000 }],
      quarantined: () => ({ total: 1, by_reason: { QUARANTINE_NOT_JSON: 1 } }),
      keys: () => [{ key: 'signing_key:k1', expiresAt: new Date(NOW + 60_000) }],
      now: () => NOW,
    });
    bus.emit('dead-letter', { stream: 'WRIT_COMMANDS', consumer: 'policy', failure: { code: 'BUS_RETRIES_EXHAUSTED', message: 'no' } });

    const text = await handle.prometheus!.scrape();
    stop();

    const labels = 'stream="WRIT_COMMANDS",durable="policy",service_name="runtime-test"';
    expect(text).toContain('writ_service_ready{service="policy",service_name="runtime-test"} 1');
    expect(text).toContain(`writ_consumer_pending_messages{${labels}} 7`);
    expect(text).toContain(`writ_consumer_ack_pending_messages{${labels}} 2`);
    expect(text).toContain(`writ_consumer_redelivered_messages{${labels}} 1`);
    expect(text).toContain(`writ_consumer_stalled_seconds{${labels}} 30`);
    expect(text).toContain('writ_quarantined_messages_total{service="policy",reason="QUARANTINE_NOT_JSON",service_name="runtime-test"} 1');
    expect(text).toContain('writ_key_expiry_seconds{service="policy",key="signing_key:k1",service_name="runtime-test"} 60');
    expect(text).toContain('writ_dead_letters_total{stream="WRIT_COMMANDS",durable="policy",reason="BUS_RETRIES_EXHAUSTED",service_name="runtime-test"} 1');
  });
});
