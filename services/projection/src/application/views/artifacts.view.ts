import { Artifact } from '@writ/contracts';
import { field, idField, instant, occurredAt, type ProjectedEvent } from '../projected-event.js';
import type { Locator, View, Folded } from './view.js';
import type { ArtifactRow } from '@writ/contracts/projection-rows';

/**
 * The artifact catalog (Hermit 13.6, 14): every artifact an execution
 * captured (`execution.completed.artifacts`), by id, with its content hash,
 * kind, size and the task, step and attempt that produced it. Artifacts are
 * immutable: the first record of an id is the artifact. The content itself
 * stays in the artifact store; a row is only its description.
 */
export type { ArtifactRow };

/** Events whose payload lists artifacts in `artifacts`. */
const ARTIFACT_EVENTS = new Set(['execution.completed']);

/** The artifacts of the event that parse as the Artifact contract; anything else is passed over. */
function artifactsOf(event: ProjectedEvent): Artifact[] {
  if (event.aggregate.type !== 'task' || !ARTIFACT_EVENTS.has(event.envelope.event_type)) return [];
  const listed = field(event.envelope.payload, 'artifacts');
  if (!Array.isArray(listed)) return [];
  return listed.flatMap((item: unknown) => {
    const parsed = Artifact.safeParse(item);
    return parsed.success ? [parsed.data] : [];
  });
}

function locate(event: ProjectedEvent): Locator[] | undefined {
  const artifacts = artifactsOf(event);
  return artifacts.length === 0 ? undefined : artifacts.map((artifact) => ({ artifact_id: artifact.artifact_id }));
}

function fold(row: ArtifactRow | undefined, event: ProjectedEvent, locator?: Locator): Folded<ArtifactRow> | undefined {
  if (row !== undefined) return row;
  const artifact = artifactsOf(event).find((a) => a.artifact_id === locator?.['artifact_id']);
  if (artifact === undefined) return undefined;
  const { envelope } = event;
  return {
    artifact_id: artifact.artifact_id,
    sha256: artifact.content_hash,
    kind: artifact.kind,
    class: artifact.class,
    media_type: artifact.media_type,
    byte_size: artifact.byte_size,
    uri: artifact.uri,
    task_id: event.aggregate.id,
    step_id: artifact.step_id ?? envelope.step_id ?? null,
    attempt_id: artifact.attempt_id ?? envelope.attempt_id ?? idField(envelope.payload, 'attempt_id'),
    producer: artifact.producer,
    retention_class: artifact.retention_class,
    sensitivity_class: artifact.sensitivity_class,
    event_id: envelope.event_id,
    event_type: envelope.event_type,
    task_seq: envelope.task_seq,
    created_at: instant(artifact.created_at) ?? occurredAt(event),
  };
}

export const artifactsView: View<ArtifactRow> = {
  name: 'artifacts',
  primaryKey: ['artifact_id'],
  published: true,
  topicId: (row) => row.artifact_id,
  locate,
  fold,
};
