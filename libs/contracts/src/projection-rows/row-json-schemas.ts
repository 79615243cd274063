import { z } from 'zod';
import { ChangesPageSchema, StreamClosingSchema, StreamHeartbeatSchema, StreamRowsSchema } from './changes.js';
import { PROJECTION_ROW_SCHEMAS, PUBLISHED_VIEWS, type PublishedView } from './published-views.js';

/** Where under docs/schemas the dashboard contract's documents live (apart from the registry's, so neither list names the other's files). */
const DIR = 'projection-rows';

/** `actions` → `projection-rows/actions.row.schema.json`. */
export function projectionRowSchemaFile(view: PublishedView): string {
  return `${DIR}/${view}.row.schema.json`;
}

const TITLES: Readonly<Record<PublishedView, string>> = {
  actions: 'ActionRow',
  tasks: 'TaskRow',
  approvals: 'ApprovalRow',
  grants: 'GrantRow',
  receipts: 'ReceiptRow',
  principals: 'PrincipalRow',
  steps: 'StepRow',
  attempts: 'AttemptRow',
  artifacts: 'ArtifactRow',
  decisions: 'DecisionRow',
  cells: 'CellRow',
  working_states: 'WorkingStateRow',
  beliefs: 'BeliefRow',
  memory: 'MemoryRow',
};

function jsonSchema(schema: z.ZodType, title: string, target: 'draft-2020-12' | 'draft-7'): Record<string, unknown> {
  return { ...(z.toJSONSchema(schema, { target, unrepresentable: 'throw' }) as Record<string, unknown>), title };
}

/** The JSON Schema of a view's row: draft 2020-12 (docs/schemas), or draft-07 (what AsyncAPI 3.0's default schema format extends). */
export function projectionRowJsonSchema(view: PublishedView, target: 'draft-2020-12' | 'draft-7' = 'draft-2020-12'): Record<string, unknown> {
  return jsonSchema(PROJECTION_ROW_SCHEMAS[view], TITLES[view], target);
}

export interface ProjectionSchemaDocument {
  /** Path under docs/schemas. */
  readonly file: string;
  readonly text: string;
}

const text = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** Every document of the dashboard contract under docs/schemas: one per published view's row, and the changes feed's messages. */
export function projectionRowSchemaDocuments(): ProjectionSchemaDocument[] {
  return [
    ...PUBLISHED_VIEWS.map((view) => ({ file: projectionRowSchemaFile(view), text: text(projectionRowJsonSchema(view)) })),
    { file: `${DIR}/changes-page.schema.json`, text: text(jsonSchema(ChangesPageSchema, 'ChangesPage', 'draft-2020-12')) },
    { file: `${DIR}/stream-rows.schema.json`, text: text(jsonSchema(StreamRowsSchema, 'StreamRows', 'draft-2020-12')) },
    { file: `${DIR}/stream-heartbeat.schema.json`, text: text(jsonSchema(StreamHeartbeatSchema, 'StreamHeartbeat', 'draft-2020-12')) },
    { file: `${DIR}/stream-closing.schema.json`, text: text(jsonSchema(StreamClosingSchema, 'StreamClosing', 'draft-2020-12')) },
  ];
}
