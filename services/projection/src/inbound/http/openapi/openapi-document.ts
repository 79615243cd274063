import { PROBLEM_JSON } from '@writ/contracts';
import { z } from 'zod';

/**
 * An OpenAPI 3.1 document assembled from zod: every schema a route answers
 * or accepts is one of `components` (generated together by zod's own
 * `z.toJSONSchema`, JSON Schema 2020-12, the dialect OpenAPI 3.1 uses, with
 * references between them as `#/components/schemas/<name>`), and every
 * parameter's schema is generated from the zod schema the service parses it
 * with. Nothing is written by hand but the words.
 */

type JsonObject = Record<string, unknown>;

export interface ApiParameter {
  readonly name: string;
  readonly schema: z.ZodType;
  /** Taken from the schema's own description when absent. */
  readonly description?: string;
  readonly required?: boolean;
}

export interface ApiReply {
  readonly description: string;
  /** A component (by identity), or a JSON Schema written out for what is not JSON described by zod (metrics text, this document). */
  readonly schema?: z.ZodType | { readonly jsonSchema: JsonObject };
  /** Default `application/json`. */
  readonly mediaType?: string;
}

export interface ApiRoute {
  readonly method: 'get' | 'post';
  /** OpenAPI path template: `/v1/actions/{id}`. */
  readonly path: string;
  readonly operationId: string;
  readonly tag: string;
  readonly summary: string;
  readonly description?: string;
  /** Needs no bearer token (`@PublicRoute()`). */
  readonly public?: boolean;
  readonly pathParameters?: readonly ApiParameter[];
  /** A strict zod object whose properties are the query parameters (what the service parses), or the parameters one by one. */
  readonly query?: z.ZodObject | readonly ApiParameter[];
  readonly headers?: readonly ApiParameter[];
  readonly body?: { readonly description: string; readonly content: Readonly<Record<string, z.ZodType | { readonly jsonSchema: JsonObject }>> };
  readonly replies: Readonly<Record<number, ApiReply>>;
  /** Statuses this route answers as problem details, besides 400 (when it takes input), 401 (unless public) and 500, added for every route. */
  readonly problems?: readonly number[];
}

export interface OpenApiInput {
  readonly title: string;
  readonly version: string;
  readonly description: string;
  readonly routes: readonly ApiRoute[];
  /** Every named schema, as it appears under `components.schemas`. */
  readonly components: Readonly<Record<string, z.ZodType>>;
  /** Error code → status (the HTTP adapter's one table): each problem response lists the codes that answer with its status. */
  readonly statusByCode: Readonly<Record<string, number>>;
  readonly security: { readonly name: string; readonly description: string };
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad request',
  401: 'No valid bearer token',
  403: "Outside the caller's scope",
  404: 'Not found',
  409: 'Conflict',
  413: 'Too large',
  422: 'Refused by the answering service',
  500: 'Internal error',
  502: 'The answering service failed',
  503: 'Unavailable',
  504: 'Timed out',
};

/** A JSON Schema as OpenAPI embeds it: no `$schema` / `$id` of its own (the document's dialect applies). */
function embedded(schema: JsonObject): JsonObject {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

export function openApiDocument(input: OpenApiInput): JsonObject {
  const registry = z.registry<{ id: string }>();
  const names = new Map<z.ZodType, string>();
  for (const [name, schema] of Object.entries(input.components)) {
    registry.add(schema, { id: name });
    names.set(schema, name);
  }
  const generated = z.toJSONSchema(registry, { target: 'draft-2020-12', unrepresentable: 'throw', uri: (id) => `#/components/schemas/${id}` }) as {
    schemas: Record<string, JsonObject>;
  };
  const schemas = Object.fromEntries(Object.entries(generated.schemas).map(([name, schema]) => [name, embedded(schema)]));

  const ref = (schema: z.ZodType | { readonly jsonSchema: JsonObject }, where: string): JsonObject => {
    if ('jsonSchema' in schema && !(schema instanceof z.ZodType)) return schema.jsonSchema;
    const name = names.get(schema as z.ZodType);
    if (name === undefined) throw new Error(`${where}: its schema is not one of the document's components; add it to them`);
    return { $ref: `#/components/schemas/${name}` };
  };
  const parameter = (place: 'path' | 'query' | 'header', p: ApiParameter): JsonObject => {
    const schema = embedded(z.toJSONSchema(p.schema, { target: 'draft-2020-12', unrepresentable: 'throw' }) as JsonObject);
    const { description: own, ...rest } = schema;
    const description = p.description ?? own;
    return {
      name: p.name,
      in: place,
      required: place === 'path' ? true : (p.required ?? false),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    };
  };
  const queryParameters = (query: ApiRoute['query']): readonly JsonObject[] => {
    if (query === undefined) return [];
    if (Array.isArray(query)) return (query as readonly ApiParameter[]).map((p) => parameter('query', p));
    return Object.entries((query as z.ZodObject).shape).map(([name, schema]) =>
      parameter('query', { name, schema: schema as z.ZodType, required: !(schema as z.ZodType).safeParse(undefined).success }),
    );
  };
  const problem = (status: number): JsonObject => {
    const codes = Object.entries(input.statusByCode)
      .filter(([, s]) => s === status)
      .map(([code]) => code);
    return {
      description: `${STATUS_TEXT[status] ?? 'Error'}${codes.length === 0 ? '' : ` (${codes.join(', ')})`}: problem details with Writ's code.`,
      content: { [PROBLEM_JSON]: { schema: { $ref: '#/components/schemas/ProblemDetails' } } },
    };
  };

  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const route of input.routes) {
    const where = `${route.method.toUpperCase()} ${route.path}`;
    const parameters = [
      ...(route.pathParameters ?? []).map((p) => parameter('path', p)),
      ...queryParameters(route.query),
      ...(route.headers ?? []).map((p) => parameter('header', p)),
    ];
    const responses: Record<string, JsonObject> = {};
    for (const [status, reply] of Object.entries(route.replies)) {
      responses[status] = {
        description: reply.description,
        ...(reply.schema === undefined ? {} : { content: { [reply.mediaType ?? 'application/json']: { schema: ref(reply.schema, where) } } }),
      };
    }
    const statuses = new Set([...(parameters.length > 0 || route.body !== undefined ? [400] : []), ...(route.public === true ? [] : [401]), ...(route.problems ?? []), 500]);
    for (const status of [...statuses].sort((a, b) => a - b)) responses[String(status)] = problem(status);
    const operation: JsonObject = {
      operationId: route.operationId,
      tags: [route.tag],
      summary: route.summary,
      ...(route.description === undefined ? {} : { description: route.description }),
      ...(route.public === true ? { security: [] } : {}),
      ...(parameters.length === 0 ? {} : { parameters }),
      ...(route.body === undefined
        ? {}
        : {
            requestBody: {
              required: true,
              description: route.body.description,
              content: Object.fromEntries(Object.entries(route.body.content).map(([media, schema]) => [media, { schema: ref(schema, where) }])),
            },
          }),
      responses,
    };
    const byMethod = (paths[route.path] ??= {});
    if (byMethod[route.method] !== undefined) throw new Error(`${where} is described twice`);
    byMethod[route.method] = operation;
  }

  return {
    openapi: '3.1.0',
    info: { title: input.title, version: input.version, description: input.description },
    tags: [...new Set(input.routes.map((route) => route.tag))].map((name) => ({ name })),
    security: [{ [input.security.name]: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: { [input.security.name]: { type: 'http', scheme: 'bearer', bearerFormat: 'JWS', description: input.security.description } },
    },
  };
}
