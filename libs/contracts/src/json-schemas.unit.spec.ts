import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONTRACT_NAMES, jsonSchemaDocuments, jsonSchemaFileName } from './index.js';

// The committed schemas; `node scripts/generate-schemas.mjs` regenerates them.
const SCHEMAS_DIR = new URL('../../../docs/schemas/', import.meta.url);

describe('docs/schemas', () => {
  const documents = jsonSchemaDocuments();

  it('given the registry, then every contract has exactly one document, named after it', () => {
    expect(documents.map((doc) => doc.contract)).toEqual([...CONTRACT_NAMES]);
    expect(jsonSchemaFileName('ActionRequest')).toBe('action-request.schema.json');
    expect(jsonSchemaFileName('CapabilityGrantClaims')).toBe('capability-grant-claims.schema.json');
    expect(new Set(documents.map((doc) => doc.file)).size).toBe(documents.length);
  });

  it.each(documents.map((doc) => [doc.file, doc] as const))('given the committed %s, then it equals what zod generates now', (file, doc) => {
    // when
    const committed = readFileSync(new URL(file, SCHEMAS_DIR), 'utf8');
    // then (on failure: npx nx run @writ/contracts:build && node scripts/generate-schemas.mjs)
    expect(committed).toBe(doc.text);
  });

  it('given the committed directory, then it holds no schema that is no longer generated', () => {
    const committed = readdirSync(SCHEMAS_DIR).filter((name) => name.endsWith('.schema.json')).sort();
    expect(committed).toEqual(documents.map((doc) => doc.file).sort());
  });

  it('given every document, then it is draft 2020-12 and closed at the top level', () => {
    for (const doc of documents) {
      const schema = JSON.parse(doc.text) as Record<string, unknown>;
      expect(schema.$schema, doc.file).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(schema.type, doc.file).toBe('object');
      expect(schema.additionalProperties, doc.file).toBe(false);
    }
  });
});
