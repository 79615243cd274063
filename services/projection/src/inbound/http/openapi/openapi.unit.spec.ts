import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { PROBLEM_JSON } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { projectionOpenApi } from './openapi.controller.js';

type Json = Record<string, unknown>;
type Operation = { security?: unknown[]; responses: Record<string, { content?: Record<string, { schema: Json }> }>; parameters?: Array<{ name: string; in: string; schema: Json }> };

describe('the OpenAPI document', () => {
  const document = projectionOpenApi('0.0.0-test');
  const operations = Object.entries(document.paths as Record<string, Record<string, Operation>>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ where: `${method.toUpperCase()} ${path}`, operation })),
  );

  it('given the routes and contracts, when the document is built, then it validates as OpenAPI 3.1', async () => {
    // when
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    // then
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  // The OpenAPI 3.1 meta-schema leaves Schema Objects to their dialect, so each is checked as JSON Schema 2020-12 here.
  it('given every schema of the document, then each is valid JSON Schema 2020-12 and every $ref resolves', () => {
    // given
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const schemas = (document.components as { schemas: Record<string, Json> }).schemas;
    ajv.addSchema({ $id: 'writ:openapi', components: document.components }, 'writ:openapi');
    // then
    for (const [name, schema] of Object.entries(schemas)) {
      expect(ajv.validateSchema(schema), `${name}: ${ajv.errorsText()}`).toBe(true);
      expect(ajv.getSchema(`writ:openapi#/components/schemas/${name}`), name).toBeTypeOf('function');
    }
    for (const { where, operation } of operations) {
      for (const parameter of operation.parameters ?? []) expect(ajv.validateSchema(parameter.schema), `${where} ${parameter.name}: ${ajv.errorsText()}`).toBe(true);
    }
  });

  it('given every operation, then its errors are problem details, and only public routes need no token', () => {
    for (const { where, operation } of operations) {
      expect(operation.responses['500']?.content?.[PROBLEM_JSON]?.schema, where).toEqual({ $ref: '#/components/schemas/ProblemDetails' });
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) >= 400) expect(Object.keys(response.content ?? {}), `${where} ${status}`).toEqual([PROBLEM_JSON]);
      }
      if (operation.security === undefined) expect(operation.responses['401'], where).toBeDefined();
    }
    const open = operations.filter(({ operation }) => Array.isArray(operation.security) && operation.security.length === 0).map(({ where }) => where);
    expect(open.sort()).toEqual(
      [
        'GET /healthz',
        'GET /metrics',
        'GET /readyz',
        'GET /v1/asyncapi.json',
        'GET /v1/keys',
        'GET /v1/openapi.json',
        'GET /v1/problems/{code}',
        'POST /v1/actions',
        'POST /v1/approvals/{id}/deny',
        'POST /v1/approvals/{id}/grant',
        'POST /v1/grants/{id}/revoke',
        'POST /v1/tasks/{id}/claims/{kind}',
        'POST /v1/tasks/{id}/working-state',
        'POST /v1/tasks/{id}/beliefs',
        'POST /v1/messages',
      ].sort(),
    );
    expect(document.security).toEqual([{ writHttpToken: [] }]);
  });

  it('given a list endpoint, then its parameters are the query contract with the documented limit', () => {
    const tasks = operations.find(({ where }) => where === 'GET /v1/tasks')?.operation;
    expect(tasks?.parameters?.map((p) => p.name)).toEqual(['status', 'principal_id', 'policy_profile', 'q', 'since', 'until', 'limit', 'cursor']);
    expect(tasks?.parameters?.find((p) => p.name === 'limit')?.schema).toEqual({ type: 'integer', minimum: 1, maximum: 1000, default: 200 });
    expect(tasks?.responses['200']?.content?.['application/json']?.schema).toEqual({ $ref: '#/components/schemas/TaskPage' });
  });
});
