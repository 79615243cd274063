import { z } from 'zod';
import { Id, Name, Ref, Sha256Hex, Timestamp } from './ids.js';
import { TrustTier } from './trust-tier.js';

/** Artifact classes (Hermit 14.1). */
export const ArtifactClass = z.enum(['source', 'working', 'derived', 'evidence', 'deliverable', 'audit']);
export type ArtifactClass = z.infer<typeof ArtifactClass>;

/** Artifact kinds the spec suggests (Hermit 14.1); `Artifact.kind` accepts any dotted name. */
export const KNOWN_ARTIFACT_KINDS = Object.freeze([
  'context.pack',
  'action.request',
  'policy.result',
  'approval.packet',
  'state.witness',
  'environment.snapshot',
  'workspace.snapshot',
  'search.bundle',
  'web.snapshot',
  'file.snapshot',
  'file.preimage',
  'patch',
  'diff',
  'command.transcript',
  'test.report',
  'image',
  'binary.attachment',
  'belief.extract',
  'memory.promotion',
  'receipt.bundle',
] as const);

const MediaType = z
  .string()
  .max(255)
  .regex(/^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*(?:;.*)?$/i, 'must be a media type like "application/json"');

/** The canonical container for work products, observations and evidence (Hermit 8.5). Content is immutable. */
export const Artifact = z
  .strictObject({
    artifact_id: Id,
    class: ArtifactClass,
    kind: Name.describe('See KNOWN_ARTIFACT_KINDS: context.pack, action.request, command.transcript, receipt.bundle, ...'),
    uri: Ref.describe('Logical location of the content (e.g. "cas://sha256/<hex>").'),
    content_hash: Sha256Hex,
    media_type: MediaType,
    byte_size: z.int().min(0),
    created_at: Timestamp,
    producer: Id.describe('principal_id of the producer; the producing attempt is attempt_id.'),
    retention_class: Name.describe('How long the content is kept, e.g. ephemeral, task, audit.'),
    trust_tier: TrustTier,
    sensitivity_class: Name.describe('e.g. public, internal, confidential, secret_redacted.'),
    sealed_at: Timestamp.optional(),
    expires_at: Timestamp.optional(),
    lineage_ref: Ref.optional(),
    task_local_alias: Name.optional(),
    task_id: Id.optional(),
    step_id: Id.optional(),
    attempt_id: Id.optional(),
  })
  .meta({ title: 'Artifact', description: 'A content-addressed work product, observation or piece of evidence (Hermit 8.5).' });
export type Artifact = z.infer<typeof Artifact>;
