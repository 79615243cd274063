import { hasErrorCode, type PrincipalKeyAdded, type PrincipalKeyRevoked, type PrincipalRole, type PublicEd25519Jwk } from '@writ/contracts';
import type { Ed25519SigningKey } from '@writ/crypto';
import { eventSealer, type EventStore } from '@writ/eventstore';
import type { Logger } from '@writ/telemetry';
import { derivedId } from './event-drafts.js';
import { evolvePrincipal, registerServicePrincipal, type PrincipalRecord } from './principal-registry.js';
import { RuntimeError } from './runtime-errors.js';
import { ServiceKeyring, type OpenedKeyring, type RetiringKey } from './service-keyring.js';

export interface RotatingServiceKeyOptions {
  /** The service principal (`writ-approval`). */
  readonly principalId: string;
  readonly displayName: string;
  readonly roles?: PrincipalRole[];
  /** The key directory: `<kid>.jwk.json` (0600) and `keyring.json`. */
  readonly keyDir: string;
  /** The single key file of older releases, migrated in on first start. */
  readonly legacyKeyFile?: string;
  readonly clock?: () => Date;
  readonly logger?: Logger;
  /**
   * The operator-signed ServiceEnrollment of this principal (`loadServiceEnrollment`), attached as
   * `authorization` to every key this service registers or adds: readers trust its keys only with it.
   */
  readonly authorization?: string;
}

export interface KeyRotation {
  /** The new key's kid; a kid this keyring already knows makes the call a repeat (`already_rotated`). */
  readonly kid: string;
  /** How long the replaced key stays valid: the longest a token it signed may live, plus clock skew. */
  readonly validForSeconds: number;
  /** Who asked (recorded as `added_by`); default the service principal. */
  readonly requestedBy?: string;
}

export interface KeyRotationResult {
  readonly status: 'rotated' | 'already_rotated';
  readonly kid: string;
  readonly previous_kid: string;
  readonly retire_after: string;
}

/** Re-read-and-append rounds when another writer appends to the principal meanwhile. */
const MAX_ROUNDS = 5;

/**
 * A service's signing key that rotates without breaking what it signed
 * (approval's grants now, receipts later), over a `ServiceKeyring` on disk and
 * the principal's stream in the log:
 *
 * - start: the keyring opens (migrating the legacy key file), the principal and
 *   its active key are made sure of in the log, and a rotation a crash left half
 *   done is finished;
 * - `rotate`: a new key is written, `principal.key_added` (with `replaces`:
 *   the old kid and its `retire_after`) is appended FIRST, and only then does
 *   the new key sign. The old key is not revoked: verifiers keep accepting it;
 * - `retireDue`: each replaced key past its `retire_after` gets
 *   `principal.key_revoked` (reason `rotated`). The schedule is the keyring
 *   state on disk, so a restart keeps it; `startRetirementChecks` runs it now
 *   and on an interval.
 *
 * Calls are serialized in the process, and every change of the keyring runs
 * under the key directory's lock on the state as it is on disk then
 * (`ServiceKeyring.exclusive`). So replicas of one service may share the
 * directory (one volume): a rotation asked of any of them rotates the key of
 * all, each switching to the new key at its next check (it signs with the
 * replaced key, still valid, until then), and a key retires once. The replaced
 * key's validity must therefore outlast the check interval.
 */
export class RotatingServiceKey {
  readonly #store: EventStore;
  readonly #keyring: ServiceKeyring;
  readonly #options: RotatingServiceKeyOptions;
  readonly #clock: () => Date;
  #queue: Promise<unknown> = Promise.resolve();
  #timer: ReturnType<typeof setInterval> | undefined;

  private constructor(store: EventStore, keyring: ServiceKeyring, options: RotatingServiceKeyOptions) {
    this.#store = store;
    this.#keyring = keyring;
    this.#options = options;
    this.#clock = options.clock ?? (() => new Date());
  }

  static async start(store: EventStore, options: RotatingServiceKeyOptions): Promise<{ key: RotatingServiceKey; origin: OpenedKeyring['origin']; registration: string }> {
    const clock = options.clock ?? (() => new Date());
    // The kid only names a key generated here: one per key, so a regenerated key is registered, never shadowed.
    const opened = await ServiceKeyring.open({
      dir: options.keyDir,
      ...(options.legacyKeyFile === undefined ? {} : { legacyKeyFile: options.legacyKeyFile }),
      newKid: () => `${options.principalId.slice(0, 100)}-${clock().getTime().toString(36)}`,
    });
    const key = new RotatingServiceKey(store, opened.keyring, options);
    // The service's key seals every event it appends (its registration first, which the key it registers proves), following rotations.
    store.sealWith(eventSealer(options.principalId, () => opened.keyring.active));
    const registration = await registerServicePrincipal(store, {
      principalId: options.principalId,
      displayName: options.displayName,
      key: opened.keyring.active,
      ...(options.roles === undefined ? {} : { roles: options.roles }),
      ...(options.authorization === undefined ? {} : { authorization: options.authorization }),
      now: clock(),
    });
    await key.#serial(() => opened.keyring.exclusive(() => key.#finishPending()));
    if (registration === 'unchanged' && options.authorization !== undefined && !(await key.#activeKeyAuthorized())) {
      options.logger?.warn(
        { principal_id: options.principalId, kid: opened.keyring.active.kid },
        'the signing key was registered before this service was enrolled: no reader trusts it (grants, receipts); rotate it once (writ keys rotate) so the new key carries the enrollment',
      );
    }
    options.logger?.info(
      { principal_id: options.principalId, kid: opened.keyring.active.kid, key_origin: opened.origin, registration, retiring: opened.keyring.state.retiring },
      'service signing key ready',
    );
    return { key, origin: opened.origin, registration };
  }

  /** Whether the event that brought the active key into the log carries an authorization (an enrollment). */
  async #activeKeyAuthorized(): Promise<boolean> {
    const kid = this.#keyring.active.kid;
    for (const { event } of await this.#store.readEntity('principal', this.principalId)) {
      const payload = event.payload as { keys?: { kid?: string }[]; key?: { kid?: string }; authorization?: unknown };
      const brings = event.event_type === 'principal.registered' ? (payload.keys ?? []).some((jwk) => jwk.kid === kid) : event.event_type === 'principal.key_added' && payload.key?.kid === kid;
      if (brings) return typeof payload.authorization === 'string';
    }
    return false;
  }

  /** The key that signs now (read at each signature: a rotation switches it). */
  get active(): Ed25519SigningKey {
    return this.#keyring.active;
  }

  get principalId(): string {
    return this.#options.principalId;
  }

  /** Keys replaced by a rotation and not retired yet, with their `retire_after`. */
  retiring(): readonly RetiringKey[] {
    return this.#keyring.state.retiring;
  }

  rotate(rotation: KeyRotation): Promise<KeyRotationResult> {
    return this.#exclusive(async () => {
      // A rotation a crash left half done is finished first (it may be this very request, retried).
      await this.#finishPending();
      const repeat = this.#repeat(rotation.kid);
      if (repeat !== undefined) return repeat;
      const previous = this.#keyring.active.kid;
      const retireAfter = new Date(this.#clock().getTime() + rotation.validForSeconds * 1000);
      await this.#keyring.begin(rotation.kid, retireAfter, rotation.requestedBy);
      const { retiring } = await this.#finishPending();
      this.#options.logger?.info({ principal_id: this.principalId, kid: rotation.kid, previous_kid: previous, retire_after: retiring?.retire_after }, 'signing key rotated');
      return { status: 'rotated', kid: rotation.kid, previous_kid: previous, retire_after: retiring?.retire_after ?? retireAfter.toISOString() };
    });
  }

  /**
   * Appends `principal.key_revoked` (reason `rotated`) for every replaced key past its
   * `retire_after`; the kids retired now (by this call: a key another process sharing the
   * directory retired first is not among them). On the way it takes up what such a process
   * changed (a rotation: this one signs with the new key from now on) and finishes a
   * rotation one of them left half done.
   */
  retireDue(now: Date = this.#clock()): Promise<string[]> {
    return this.#exclusive(async () => {
      await this.#finishPending();
      const retired: string[] = [];
      for (const due of this.#keyring.due(now)) {
        await this.#appendRevoked(due.kid, now);
        await this.#keyring.markRetired(due.kid, now);
        retired.push(due.kid);
        this.#options.logger?.info({ principal_id: this.principalId, kid: due.kid, retire_after: due.retire_after }, 'replaced signing key retired');
      }
      return retired;
    });
  }

  /**
   * Retires what is due now, then every `intervalMs` (a failed check is logged and
   * retried at the next tick); each check also takes up a rotation made by another
   * process sharing the key directory. Stopped by `stop()`.
   */
  startRetirementChecks(intervalMs: number): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    const check = () =>
      void this.retireDue().catch((error: unknown) => this.#options.logger?.warn({ err: error, principal_id: this.principalId }, 'retiring replaced signing keys failed; retried at the next check'));
    check();
    this.#timer = setInterval(check, intervalMs);
    this.#timer.unref();
  }

  /** Stops the retirement checks and waits for one under way. */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#queue.catch(() => undefined);
  }

  /** Runs a change of the keyring: one at a time in this process, under the directory's lock, on the state on disk (a switch made by another process is logged). */
  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.#serial(() => {
      const before = this.#keyring.active.kid;
      return this.#keyring.exclusive(async () => {
        if (this.#keyring.active.kid !== before) {
          this.#options.logger?.info({ principal_id: this.principalId, kid: this.#keyring.active.kid, previous_kid: before }, 'signing key switched: rotated by another process sharing the key directory');
        }
        return work();
      });
    });
  }

  #repeat(kid: string): KeyRotationResult | undefined {
    const state = this.#keyring.state;
    if (!this.#keyring.knows(kid)) return undefined;
    const replaced = state.retiring.find((key) => key.replaced_by === kid);
    return { status: 'already_rotated', kid, previous_kid: replaced?.kid ?? kid, retire_after: replaced?.retire_after ?? this.#clock().toISOString() };
  }

  /** A begun rotation: the log gets the new key first, then the keyring switches to it. */
  async #finishPending(): Promise<{ retiring?: RetiringKey }> {
    const pending = this.#keyring.pending;
    if (pending === undefined) return {};
    await this.#appendAdded(pending.key, { kid: this.#keyring.active.kid, retire_after: pending.retire_after }, pending.requested_by ?? this.principalId);
    const { retiring } = await this.#keyring.switchToPending();
    return { retiring };
  }

  async #appendAdded(key: Ed25519SigningKey, replaces: { kid: string; retire_after: string }, addedBy: string): Promise<void> {
    const jwk = key.publicJwk as PublicEd25519Jwk;
    await this.#appendPrincipalEvent('principal.key_added', jwk.kid, (record) => {
      if (record.keys.has(jwk.kid)) return undefined;
      if (record.revoked_kids.has(jwk.kid)) {
        throw new RuntimeError('RUNTIME_KEY_ROTATION_FAILED', `key ${jwk.kid} of ${this.principalId} is revoked in the log; rotate again (a new kid)`, { details: { kid: jwk.kid } });
      }
      const authorization = this.#options.authorization;
      const payload: PrincipalKeyAdded = { key: jwk, added_by: addedBy, at: this.#clock().toISOString(), replaces, ...(authorization === undefined ? {} : { authorization }) };
      return payload;
    });
  }

  async #appendRevoked(kid: string, now: Date): Promise<void> {
    await this.#appendPrincipalEvent('principal.key_revoked', kid, (record) => {
      if (record.revoked_kids.has(kid) || !record.keys.has(kid)) return undefined;
      const payload: PrincipalKeyRevoked = { kid, reason: 'rotated', revoked_by: this.principalId, at: now.toISOString() };
      return payload;
    });
  }

  /** Reads the principal, lets `decide` draft the payload (undefined: the log already says it), appends; a lost race re-reads. */
  async #appendPrincipalEvent(eventType: string, kid: string, decide: (record: PrincipalRecord) => object | undefined): Promise<void> {
    const principalId = this.principalId;
    for (let round = 1; ; round++) {
      const events = await this.#store.readEntity('principal', principalId);
      let record: PrincipalRecord | undefined;
      for (const { event } of events) record = evolvePrincipal(record, event);
      if (record === undefined) {
        throw new RuntimeError('RUNTIME_KEY_ROTATION_FAILED', `service principal ${principalId} is not registered in the log`, { details: { principal_id: principalId } });
      }
      const payload = decide(record);
      if (payload === undefined) return;
      const key = `${eventType}:${kid}`;
      const draft = {
        event_id: derivedId('prn', principalId, eventType, kid),
        schema_version: 1,
        event_type: eventType,
        entity_type: 'principal' as const,
        entity_id: principalId,
        occurred_at: this.#clock().toISOString(),
        actor_type: 'service' as const,
        actor_id: principalId,
        payload: payload as Record<string, unknown>,
        causation_id: null,
        correlation_id: principalId,
        idempotency_key: key,
      };
      try {
        await this.#store.appendToEntity('principal', principalId, [draft], events.at(-1)?.event.task_seq ?? 0);
        return;
      } catch (error) {
        if (!hasErrorCode(error, 'EVENTSTORE_CONFLICT')) throw error;
        if (round >= MAX_ROUNDS) {
          throw new RuntimeError('RUNTIME_KEY_ROTATION_FAILED', `the log of ${principalId} kept changing while appending ${eventType}; retry`, { cause: error, details: { kid } });
        }
      }
    }
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work, work);
    this.#queue = next.catch(() => undefined);
    return next;
  }
}
