import { PrincipalKeyAdded, PrincipalKeyRevoked, PrincipalRegistered, type BundleKey, type PublicEd25519Jwk } from '@writ/contracts';

/**
 * When one key of a principal could sign, as the principal's events tell it:
 * from the `at` of the `principal.registered` or `principal.key_added` that
 * brought it until the `at` of its `principal.key_revoked` (a rotation
 * retires the replaced key this way; what it signed before stays valid).
 */
export interface KeyWindow {
  readonly jwk: PublicEd25519Jwk;
  readonly valid_from: string;
  /** When it was revoked; null while it is not. */
  readonly valid_until: string | null;
  readonly revocation_reason?: string;
}

/**
 * Folds a principal's events (`<events>.principal.<id>`, in order) into the
 * window of each of its keys, in the order the keys appeared. Pure; a payload
 * that is not its contract is skipped, as the principal registry skips it. A
 * kid's first appearance wins (a later event naming it again changes nothing).
 */
export function keyWindows(events: readonly { readonly event_type: string; readonly payload: unknown }[]): KeyWindow[] {
  const windows = new Map<string, { -readonly [K in keyof KeyWindow]: KeyWindow[K] }>();
  const add = (jwk: PublicEd25519Jwk, at: string): void => {
    if (!windows.has(jwk.kid)) windows.set(jwk.kid, { jwk, valid_from: at, valid_until: null });
  };
  for (const event of events) {
    if (event.event_type === 'principal.registered') {
      const parsed = PrincipalRegistered.safeParse(event.payload);
      if (parsed.success) for (const jwk of parsed.data.keys) add(jwk, parsed.data.at);
    } else if (event.event_type === 'principal.key_added') {
      const parsed = PrincipalKeyAdded.safeParse(event.payload);
      if (parsed.success) add(parsed.data.key, parsed.data.at);
    } else if (event.event_type === 'principal.key_revoked') {
      const parsed = PrincipalKeyRevoked.safeParse(event.payload);
      const window = parsed.success ? windows.get(parsed.data.kid) : undefined;
      if (parsed.success && window !== undefined && window.valid_until === null) {
        window.valid_until = parsed.data.at;
        window.revocation_reason = parsed.data.reason;
      }
    }
  }
  return [...windows.values()];
}

/** Whether the key could sign at `instant` (RFC 3339 or epoch ms): valid_from <= instant < valid_until. */
export function keyValidAt(window: Pick<KeyWindow, 'valid_from' | 'valid_until'>, instant: string | number): boolean {
  const at = typeof instant === 'number' ? instant : Date.parse(instant);
  if (!Number.isFinite(at)) return false;
  if (at < Date.parse(window.valid_from)) return false;
  return window.valid_until === null || at < Date.parse(window.valid_until);
}

/** `valid from … until …` in words, for messages and check details. */
export function describeWindow(window: Pick<KeyWindow, 'valid_from' | 'valid_until' | 'revocation_reason'>): string {
  return window.valid_until === null
    ? `valid from ${window.valid_from}, not revoked`
    : `valid from ${window.valid_from} until ${window.valid_until}${window.revocation_reason === undefined ? '' : ` (revoked: ${window.revocation_reason})`}`;
}

/** Where a kid stands for a signature made at `instant`: one of the principal's keys valid then, one of its keys but not valid then, or none of its keys. */
export type KeyStanding =
  | { readonly standing: 'valid'; readonly window: KeyWindow }
  | { readonly standing: 'not_valid_then'; readonly window: KeyWindow }
  | { readonly standing: 'unknown' };

export function keyStandingAt(windows: readonly KeyWindow[], kid: string, instant: string | number): KeyStanding {
  const window = windows.find((candidate) => candidate.jwk.kid === kid);
  if (window === undefined) return { standing: 'unknown' };
  return keyValidAt(window, instant) ? { standing: 'valid', window } : { standing: 'not_valid_then', window };
}

/** A principal's key events as a bundle carries them (raw: nothing dropped). */
export interface PrincipalEvents {
  readonly principal_id: string;
  readonly events: readonly { readonly event_type: string; readonly payload: unknown }[];
}

/**
 * The key history of principals (`keyWindows` of each, the fold the services
 * verify with), as a receipt bundle carries it. Order: principals as given,
 * keys in the order they appeared.
 */
export function keyHistory(principals: readonly PrincipalEvents[]): BundleKey[] {
  return principals.flatMap((principal) => keyWindows(principal.events).map((window) => ({ principal_id: principal.principal_id, ...window })));
}
