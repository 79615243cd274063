import { INGRESS_IDEMPOTENCY_KEY_HEADER } from '../subjects.js';
import { PROJECTION_HEADERS, PROJECTION_ROW_SCHEMA_VERSIONS, PUBLISHED_VIEWS, type PublishedView } from './published-views.js';
import { projectionRowJsonSchema } from './row-json-schemas.js';

/**
 * The AsyncAPI 3.0 document of Writ's public subjects, generated from the
 * zod contracts: what agents publish (`<root>.ingress.action.<principal>`)
 * and what dashboards subscribe to (`<root>.proj.<view>.<id>`), with the
 * headers of each. Operations are Writ's own (it receives ingress, it sends
 * projections). Committed as docs/asyncapi.json (for the default root) and
 * served by the projection at `GET /v1/asyncapi.json` (for its own root).
 * The request/reply subjects under `<root>.qry.>` are between services and
 * the operator's CLI, not public, and are not described here.
 */

/** Where the committed document lives, from the repository root. */
export const ASYNCAPI_FILE = 'docs/asyncapi.json';

export interface AsyncApiOptions {
  /** The deployment's subject root (`WRIT_SUBJECT_ROOT`); default `writ`. */
  readonly root?: string;
  /** `host:port` of Writ's NATS; default `127.0.0.1:4223`. */
  readonly natsHost?: string;
}

/** The id each view's rows are keyed by in their subject. */
const TOPIC_ID: Readonly<Record<PublishedView, string>> = {
  actions: 'action_request_id',
  tasks: 'task_id',
  approvals: 'approval_id',
  grants: 'grant_id',
  receipts: 'receipt_id',
  principals: 'principal_id',
  steps: 'step_id',
  attempts: 'attempt_id',
  artifacts: 'artifact_id',
  decisions: 'decision_id',
  cells: 'cell_id',
  working_states: 'task_id',
  beliefs: 'belief_id',
  memory: 'memory_id',
};

const camel = (view: string): string => view.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()).replace(/^./, (c) => c.toUpperCase());
const ref = (path: string) => ({ $ref: `#/${path}` });
const DECIMAL = '^(0|[1-9][0-9]*)$';

/** A draft-07 schema as AsyncAPI's default schema format takes it: without `$schema`. */
function asyncApiSchema(view: PublishedView): Record<string, unknown> {
  const { $schema: _dialect, ...schema } = projectionRowJsonSchema(view, 'draft-7');
  return schema;
}

function projectionHeaders(view: PublishedView): Record<string, unknown> {
  return {
    type: 'object',
    required: Object.values(PROJECTION_HEADERS),
    properties: {
      [PROJECTION_HEADERS.msgId]: {
        type: 'string',
        pattern: `^${view}\\.[A-Za-z0-9_-]{1,128}\\.[1-9][0-9]*$`,
        description: '`<view>.<id>.<row_version>`: a redelivery of the same change carries the same id; every other change another',
      },
      [PROJECTION_HEADERS.view]: { type: 'string', const: view, description: 'the view (the subject\'s `<view>` token)' },
      [PROJECTION_HEADERS.schemaVersion]: {
        type: 'string',
        const: String(PROJECTION_ROW_SCHEMA_VERSIONS[view]),
        description: 'the version of this view\'s row schema (docs/schemas/projection-rows)',
      },
      [PROJECTION_HEADERS.rowVersion]: {
        type: 'string',
        pattern: '^[1-9][0-9]*$',
        description: 'the row\'s `row_version`: the log sequence of the last event applied to it',
      },
      [PROJECTION_HEADERS.prevVersion]: {
        type: 'string',
        pattern: DECIMAL,
        description: 'the version that last changed this view before this one (0: none). Holding less than it means a change was missed: re-read GET /v1/changes?since=<what you hold>',
      },
      [PROJECTION_HEADERS.versionRows]: {
        type: 'string',
        pattern: '^[1-9][0-9]*$',
        description: 'how many rows of this view this version changed: the version is complete once that many were received',
      },
    },
  };
}

/** The document for one deployment's root. */
export function asyncApiDocument(options: AsyncApiOptions = {}): Record<string, unknown> {
  const root = options.root ?? 'writ';
  const channels: Record<string, unknown> = {
    ingressAction: {
      address: `${root}.ingress.action.{principal_id}`,
      title: 'An agent\'s signed ActionRequests',
      description:
        'Captured by the ingress stream; ingress records every message before it judges it (invariant 1). An agent\'s bus credential may publish its own subject only.',
      parameters: { principal_id: { description: 'the registered principal the request comes from; the JWS must be signed by one of its active keys' } },
      messages: { actionRequestJws: ref('components/messages/ActionRequestJws') },
    },
  };
  const operations: Record<string, unknown> = {
    receiveActionRequest: {
      action: 'receive',
      channel: ref('channels/ingressAction'),
      title: 'Ingress receives an ActionRequest',
      summary: 'Publish with JetStream (the ingress stream acknowledges); the outcome is on <root>.proj.actions.<action_request_id>, and on the HTTP API (docs/governed-path.md, "Action status").',
      messages: [ref('channels/ingressAction/messages/actionRequestJws')],
    },
  };
  const messages: Record<string, unknown> = {
    ActionRequestJws: {
      name: 'ActionRequestJws',
      title: 'A signed ActionRequest',
      summary: 'A compact JWS (EdDSA, header kid = the principal\'s key id) whose payload is an ActionRequest (docs/schemas/action-request.schema.json).',
      contentType: 'application/jose',
      headers: {
        type: 'object',
        properties: {
          [INGRESS_IDEMPOTENCY_KEY_HEADER]: {
            type: 'string',
            minLength: 1,
            maxLength: 256,
            description: 'the idempotency key, scoped to the principal: the same bytes under the same key are a duplicate; another body under it is rejected INGRESS_IDEMPOTENCY_CONFLICT. Default: the claimed action_request_id',
          },
          'Nats-Msg-Id': {
            type: 'string',
            minLength: 1,
            maxLength: 256,
            deprecated: true,
            description: 'read as the idempotency key when Writ-Idempotency-Key is absent (older clients); JetStream dedupes it across every principal\'s subject, so prefer Writ-Idempotency-Key',
          },
          traceparent: { type: 'string', description: 'W3C trace context (optional)' },
          tracestate: { type: 'string', description: 'W3C trace context (optional)' },
        },
      },
      payload: { type: 'string', pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$', maxLength: 262144 },
    },
  };
  const schemas: Record<string, unknown> = {};
  for (const view of PUBLISHED_VIEWS) {
    const name = camel(view);
    const id = TOPIC_ID[view];
    channels[`proj${name}`] = {
      address: `${root}.proj.${view}.{${id}}`,
      title: `Changed rows of the ${view} view`,
      description:
        'Core NATS, published after the projection commits, best effort: a reader that misses one (a gap in Writ-Prev-Version, a reconnect) re-reads GET /v1/changes?since=<the highest version it holds>. A dashboard credential may subscribe to <root>.proj.> only.',
      parameters: { [id]: { description: `the row's ${id}` } },
      messages: { row: ref(`components/messages/${name}Row`) },
    };
    operations[`send${name}Row`] = {
      action: 'send',
      channel: ref(`channels/proj${name}`),
      title: `The projection publishes a changed ${view} row`,
      messages: [ref(`channels/proj${name}/messages/row`)],
    };
    messages[`${name}Row`] = {
      name: `${name}Row`,
      title: `A row of ${view}`,
      summary: `The row as committed, JSON (docs/schemas/projection-rows/${view}.row.schema.json).`,
      contentType: 'application/json',
      headers: projectionHeaders(view),
      payload: ref(`components/schemas/${name}Row`),
    };
    schemas[`${name}Row`] = asyncApiSchema(view);
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Writ bus: ingress and projections',
      version: '1.0.0',
      description:
        `Writ's public subjects under the subject root \`${root}\`: agents publish signed ActionRequests; dashboards subscribe to the projection's rows. ` +
        'Generated from the zod contracts (@writ/contracts/projection-rows); docs/dashboard-contract.md explains the snapshot and resume protocol.',
    },
    defaultContentType: 'application/json',
    servers: {
      writ: {
        host: options.natsHost ?? '127.0.0.1:4223',
        protocol: 'nats',
        description: 'Writ\'s own nats-server: decentralized JWT auth, anonymous connections refused (docs/security.md)',
        security: [ref('components/securitySchemes/natsCredentials')],
      },
    },
    channels,
    operations,
    components: {
      securitySchemes: {
        natsCredentials: {
          type: 'asymmetricEncryption',
          description: 'a NATS .creds file (user JWT + nkey seed) issued by writ init / writ principal add: an agent may publish its own ingress subject, a dashboard subscribe to <root>.proj.>',
        },
      },
      messages,
      schemas,
    },
  };
}

/** The committed file's text: two-space JSON and a final newline. */
export function asyncApiText(options: AsyncApiOptions = {}): string {
  return `${JSON.stringify(asyncApiDocument(options), null, 2)}\n`;
}
