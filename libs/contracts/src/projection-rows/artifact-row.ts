import { z } from 'zod';
import { RowCount, RowId, RowTimestamp } from './row-fields.js';

/** An artifact of the catalog (`execution.completed.artifacts[]`): the `artifacts` view; the content is in the artifact store, by sha256. */
export const ArtifactRow = z
  .strictObject({
    artifact_id: RowId,
    sha256: z.string().describe('SHA-256 (hex) of the content.'),
    kind: z.string(),
    class: z.string(),
    media_type: z.string(),
    byte_size: RowCount,
    uri: z.string(),
    task_id: RowId,
    step_id: RowId.nullable(),
    attempt_id: RowId.nullable(),
    producer: z.string(),
    retention_class: z.string(),
    sensitivity_class: z.string(),
    event_id: RowId.describe('The event that recorded it.'),
    event_type: z.string(),
    task_seq: RowCount,
    created_at: RowTimestamp,
  })
  .meta({ title: 'ArtifactRow', description: 'An artifact of the catalog (the artifacts view).' });
export type ArtifactRow = z.infer<typeof ArtifactRow>;
