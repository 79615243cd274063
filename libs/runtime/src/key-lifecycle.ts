import { PrincipalKeyAdded, PrincipalKeyRevoked, PrincipalRegistered, type EventEnvelope } from '@writ/contracts';

/**
 * One key of a principal over its life, as the log tells it:
 * - `active`: valid, and no later key replaces it (a service signs with it);
 * - `retiring`: a rotation replaced it; still valid until `retire_after`;
 * - `retired`: `principal.key_revoked` (kept in the log: receipts it signed stay checkable).
 */
export interface KeyLifecycle {
  readonly kid: string;
  readonly status: 'active' | 'retiring' | 'retired';
  /** When the key entered the log (`principal.registered` or `principal.key_added`). */
  readonly added_at: string;
  /** `retiring`: when it is due to retire. */
  readonly retire_after?: string;
  /** The key that replaced it in a rotation. */
  readonly replaced_by?: string;
  /** `retired`: when, and why (`rotated` after a rotation). */
  readonly retired_at?: string;
  readonly reason?: string;
}

/**
 * Folds a principal's events (`writ.evt.principal.<id>`, in order) into the life
 * of each of its keys, oldest first. Pure; malformed events are skipped, as the
 * principal registry skips them. `principal.key_added` with `replaces` is what
 * makes the replaced key `retiring`.
 */
export function keyLifecycles(events: readonly Pick<EventEnvelope, 'event_type' | 'payload'>[]): KeyLifecycle[] {
  const keys = new Map<string, { -readonly [K in keyof KeyLifecycle]: KeyLifecycle[K] }>();
  for (const event of events) {
    switch (event.event_type) {
      case 'principal.registered': {
        const parsed = PrincipalRegistered.safeParse(event.payload);
        if (!parsed.success) break;
        for (const key of parsed.data.keys) if (!keys.has(key.kid)) keys.set(key.kid, { kid: key.kid, status: 'active', added_at: parsed.data.at });
        break;
      }
      case 'principal.key_added': {
        const parsed = PrincipalKeyAdded.safeParse(event.payload);
        if (!parsed.success) break;
        const { key, at, replaces } = parsed.data;
        if (!keys.has(key.kid)) keys.set(key.kid, { kid: key.kid, status: 'active', added_at: at });
        const replaced = replaces === undefined ? undefined : keys.get(replaces.kid);
        if (replaced !== undefined && replaced.status !== 'retired' && replaces !== undefined) {
          Object.assign(replaced, { status: 'retiring', retire_after: replaces.retire_after, replaced_by: key.kid });
        }
        break;
      }
      case 'principal.key_revoked': {
        const parsed = PrincipalKeyRevoked.safeParse(event.payload);
        const known = parsed.success ? keys.get(parsed.data.kid) : undefined;
        if (!parsed.success || known === undefined || known.status === 'retired') break;
        delete known.retire_after;
        Object.assign(known, { status: 'retired', retired_at: parsed.data.at, reason: parsed.data.reason });
        break;
      }
      default:
        break;
    }
  }
  return [...keys.values()];
}
