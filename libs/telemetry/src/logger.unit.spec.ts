import { generateKeyPairSync } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import type { DestinationStream } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';
import { REDACTED } from './redaction.js';
import { startTelemetry, type TelemetryHandle } from './start-telemetry.js';

/** Collects every line the logger writes, parsed. */
function capture(): { stream: DestinationStream; lines: Array<Record<string, unknown>>; raw: string[] } {
  const raw: string[] = [];
  const lines: Array<Record<string, unknown>> = [];
  return {
    raw,
    lines,
    stream: {
      write(line: string) {
        raw.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  };
}

// A real EC private key in SEC1 PEM, generated per run: never key material in the repository.
const PEM = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'sec1' }).toString().trimEnd();

describe('createLogger', () => {
  let telemetry: TelemetryHandle;
  beforeAll(() => {
    telemetry = startTelemetry({ serviceName: 'logger-test', spanExporter: new InMemorySpanExporter() });
  });
  afterAll(async () => {
    await telemetry.shutdown();
  });

  it('given a secret in a nested object, when logged, then no secret value reaches the line', () => {
    const out = capture();
    const log = createLogger('test', { destination: out.stream });
    log.info({ request: { principal: 'agent-1', auth: { password: 'hunter2', jwk: { kty: 'OKP', x: 'pub', d: 'priv-d' } } } }, 'request received');
    const line = out.lines[0] as { request: { principal: string; auth: { password: string; jwk: Record<string, string> } } };
    expect(line.request.principal).toBe('agent-1');
    expect(line.request.auth.password).toBe(REDACTED);
    expect(line.request.auth.jwk['d']).toBe(REDACTED);
    expect(out.raw.join('')).not.toMatch(/hunter2|priv-d/);
  });

  it('given a secret in the message string or a format argument, when logged, then it is masked', () => {
    const out = capture();
    const log = createLogger('test', { destination: out.stream });
    log.warn(`signing with ${PEM}`);
    log.warn('upstream said %s', 'Authorization: Bearer abcdefghijklmnopqrstuv');
    expect(out.raw.join('')).not.toMatch(/MHcCAQEEIBk3n1tQ|abcdefghijklmnopqrstuv/);
    expect(String(out.lines[0]?.['msg'])).toContain(REDACTED);
    expect(String(out.lines[1]?.['msg'])).toContain(REDACTED);
  });

  it('given an error whose message holds a secret, when logged, then message and stack are masked', () => {
    const out = capture();
    const log = createLogger('test', { destination: out.stream });
    log.error(new Error('connect nats://writ:s3cr3tpw@10.0.0.1:4222 failed'));
    log.error({ err: new Error('bad api_key=zz-top-secret') }, 'failed');
    expect(out.raw.join('')).not.toMatch(/s3cr3tpw|zz-top-secret/);
  });

  it('given child bindings with a secret, when logged, then the binding is masked too', () => {
    const out = capture();
    const log = createLogger('test', { destination: out.stream }).child({ service: 'executor', token: 'tok-abc-123' });
    log.info('hello');
    expect(out.lines[0]?.['service']).toBe('executor');
    expect(out.lines[0]?.['token']).toBe(REDACTED);
    expect(out.raw.join('')).not.toContain('tok-abc-123');
  });

  it('given an active span, when logging, then the line carries its trace_id and span_id', () => {
    const out = capture();
    const log = createLogger('test', { destination: out.stream });
    const span = trace.getTracer('test').startSpan('work');
    const ids = span.spanContext();
    trace.getTracer('test').startActiveSpan('work', (active) => {
      log.info('inside');
      active.end();
      expect(out.lines[0]?.['trace_id']).toBe(active.spanContext().traceId);
      expect(out.lines[0]?.['span_id']).toBe(active.spanContext().spanId);
    });
    span.end();
    log.info('outside');
    expect(out.lines[1]?.['trace_id']).toBeUndefined();
    expect(ids.traceId).toMatch(/^[0-9a-f]{32}$/);
  });
});
