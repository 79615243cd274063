import { PrincipalKeyAdded, PrincipalKeyRevoked, PrincipalRegistered, type BundleKey } from '@writ/contracts';

/** A principal's key events as the bundle carries them (raw: nothing dropped). */
export interface PrincipalEvents {
  readonly principal_id: string;
  readonly events: readonly { readonly event_type: string; readonly payload: unknown }[];
}

/**
 * The key history of principals, folded from their key events: each key is
 * valid from the `at` of the `principal.registered` or `principal.key_added`
 * that brought it until the `at` of its `principal.key_revoked` (a rotation
 * retires the replaced key this way: what it signed before stays valid). A
 * payload that is not the contract is skipped, as the services' own fold does.
 * Order: principals as given, keys in the order they appeared.
 */
export function keyHistory(principals: readonly PrincipalEvents[]): BundleKey[] {
  const history: BundleKey[] = [];
  for (const principal of principals) {
    const keys = new Map<string, { -readonly [K in keyof BundleKey]: BundleKey[K] }>();
    const add = (jwk: BundleKey['jwk'], at: string): void => {
      if (!keys.has(jwk.kid)) keys.set(jwk.kid, { principal_id: principal.principal_id, jwk, valid_from: at, valid_until: null });
    };
    for (const event of principal.events) {
      if (event.event_type === 'principal.registered') {
        const parsed = PrincipalRegistered.safeParse(event.payload);
        if (parsed.success) for (const jwk of parsed.data.keys) add(jwk, parsed.data.at);
      } else if (event.event_type === 'principal.key_added') {
        const parsed = PrincipalKeyAdded.safeParse(event.payload);
        if (parsed.success) add(parsed.data.key, parsed.data.at);
      } else if (event.event_type === 'principal.key_revoked') {
        const parsed = PrincipalKeyRevoked.safeParse(event.payload);
        const key = parsed.success ? keys.get(parsed.data.kid) : undefined;
        if (parsed.success && key !== undefined && key.valid_until === null) {
          key.valid_until = parsed.data.at;
          key.revocation_reason = parsed.data.reason;
        }
      }
    }
    history.push(...keys.values());
  }
  return history;
}

/** Whether `key` could sign at `instant` (RFC 3339): valid_from <= instant < valid_until. */
export function keyValidAt(key: Pick<BundleKey, 'valid_from' | 'valid_until'>, instant: string | number): boolean {
  const at = typeof instant === 'number' ? instant : Date.parse(instant);
  if (!Number.isFinite(at)) return false;
  if (at < Date.parse(key.valid_from)) return false;
  return key.valid_until === null || at < Date.parse(key.valid_until);
}

/** `valid_from … valid_until` in words, for check details. */
export function describeWindow(key: Pick<BundleKey, 'valid_from' | 'valid_until' | 'revocation_reason'>): string {
  return key.valid_until === null
    ? `valid from ${key.valid_from}, not revoked`
    : `valid from ${key.valid_from} until ${key.valid_until}${key.revocation_reason === undefined ? '' : ` (revoked: ${key.revocation_reason})`}`;
}
