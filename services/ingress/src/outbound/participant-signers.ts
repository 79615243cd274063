import { importEd25519PublicJwk, type Ed25519PublicKey } from '@writ/crypto';
import type { EventStore } from '@writ/eventstore';
import { evolveParticipant, fold, initialParticipantState } from '@writ/kernel';
import type { ParticipantSigner, ParticipantSigners } from '../application/ports.js';

const MAX_CACHED = 10_000;
const FOLD = { initialState: initialParticipantState, decide: () => [], evolve: evolveParticipant };

/**
 * Participants folded from `writ.evt.participant.<seed_id>` — the log itself,
 * the one source of truth for whether a seed may act: nothing is copied into
 * the principal streams, so pausing, retiring, expiring or failing the
 * participant is its revocation. Every lookup reads the stream's head (one
 * direct get) and refolds only when it moved, so a participant retired a
 * moment ago is refused on its very next request.
 */
export class LogParticipantSigners implements ParticipantSigners {
  readonly #folded = new Map<string, { readonly taskSeq: number; readonly signer: ParticipantSigner | undefined }>();
  readonly #imported = new Map<string, Ed25519PublicKey>();

  constructor(private readonly store: EventStore) {}

  async lookup(seedId: string): Promise<ParticipantSigner | undefined> {
    const head = await this.store.headOfEntity('participant', seedId);
    if (head.taskSeq === 0) return undefined;
    const cached = this.#folded.get(seedId);
    if (cached?.taskSeq === head.taskSeq) return cached.signer;
    const events = await this.store.readEntity('participant', seedId);
    const state = fold(FOLD, events.map(({ event }) => ({ type: event.event_type, data: event.payload })));
    const signer: ParticipantSigner | undefined =
      state.status === 'none'
        ? undefined
        : { seed_id: state.seed_id, status: state.status, expires_at: state.expires_at, manifest_hash: state.manifest_hash, child_key: state.child_key };
    if (this.#folded.size >= MAX_CACHED) this.#folded.clear();
    this.#folded.set(seedId, { taskSeq: events.at(-1)?.event.task_seq ?? 0, signer });
    return signer;
  }

  async verificationKey(signer: ParticipantSigner, kid: string): Promise<Ed25519PublicKey> {
    const cacheKey = `${signer.seed_id}:${kid}:${signer.child_key.x}`;
    let key = this.#imported.get(cacheKey);
    if (key === undefined) {
      key = await importEd25519PublicJwk({ kty: 'OKP', crv: 'Ed25519', x: signer.child_key.x, kid });
      if (this.#imported.size >= MAX_CACHED) this.#imported.clear();
      this.#imported.set(cacheKey, key);
    }
    return key;
  }
}
