import { z } from 'zod';
import { EvidenceSelector } from '../evidence-ref.js';
import { Id, Sha256Hex } from '../ids.js';

/**
 * What a belief or memory record cites (Hermit 8.6, 8.7, 14.5): an artifact,
 * a receipt, or an observation, by id. Unlike `EvidenceRef` (always an
 * artifact), a receipt is citable directly: it is what makes a claim `verified`.
 */
export const KnowledgeEvidenceRef = z
  .strictObject({
    kind: z.enum(['artifact', 'receipt', 'observation']),
    id: Id,
    selector: EvidenceSelector.optional().describe('The cited part of an artifact; absent when the whole object is cited.'),
    excerpt_hash: Sha256Hex.optional().describe('SHA-256 of the cited bytes, so the excerpt is hash-locked.'),
  })
  .meta({ title: 'KnowledgeEvidenceRef', description: 'An artifact, receipt or observation cited by a belief or memory record (Hermit 14.5).' });
export type KnowledgeEvidenceRef = z.infer<typeof KnowledgeEvidenceRef>;

/**
 * How sensitive a piece of knowledge is. `secret` material never enters a
 * context pack by value (Hermit 6.3.3, 17.3): it is left out, or named by
 * reference when the profile allows it.
 */
export const KnowledgeSensitivity = z.enum(['public', 'internal', 'secret']);
export type KnowledgeSensitivity = z.infer<typeof KnowledgeSensitivity>;

/**
 * What a claim applies to: a repository, a path, a host, a task (`repo:writ`,
 * `path:src/a.ts`, `task:t-1`). Compared by equality only: two contradicting
 * beliefs of different scopes coexist (Hermit 15.3).
 */
export const KnowledgeScope = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[^\s\x00-\x1f\x7f]+$/, 'must not contain whitespace or control characters');
export type KnowledgeScope = z.infer<typeof KnowledgeScope>;
