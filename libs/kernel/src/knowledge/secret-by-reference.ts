import { isSecretReference, type JsonValue, type KnowledgeSensitivity } from '@writ/contracts';
import { KnowledgeError } from './knowledge.errors.js';

/**
 * A secret is recorded by reference, never by value (invariant 6, Hermit
 * 17.3). Knowledge an author marks `sensitivity: secret` may hold, where it
 * holds data, only `{ "secret_ref": <Ref> }`: the name of where the secret
 * lives, which the knowledge layer records and never resolves. A value that does not
 * look like a secret (the orchestrator's pattern redaction cannot know it is
 * one) is still the author's secret once marked so: it is refused before any
 * event exists, and `evolve` does not fold one found in a log.
 */

/** A working state entry, belief or memory record's sensitivity and the data the rule governs. */
interface SecretMarked {
  readonly sensitivity?: KnowledgeSensitivity | undefined;
}

/** True when a working state entry marked secret holds anything but a secret reference as its value. */
export function entryHoldsSecretByValue(entry: SecretMarked & { readonly value: JsonValue }): boolean {
  return entry.sensitivity === 'secret' && !isSecretReference(entry.value);
}

/** True when a belief or memory record marked secret has a structured assertion that is not a secret reference (none at all is fine). */
export function assertionHoldsSecretByValue(item: SecretMarked & { readonly structured_assertion?: JsonValue | undefined }): boolean {
  return item.sensitivity === 'secret' && item.structured_assertion !== undefined && !isSecretReference(item.structured_assertion);
}

/** The refusal, naming what was refused and how to send it instead; the value itself is never repeated. */
export function secretByValue(what: string, field: 'value' | 'structured_assertion', details: Record<string, unknown>): KnowledgeError {
  return new KnowledgeError(
    'KNOWLEDGE_SECRET_BY_VALUE',
    `${what} is marked sensitivity: secret but its ${field} is not a secret reference: ` +
      `an entry marked sensitivity: secret holds a reference to where the secret lives ({ "secret_ref": "<ref>" }, e.g. "vault:db/password"), never the secret itself; nothing was recorded`,
    { details: { ...details, field } },
  );
}
