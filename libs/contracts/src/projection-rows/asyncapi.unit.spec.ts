import { Parser } from '@asyncapi/parser';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ASYNCAPI_FILE, PROJECTION_HEADERS, PUBLISHED_VIEWS, asyncApiDocument, asyncApiText } from './index.js';

// The committed document; `node scripts/generate-schemas.mjs` regenerates it.
const COMMITTED = new URL(`../../../../${ASYNCAPI_FILE}`, import.meta.url);

/** Spectral's severities as @asyncapi/parser reports them: 0 error, 1 warning, 2 info, 3 hint. */
const ERROR = 0;
const WARNING = 1;

describe('the AsyncAPI document of the public subjects', () => {
  it('given the committed docs/asyncapi.json, then it equals what the zod contracts generate now', () => {
    // then (on failure: npx nx run @writ/contracts:build && node scripts/generate-schemas.mjs)
    expect(readFileSync(COMMITTED, 'utf8')).toBe(asyncApiText());
  });

  it('given the document for the default root and for another, when @asyncapi/parser validates it, then it reports no error and no warning', async () => {
    const parser = new Parser();
    for (const doc of [asyncApiDocument(), asyncApiDocument({ root: 'acme.writ', natsHost: 'nats.example:4222' })]) {
      // when
      const { document, diagnostics } = await parser.parse(JSON.stringify(doc));
      // then
      const problems = diagnostics.filter((d) => d.severity === ERROR || d.severity === WARNING).map((d) => `${d.code} ${d.path.join('.')}: ${d.message}`);
      expect(problems).toEqual([]);
      expect(document).toBeDefined();
    }
  });

  it('given the parsed document, then it has the ingress channel and one channel per published view, with the projection headers required', async () => {
    const { document } = await new Parser().parse(JSON.stringify(asyncApiDocument({ root: 'acme' })));
    const addresses = document?.channels().all().map((channel) => channel.address()) ?? [];
    expect(addresses).toContain('acme.ingress.action.{principal_id}');
    for (const view of PUBLISHED_VIEWS) expect(addresses.some((address) => address?.startsWith(`acme.proj.${view}.{`))).toBe(true);
    const actions = document?.channels().all().find((channel) => channel.address() === 'acme.proj.actions.{action_request_id}');
    const headers = actions?.messages().all()[0]?.headers()?.json() as { required?: string[] } | undefined;
    expect(headers?.required?.sort()).toEqual(Object.values(PROJECTION_HEADERS).sort());
    // Writ receives what agents send, and sends what dashboards receive.
    const actionsOf = (address: string) => document?.operations().all().filter((op) => op.channels().all().some((c) => c.address() === address)).map((op) => op.action());
    expect(actionsOf('acme.ingress.action.{principal_id}')).toEqual(['receive']);
    expect(actionsOf('acme.proj.actions.{action_request_id}')).toEqual(['send']);
  });

  it('given a document with a broken reference, when it is validated, then the parser reports an error (the check can fail)', async () => {
    const doc = asyncApiDocument() as { channels: Record<string, { messages: Record<string, unknown> }> };
    const broken = { ...doc, channels: { ...doc.channels, projActions: { ...doc.channels['projActions'], messages: { row: { $ref: '#/components/messages/NoSuchRow' } } } } };
    const { diagnostics } = await new Parser().parse(JSON.stringify(broken));
    expect(diagnostics.some((d) => d.severity === ERROR)).toBe(true);
  });
});
