import { createPublicKey, verify, webcrypto, type KeyObject } from 'node:crypto';
import {
  AuthorService,
  PrincipalKeyAdded,
  PrincipalKeyRevoked,
  PrincipalRegistered,
  authorsOf,
  eventSealInput,
  type EventEnvelope,
  type EventSeal,
  type PublicEd25519Jwk,
} from '@writ/contracts';
import type { Ed25519SigningKey } from '@writ/crypto';

/**
 * The per-event seal (docs/security.md, "Authorship"): the appending service
 * signs each event's `hash` with its registered Ed25519 key, and readers
 * check the signer against `EVENT_AUTHORSHIP`. Node's synchronous Ed25519
 * (one signature over 32 bytes per append, one verification per event read)
 * keeps the chain scanner synchronous and the hot path cheap.
 */

/** Signs events for one service principal with its current key. */
export interface EventSealer {
  readonly principalId: string;
  /** The kid that signs now. */
  readonly kid: string;
  seal(hash: string): Promise<EventSeal>;
}

const encoder = new TextEncoder();

/**
 * A sealer over a service's signing key, or over a provider of its current
 * key (a rotating key: read at each seal, so a rotation switches it). Signs
 * with WebCrypto: the private key is never exported.
 */
export function eventSealer(principalId: string, key: Ed25519SigningKey | (() => Ed25519SigningKey)): EventSealer {
  const current = typeof key === 'function' ? key : () => key;
  return {
    principalId,
    get kid() {
      return current().kid;
    },
    seal: async (hash) => {
      const active = current();
      const signature = await webcrypto.subtle.sign('Ed25519', active.privateKey, encoder.encode(eventSealInput(hash)));
      return { principal_id: principalId, kid: active.kid, sig: Buffer.from(signature).toString('base64url') };
    },
  };
}

/** Whether `seal` is a signature over `hash` by `publicKey`. */
export function sealVerifies(seal: EventSeal, hash: string, publicKey: KeyObject): boolean {
  try {
    return verify(null, Buffer.from(eventSealInput(hash)), publicKey, Buffer.from(seal.sig, 'base64url'));
  } catch {
    return false;
  }
}

/** A principal's keys as its own chain registered them; `revokedAt`: the stream sequence of the revocation, when known. */
export type PrincipalKeys = Map<string, { readonly key: KeyObject; revokedAt: number | null }>;

/** The aggregate a message is read from (its subject), as the scanner knows it. */
export interface SealedAggregate {
  readonly entityType: string;
  readonly entityId: string | null;
}

export interface AuthorshipOptions {
  /** Each Writ service's principal id (bus-permissions' `servicePrincipals`, e.g. `policy` → `writ-policy`). */
  readonly servicePrincipals: Readonly<Record<AuthorService, string>>;
  /** How long a principal's keys are trusted before a read refreshes them (a revocation is seen within this bound). Default 60 s. */
  readonly keysMaxAgeMs?: number;
  /** How long a kid the log did not register is not looked up again (a flood of forged kids costs one read per principal per period). Default 5 s. */
  readonly unknownKidRetryMs?: number;
  /** The clock of those bounds (default `Date.now`). */
  readonly now?: () => number;
}

/**
 * What a reader checks every event's author against: the table, and the
 * service principals' keys learned from their own subjects of the log.
 * Shared by every read of one store; the store refreshes a principal's keys
 * (`stale`, `learn`) before judging a message sealed with a kid it lacks.
 */
export class Authorship {
  readonly #services = new Map<string, AuthorService>();
  readonly #keys = new Map<string, { keys: PrincipalKeys; learnedAt: number }>();
  readonly #unknown = new Map<string, number>();
  readonly #maxAgeMs: number;
  readonly #retryMs: number;
  readonly #now: () => number;

  constructor(options: AuthorshipOptions) {
    for (const [service, principalId] of Object.entries(options.servicePrincipals)) this.#services.set(principalId, AuthorService.parse(service));
    this.#maxAgeMs = options.keysMaxAgeMs ?? 60_000;
    this.#retryMs = options.unknownKidRetryMs ?? 5_000;
    this.#now = options.now ?? Date.now;
  }

  /** The service a principal id belongs to, if it is a Writ service's. */
  serviceOf(principalId: string): AuthorService | undefined {
    return this.#services.get(principalId);
  }

  /**
   * The service principal whose keys must be (re)read before `value` (a
   * stored message) can be judged, or undefined: its seal names a service
   * principal whose kid is not known (or whose keys are older than the bound),
   * and it was not looked up within the retry period.
   */
  stale(value: unknown): string | undefined {
    const seal = sealOf(value);
    if (seal === undefined || !this.#services.has(seal.principal_id)) return undefined;
    const known = this.#keys.get(seal.principal_id);
    const now = this.#now();
    const fresh = known !== undefined && now - known.learnedAt < this.#maxAgeMs;
    if (fresh && known.keys.has(seal.kid)) return undefined;
    if (fresh) {
      const tried = this.#unknown.get(`${seal.principal_id} ${seal.kid}`);
      if (tried !== undefined && now - tried < this.#retryMs) return undefined;
      this.#unknown.set(`${seal.principal_id} ${seal.kid}`, now);
      if (this.#unknown.size > 10_000) this.#unknown.delete(this.#unknown.keys().next().value!);
    }
    return seal.principal_id;
  }

  /** Takes a service principal's keys from its chain's events, as read now (`streamSeq` orders revocations). */
  learn(principalId: string, events: readonly { readonly streamSeq: number; readonly event: EventEnvelope }[]): void {
    const keys: PrincipalKeys = new Map();
    for (const { streamSeq, event } of events) foldKeys(keys, event, streamSeq);
    this.#keys.set(principalId, { keys, learnedAt: this.#now() });
  }

  /**
   * Why `event`, read from `aggregate`'s subject (at `streamSeq`, when known),
   * is not proven to be written by a service allowed to author it, or
   * undefined when it is. `own`: the keys the aggregate's own chain registered
   * so far, when it is a service principal's subject.
   */
  unproven(aggregate: SealedAggregate, event: EventEnvelope, own: PrincipalKeys | undefined, streamSeq: number | undefined): string | undefined {
    const subject = aggregate.entityId ?? event.task_id;
    const servicePrincipal = aggregate.entityType === 'principal' && this.#services.has(subject);
    const authors = authorsOf(aggregate.entityType, event.event_type, { servicePrincipal });
    const { seal } = event;
    if (authors !== 'self' && authors.length === 0) return `no service may append ${event.event_type} on a ${aggregate.entityType} subject`;
    if (seal === undefined) return `${event.event_type} carries no service seal`;
    let entry: { readonly key: KeyObject; readonly revokedAt: number | null } | undefined;
    if (authors === 'self') {
      if (seal.principal_id !== subject) return `${event.event_type} on ${subject}'s own subject is sealed by ${seal.principal_id}`;
      entry = own?.get(seal.kid) ?? (own === undefined || own.size === 0 ? registeredBy(event, seal.kid) : undefined);
      if (entry === undefined) return `sealed with key ${seal.kid}, which ${subject}'s chain does not register before it`;
    } else {
      const service = this.#services.get(seal.principal_id);
      if (service === undefined) return `sealed by ${seal.principal_id}, which is no Writ service`;
      if (!authors.includes(service)) return `${event.event_type} on a ${aggregate.entityType} subject is appended by ${authors.join(' or ')}, not ${service}`;
      entry = this.#keys.get(seal.principal_id)?.keys.get(seal.kid);
      if (entry === undefined) return `sealed with key ${seal.kid}, which the log does not register for ${seal.principal_id}`;
    }
    if (entry.revokedAt !== null && streamSeq !== undefined && streamSeq > entry.revokedAt) return `sealed with key ${seal.kid} of ${seal.principal_id} after its revocation`;
    if (!sealVerifies(seal, event.hash, entry.key)) return `the seal of ${seal.principal_id} (${seal.kid}) does not verify over the event's hash`;
    return undefined;
  }

  /**
   * Who may append `eventType` on `aggregate`, and whether `sealer` is one of
   * them (what an append checks before it writes anything).
   */
  mayAppend(aggregate: SealedAggregate, eventType: string, sealer: EventSealer | undefined): { readonly ok: boolean; readonly authors: readonly string[] | 'self' } {
    const subject = aggregate.entityId;
    const servicePrincipal = aggregate.entityType === 'principal' && subject !== null && this.#services.has(subject);
    const authors = authorsOf(aggregate.entityType, eventType, { servicePrincipal });
    if (sealer === undefined) return { ok: false, authors };
    if (authors === 'self') return { ok: sealer.principalId === subject, authors };
    const service = this.#services.get(sealer.principalId);
    return { ok: service !== undefined && authors.includes(service), authors };
  }

  /** Whether an aggregate is a service principal's own subject (its scanner then keeps the keys its chain registers). */
  isServicePrincipalSubject(aggregate: SealedAggregate): boolean {
    return aggregate.entityType === 'principal' && aggregate.entityId !== null && this.#services.has(aggregate.entityId);
  }
}

/** Folds one principal event into a key map (registration, key added, key revoked). */
export function foldKeys(keys: PrincipalKeys, event: Pick<EventEnvelope, 'event_type' | 'payload'>, streamSeq: number | null): void {
  switch (event.event_type) {
    case 'principal.registered': {
      const parsed = PrincipalRegistered.safeParse(event.payload);
      // Only the first registration counts (as the registry folds it).
      if (parsed.success && keys.size === 0) for (const jwk of parsed.data.keys) addKey(keys, jwk);
      return;
    }
    case 'principal.key_added': {
      const parsed = PrincipalKeyAdded.safeParse(event.payload);
      if (parsed.success) addKey(keys, parsed.data.key);
      return;
    }
    case 'principal.key_revoked': {
      const parsed = PrincipalKeyRevoked.safeParse(event.payload);
      const entry = parsed.success ? keys.get(parsed.data.kid) : undefined;
      // Without a position (a bundle), a revoked key keeps verifying what it sealed: the bundle's chain orders it.
      if (entry !== undefined && entry.revokedAt === null && streamSeq !== null) entry.revokedAt = streamSeq;
      return;
    }
    default:
  }
}

function addKey(keys: PrincipalKeys, jwk: PublicEd25519Jwk): void {
  if (keys.has(jwk.kid)) return;
  try {
    keys.set(jwk.kid, { key: createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' }), revokedAt: null });
  } catch {
    // Not a usable key: it verifies nothing.
  }
}

/** A service principal's first event is sealed by the key it registers. */
function registeredBy(event: EventEnvelope, kid: string): { readonly key: KeyObject; readonly revokedAt: null } | undefined {
  if (event.event_type !== 'principal.registered') return undefined;
  const keys: PrincipalKeys = new Map();
  foldKeys(keys, event, null);
  const entry = keys.get(kid);
  return entry === undefined ? undefined : { key: entry.key, revokedAt: null };
}

function sealOf(value: unknown): EventSeal | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const seal = (value as { seal?: unknown }).seal;
  if (typeof seal !== 'object' || seal === null) return undefined;
  const { principal_id, kid } = seal as { principal_id?: unknown; kid?: unknown };
  return typeof principal_id === 'string' && typeof kid === 'string' ? (seal as EventSeal) : undefined;
}
