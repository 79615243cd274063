import type { BundleKey } from '@writ/contracts';
import { keyWindows } from '@writ/runtime';

export { describeWindow, keyValidAt } from '@writ/runtime';

/** A principal's key events as the bundle carries them (raw: nothing dropped). */
export interface PrincipalEvents {
  readonly principal_id: string;
  readonly events: readonly { readonly event_type: string; readonly payload: unknown }[];
}

/**
 * The key history of principals, folded from their key events (`keyWindows`
 * of @writ/runtime, the fold the services verify with): each key is valid
 * from the `at` of the `principal.registered` or `principal.key_added` that
 * brought it until the `at` of its `principal.key_revoked` (a rotation
 * retires the replaced key this way: what it signed before stays valid). A
 * payload that is not the contract is skipped. Order: principals as given,
 * keys in the order they appeared.
 */
export function keyHistory(principals: readonly PrincipalEvents[]): BundleKey[] {
  return principals.flatMap((principal) => keyWindows(principal.events).map((window) => ({ principal_id: principal.principal_id, ...window })));
}
