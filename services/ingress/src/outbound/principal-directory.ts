import { KeySet, importEd25519PublicJwk, type Ed25519PublicKey } from '@writ/crypto';
import type { EventStore } from '@writ/eventstore';
import { evolvePrincipal, type PrincipalRecord } from '@writ/runtime';
import type { PrincipalDirectory } from '../application/ports.js';

const MAX_CACHED = 10_000;

/**
 * Principals folded from `writ.evt.principal.<id>` — the log itself, never a
 * projection. Every lookup reads the principal's head (one direct get) and
 * refolds only when it moved, so a key revoked or added a moment ago takes
 * effect on the very next request (read-your-writes). `PrincipalRegistry`'s
 * follower could still hold the state before a revocation for one delivery;
 * authentication must not.
 */
export class LogPrincipalDirectory implements PrincipalDirectory {
  readonly #folded = new Map<string, { readonly taskSeq: number; readonly record: PrincipalRecord | undefined }>();
  readonly #imported = new Map<string, Ed25519PublicKey>();

  constructor(private readonly store: EventStore) {}

  async lookup(principalId: string): Promise<PrincipalRecord | undefined> {
    const head = await this.store.headOfEntity('principal', principalId);
    if (head.taskSeq === 0) return undefined;
    const cached = this.#folded.get(principalId);
    if (cached?.taskSeq === head.taskSeq) return cached.record;
    const events = await this.store.readEntity('principal', principalId);
    let record: PrincipalRecord | undefined;
    for (const { event } of events) record = evolvePrincipal(record, event);
    if (this.#folded.size >= MAX_CACHED) this.#folded.clear();
    this.#folded.set(principalId, { taskSeq: events.at(-1)?.event.task_seq ?? 0, record });
    return record;
  }

  async verificationKeys(record: PrincipalRecord): Promise<KeySet> {
    const keys: Ed25519PublicKey[] = [];
    for (const jwk of record.keys.values()) {
      const cacheKey = `${record.principal_id}:${jwk.kid}:${jwk.x}`;
      let key = this.#imported.get(cacheKey);
      if (key === undefined) {
        key = await importEd25519PublicJwk(jwk);
        if (this.#imported.size >= MAX_CACHED) this.#imported.clear();
        this.#imported.set(cacheKey, key);
      }
      keys.push(key);
    }
    return KeySet.of(keys);
  }
}
