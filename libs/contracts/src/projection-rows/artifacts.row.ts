import { z } from 'zod';
import { RowCount, RowId, RowInstant, RowRef, RowVersion } from './row-fields.js';

/** `<root>.proj.artifacts.<artifact_id>`: the artifact catalog; immutable once recorded (the first record wins). */
export const ArtifactRowSchema = z.strictObject({
  artifact_id: RowId,
  /** SHA-256 (hex) of the content. */
  sha256: z.string(),
  kind: z.string(),
  class: z.string(),
  media_type: z.string(),
  byte_size: RowCount,
  uri: z.string(),
  task_id: RowId,
  step_id: RowRef,
  attempt_id: RowRef,
  producer: z.string(),
  retention_class: z.string(),
  sensitivity_class: z.string(),
  /** The event that recorded it. */
  event_id: z.string(),
  event_type: z.string(),
  task_seq: z.int().min(0),
  created_at: RowInstant,
  row_version: RowVersion,
});
export type ArtifactRow = z.infer<typeof ArtifactRowSchema>;
