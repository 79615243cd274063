import { z } from 'zod';
import { Id, Timestamp } from '../ids.js';
import { LIMITS } from '../limits.js';
import { LongText, Text } from '../text.js';
import { DoneClaimStatus } from './done-claim.js';

/**
 * A correction of a done claim (seed 003 `done-correction-<timestamp>.json`):
 * `done.json` is written once, so a regression found after `done_clean` is a
 * separate record that references the original claim and lets the dispatcher
 * reconcile. It never rewrites the claim it corrects.
 */
export const Correction = z
  .strictObject({
    corrects_claim_id: Id.describe('The done claim (`claim_id`) this corrects.'),
    corrected_at: Timestamp,
    status: DoneClaimStatus.describe('The status the claim should have had.'),
    reason: Text,
    regressions: z.array(Text).max(LIMITS.listItems),
    notes: LongText.optional(),
  })
  .meta({ title: 'Correction', description: 'A correction record referencing an earlier done claim (seed 003).' });
export type Correction = z.infer<typeof Correction>;
