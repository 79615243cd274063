import { randomUUID } from 'node:crypto';
import { DeliverPolicy, jetstream, type ConsumerMessages } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  EVENTS_STREAM,
  PrincipalKeyAdded,
  PrincipalKeyRevoked,
  PrincipalRegistered,
  type EventEnvelope,
  type PrincipalRole,
  type PrincipalType,
  type PublicEd25519Jwk,
} from '@writ/contracts';
import { KeySet, importEd25519PublicJwk, type Ed25519PublicKey, type Ed25519SigningKey } from '@writ/crypto';
import { ChainScanner, NOT_JSON, type EventStore } from '@writ/eventstore';
import { principalHistory, type PrincipalHistory } from './resolution-authority.js';

/** A principal as the log describes it now. */
export interface PrincipalRecord {
  readonly principal_id: string;
  readonly principal_type: PrincipalType;
  readonly display_name: string;
  readonly roles: readonly PrincipalRole[];
  /** Active public keys by kid (revoked keys are removed). */
  readonly keys: ReadonlyMap<string, PublicEd25519Jwk>;
  readonly revoked_kids: ReadonlySet<string>;
}

/** Folds one principal event into the record; unknown or malformed events leave it unchanged. */
export function evolvePrincipal(record: PrincipalRecord | undefined, event: Pick<EventEnvelope, 'event_type' | 'payload'>): PrincipalRecord | undefined {
  switch (event.event_type) {
    case 'principal.registered': {
      const parsed = PrincipalRegistered.safeParse(event.payload);
      if (!parsed.success || record !== undefined) return record;
      const p = parsed.data;
      return {
        principal_id: p.principal_id,
        principal_type: p.principal_type,
        display_name: p.display_name,
        roles: p.roles,
        keys: new Map(p.keys.map((key) => [key.kid, key])),
        revoked_kids: new Set(),
      };
    }
    case 'principal.key_added': {
      const parsed = PrincipalKeyAdded.safeParse(event.payload);
      if (!parsed.success || record === undefined || record.revoked_kids.has(parsed.data.key.kid)) return record;
      return { ...record, keys: new Map([...record.keys, [parsed.data.key.kid, parsed.data.key]]) };
    }
    case 'principal.key_revoked': {
      const parsed = PrincipalKeyRevoked.safeParse(event.payload);
      if (!parsed.success || record === undefined) return record;
      const keys = new Map(record.keys);
      keys.delete(parsed.data.kid);
      return { ...record, keys, revoked_kids: new Set([...record.revoked_kids, parsed.data.kid]) };
    }
    default:
      return record;
  }
}

export interface PrincipalRegistryOptions {
  readonly stream?: string;
  /** Subject prefix of the event log (default `writ.evt`). */
  readonly subjectPrefix?: string;
  /**
   * How long one pull of the follower waits (default 30 s); the server sends a heartbeat every
   * half of it, and two missed in a row replace the follower's consumer (below).
   */
  readonly pullExpiresMs?: number;
}

/** Heartbeats missed in a row after which the follower's consumer is taken for deaf and replaced. */
const DEAF_AFTER_MISSED_HEARTBEATS = 2;

/**
 * Principals and their keys, folded from `writ.evt.principal.>` — the log, never
 * a projection, because ingress and approval authorize with it. A follower keeps
 * the memory current (a revoked key stops verifying within one delivery); a
 * principal not yet seen by the follower is read from the log directly, so an
 * agent registered a moment ago is not refused.
 */
export class PrincipalRegistry {
  readonly #records = new Map<string, PrincipalRecord>();
  readonly #imported = new Map<string, Ed25519PublicKey>();
  /** Where the follower is in each principal's chain; null once it broke. */
  readonly #chains = new Map<string, ChainScanner | null>();
  readonly #store: EventStore;
  readonly #nc: NatsConnection;
  readonly #options: PrincipalRegistryOptions;
  #messages: ConsumerMessages | undefined;
  #loop: Promise<void> | undefined;
  /** The stream sequence the follower reads from next: where a replacement consumer starts. */
  #nextSeq = 1;
  #closed = false;
  #caughtUp: () => void = () => undefined;
  /** How many times the follower's consumer was found deaf and replaced. */
  #replaced = 0;

  private constructor(store: EventStore, nc: NatsConnection, options: PrincipalRegistryOptions) {
    this.#store = store;
    this.#nc = nc;
    this.#options = options;
  }

  /** Starts following the principal events; resolves once caught up with the log. */
  static async start(nc: NatsConnection, store: EventStore, options: PrincipalRegistryOptions = {}): Promise<PrincipalRegistry> {
    const registry = new PrincipalRegistry(store, nc, options);
    const ready = new Promise<void>((resolve) => (registry.#caughtUp = resolve));
    await registry.#openFollower();
    await ready;
    return registry;
  }

  /** How many times the follower's consumer was found deaf (heartbeats missed) and replaced. */
  get followerReplacements(): number {
    return this.#replaced;
  }

  /**
   * Opens the follower's consumer from `#nextSeq`. A consumer whose pulls go
   * unanswered (no message, no heartbeat: one nats-server 2.9 lists but no
   * peer runs) is replaced by a new one from where the follower stood; nats.js
   * alone would pull from it again forever, and the registry would never catch
   * up (a service hanging at boot) or never see a revocation.
   */
  async #openFollower(): Promise<void> {
    const stream = this.#options.stream ?? EVENTS_STREAM;
    const consumer = await jetstream(this.#nc).consumers.get(stream, {
      filter_subjects: `${this.#options.subjectPrefix ?? 'writ.evt'}.principal.>`,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: this.#nextSeq,
    });
    if ((await consumer.info(true)).num_pending === 0) this.#caughtUp();
    const expires = this.#options.pullExpiresMs ?? 30_000;
    const messages = await consumer.consume({ expires, idle_heartbeat: expires / 2 });
    this.#messages = messages;
    let deaf = false;
    void (async () => {
      for await (const status of messages.status()) {
        if (status.type === 'heartbeats_missed' && status.count >= DEAF_AFTER_MISSED_HEARTBEATS && !this.#closed) {
          deaf = true;
          await messages.close().catch(() => undefined);
          return;
        }
      }
    })();
    this.#loop = (async () => {
      for await (const message of messages) {
        await this.#follow(message.subject, message.seq, () => message.json<unknown>());
        this.#nextSeq = message.seq + 1;
        if (message.info.pending === 0) this.#caughtUp();
      }
      if (deaf && !this.#closed) {
        this.#replaced++;
        await consumer.delete().catch(() => undefined);
        await this.#reopenFollower();
      }
    })();
  }

  /** Opens a replacement follower, retrying while the bus refuses (the connection is down, no quorum). */
  async #reopenFollower(): Promise<void> {
    for (let attempt = 0; !this.#closed; attempt++) {
      try {
        await this.#openFollower();
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, Math.min(30_000, 500 * 2 ** attempt)));
      }
    }
  }

  /** The principal as the log says now, or undefined if it was never registered. */
  async lookup(principalId: string): Promise<PrincipalRecord | undefined> {
    const known = this.#records.get(principalId);
    if (known !== undefined) return known;
    const events = await this.#store.readEntity('principal', principalId).catch(() => []);
    for (const { event } of events) this.#apply(principalId, event);
    return this.#records.get(principalId);
  }

  /**
   * The principal as its stream in the log says at this moment, read directly
   * (not through the follower): for checks that must see a key revocation before
   * the next use. Throws when the log cannot be read (retry; never "no keys").
   */
  async current(principalId: string): Promise<PrincipalRecord | undefined> {
    let record: PrincipalRecord | undefined;
    for (const { event } of await this.#store.readEntity('principal', principalId)) record = evolvePrincipal(record, event);
    return record;
  }

  /**
   * The principal's active keys as a key set for JWS verification (empty if unknown).
   * `fresh`: from the log at this moment (`current`) instead of the follower's view.
   */
  async verificationKeys(principalId: string, options: { readonly fresh?: boolean } = {}): Promise<KeySet> {
    const record = options.fresh === true ? await this.current(principalId) : await this.lookup(principalId);
    const keys: Ed25519PublicKey[] = [];
    for (const jwk of record?.keys.values() ?? []) {
      const cacheKey = `${principalId}:${jwk.kid}:${jwk.x}`;
      let key = this.#imported.get(cacheKey);
      if (key === undefined) {
        key = await importEd25519PublicJwk(jwk);
        this.#imported.set(cacheKey, key);
      }
      keys.push(key);
    }
    return KeySet.of(keys);
  }

  /**
   * The principal's whole history (registration, roles, every key with its validity window,
   * revoked ones too), read from its stream in the log at this moment: what the authority of
   * something it signed in the past is checked against (`ResolutionAuthority`). Throws when
   * the log cannot be read (retry; never "unknown").
   */
  async history(principalId: string): Promise<PrincipalHistory | undefined> {
    return principalHistory(principalId, (await this.#store.readEntity('principal', principalId)).map(({ event }) => event));
  }

  async hasRole(principalId: string, role: PrincipalRole): Promise<boolean> {
    return (await this.lookup(principalId))?.roles.includes(role) ?? false;
  }

  /** Every principal known so far (for read-only surfaces such as the key list). */
  all(): PrincipalRecord[] {
    return [...this.#records.values()];
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#messages?.close();
    await this.#loop?.catch(() => undefined);
  }

  /**
   * Folds the message if it is the next event of its principal's chain,
   * judged by the rule every reader of the log applies (`ChainScanner`): junk
   * and a rival for a held position are skipped, not folded — the registry
   * authorizes with what it folds. The follower sees every principal's
   * messages from the first, in order, so the judging needs no reads. A
   * principal whose chain breaks is forgotten and no longer followed: a
   * lookup then reads it from the log, which refuses a broken chain.
   */
  async #follow(subject: string, streamSeq: number, data: () => unknown): Promise<void> {
    const principalId = subject.slice(subject.lastIndexOf('.') + 1);
    let scanner = this.#chains.get(subject);
    if (scanner === null) return;
    if (scanner === undefined) {
      // The store's authorship too: a principal event whose author is unproven is never folded (the registry authorizes with it).
      scanner = new ChainScanner({ entityType: 'principal', entityId: principalId }, undefined, this.#store.authorship);
      this.#chains.set(subject, scanner);
    }
    let value: unknown;
    try {
      value = data();
    } catch {
      value = NOT_JSON;
    }
    try {
      await this.#store.knowAuthorsOf(subject, value);
    } catch {
      // The sealer's keys cannot be read now: judging without them would drop a genuine event for good. The
      // principal is no longer followed; a lookup reads it from the log, which checks it when it can.
      this.#chains.set(subject, null);
      this.#records.delete(principalId);
      return;
    }
    const verdict = scanner.classify(value, undefined, streamSeq);
    if (verdict.kind === 'event') this.#apply(principalId, verdict.event);
    else if (verdict.kind === 'broken') {
      this.#chains.set(subject, null);
      this.#records.delete(principalId);
    }
  }

  #apply(principalId: string, event: Pick<EventEnvelope, 'event_type' | 'payload'>): void {
    const next = evolvePrincipal(this.#records.get(principalId), event);
    if (next !== undefined) this.#records.set(principalId, next);
  }
}

/**
 * Makes sure a service principal and its current signing key are in the log:
 * registers it on first start, adds the key after a rotation, and otherwise
 * appends nothing (safe to call on every start).
 */
export async function registerServicePrincipal(
  store: EventStore,
  input: {
    principalId: string;
    displayName: string;
    key: Ed25519SigningKey;
    roles?: PrincipalRole[];
    now?: Date;
    /** The operator-signed ServiceEnrollment of this principal (service-enrollment.ts): without it, readers refuse the key. */
    authorization?: string;
  },
): Promise<'registered' | 'key_added' | 'unchanged'> {
  const events = await store.readEntity('principal', input.principalId);
  let record: PrincipalRecord | undefined;
  for (const { event } of events) record = evolvePrincipal(record, event);
  const jwk = input.key.publicJwk as PublicEd25519Jwk;
  const at = (input.now ?? new Date()).toISOString();
  const base = {
    event_id: randomUUID(),
    schema_version: 1,
    entity_type: 'principal' as const,
    entity_id: input.principalId,
    occurred_at: at,
    actor_type: 'service' as const,
    actor_id: input.principalId,
    causation_id: null,
    correlation_id: input.principalId,
  };
  if (record === undefined) {
    const payload: PrincipalRegistered = {
      principal_id: input.principalId,
      principal_type: 'service',
      display_name: input.displayName,
      roles: input.roles ?? [],
      keys: [jwk],
      registered_by: input.principalId,
      at,
      ...(input.authorization === undefined ? {} : { authorization: input.authorization }),
    };
    await store.appendToEntity('principal', input.principalId, [{ ...base, event_type: 'principal.registered', payload, idempotency_key: `principal.registered:${jwk.kid}` }], 0);
    return 'registered';
  }
  if (record.keys.has(jwk.kid)) return 'unchanged';
  const payload: PrincipalKeyAdded = { key: jwk, added_by: input.principalId, at, ...(input.authorization === undefined ? {} : { authorization: input.authorization }) };
  await store.appendToEntity('principal', input.principalId, [{ ...base, event_type: 'principal.key_added', payload, idempotency_key: `principal.key_added:${jwk.kid}` }], events.length);
  return 'key_added';
}
