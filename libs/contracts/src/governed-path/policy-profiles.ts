import { z } from 'zod';
import { Id, Name, Timestamp } from '../ids.js';

/**
 * A policy profile's version: `sha256:` and the lowercase hex SHA-256 of the
 * profile document's RFC 8785 canonical JSON. Equal content, equal version.
 */
export const PolicyProfileVersion = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'must be sha256:<64 lowercase hex>');
export type PolicyProfileVersion = z.infer<typeof PolicyProfileVersion>;

/**
 * The value stored under a profile's id in the policy profile KV bucket
 * (`WRIT_POLICY_BUCKET`, default `WRIT_POLICY`). `document` is the profile as
 * written (validated by the kernel's PolicyProfileDocument before it is
 * stored); `version` is derived from it, never chosen by the author.
 */
export const PolicyProfileRecord = z.strictObject({
  profile_id: Name,
  version: PolicyProfileVersion,
  document: z.record(z.string(), z.unknown()),
  /** `writ-policy` for the built-ins the policy service seeds; the director's principal otherwise. */
  applied_by: Id,
  applied_at: Timestamp,
  /** The version this record replaced, null for the first. */
  previous_version: PolicyProfileVersion.nullable(),
});
export type PolicyProfileRecord = z.infer<typeof PolicyProfileRecord>;

/** `policy.profile_applied` on `writ.evt.policy.<profile_id>`: the durable record of every applied profile version. */
export const PolicyProfileApplied = PolicyProfileRecord;
export type PolicyProfileApplied = PolicyProfileRecord;
