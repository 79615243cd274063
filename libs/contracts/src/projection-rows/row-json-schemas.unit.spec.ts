import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PROJECTION_HEADERS, PUBLISHED_VIEWS, ProjectionChangeSchema, TaskRowSchema, projectionMsgId, projectionRowSchemaDocuments, projectionRowSchemaFile } from './index.js';

// The committed documents; `node scripts/generate-schemas.mjs` regenerates them.
const SCHEMAS_DIR = new URL('../../../../docs/schemas/', import.meta.url);

describe('docs/schemas/projection-rows', () => {
  const documents = projectionRowSchemaDocuments();

  it('given every published view, then its row has a document, closed at the top level, with a required row_version', () => {
    for (const view of PUBLISHED_VIEWS) {
      const doc = documents.find((d) => d.file === projectionRowSchemaFile(view));
      const schema = JSON.parse(doc?.text ?? '{}') as { $schema?: string; additionalProperties?: unknown; required?: string[] };
      expect(schema.$schema, view).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(schema.additionalProperties, view).toBe(false);
      expect(schema.required, view).toContain('row_version');
    }
  });

  it.each(documents.map((doc) => [doc.file, doc] as const))('given the committed %s, then it equals what zod generates now', (file, doc) => {
    expect(readFileSync(new URL(file, SCHEMAS_DIR), 'utf8')).toBe(doc.text);
  });

  it('given the committed directory, then it holds no document that is no longer generated', () => {
    const committed = readdirSync(new URL('projection-rows/', SCHEMAS_DIR)).map((name) => `projection-rows/${name}`).sort();
    expect(committed).toEqual(documents.map((doc) => doc.file).sort());
  });
});

describe('a change of the feed', () => {
  const task = {
    task_id: 'task-1',
    title: 't',
    goal: 'g',
    status: 'created',
    owner_principal_id: 'agent-1',
    policy_profile: null,
    last_task_seq: 1,
    last_event_type: 'task.created',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    row_version: 7,
  };

  it('given a task row, when it is a change of view tasks, then it parses; of view actions, then it does not', () => {
    expect(ProjectionChangeSchema.safeParse({ view: 'tasks', id: 'task-1', row_version: 7, row: task }).success).toBe(true);
    expect(ProjectionChangeSchema.safeParse({ view: 'actions', id: 'task-1', row_version: 7, row: task }).success).toBe(false);
  });

  it('given a row without row_version, or with a column no schema names, then it is refused', () => {
    const { row_version: _omitted, ...unversioned } = task;
    expect(TaskRowSchema.safeParse(unversioned).success).toBe(false);
    expect(TaskRowSchema.safeParse({ ...task, secret: 'x' }).success).toBe(false);
  });

  it('given a view, an id and a version, then the message id names all three and differs when any differs', () => {
    expect(PROJECTION_HEADERS.msgId).toBe('Writ-Msg-Id');
    expect(projectionMsgId('tasks', 'task-1', 7)).toBe('tasks.task-1.7');
    const ids = new Set([projectionMsgId('tasks', 'task-1', 7), projectionMsgId('tasks', 'task-1', 8), projectionMsgId('tasks', 'task-2', 7), projectionMsgId('actions', 'task-1', 7)]);
    expect(ids.size).toBe(4);
  });
});
