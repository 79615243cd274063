import { z } from 'zod';
import { Ref } from '../ids.js';

/**
 * Where a secret lives, never the secret (Hermit 17.3: secrets by reference).
 * A working state entry marked `sensitivity: secret` holds exactly this as its
 * `value`, and a belief or memory record marked secret holds it as its
 * `structured_assertion` when it has one; the kernel refuses anything else with
 * KNOWLEDGE_SECRET_BY_VALUE, so the value never reaches the log (invariant 6).
 * `secret_ref` names a secret store's entry (`vault:db/password`,
 * `env:DEPLOY_TOKEN`): Writ records, shows and packs the name; nothing in the
 * knowledge layer ever reads the secret behind it.
 */
export const SecretReference = z
  .strictObject({
    secret_ref: Ref.describe('The name of where the secret lives (e.g. "vault:db/password"): a name, never the secret itself.'),
  })
  .meta({ title: 'SecretReference', description: 'A secret named by reference, never by value (Hermit 17.3); what a secret-marked knowledge entry holds.' });
export type SecretReference = z.infer<typeof SecretReference>;

/** True when `value` is exactly a secret reference: `{ "secret_ref": <Ref> }` and nothing else. */
export function isSecretReference(value: unknown): value is SecretReference {
  return SecretReference.safeParse(value).success;
}
