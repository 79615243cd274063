import { Id } from '@writ/contracts';
import { evolveParticipant, fold, initialParticipantState, type ParentKeys } from '@writ/kernel';
import type { ParentDirectory, ParticipantLog } from '../application/participant-ports.js';
import type { PrincipalDirectory } from '../application/ports.js';

/**
 * Resolves `parent_seed_id` from the log: a registered principal signs with
 * its active keys (`principal.registered` / `key_added`, minus revoked ones);
 * otherwise an active participant signs a sub-seed with its own child key,
 * and its manifest caps what the sub-seed may ask for. Anyone else: null.
 */
export class LogParentDirectory implements ParentDirectory {
  constructor(
    private readonly principals: PrincipalDirectory,
    private readonly participants: ParticipantLog,
  ) {}

  async isPrincipal(id: string): Promise<boolean> {
    return Id.safeParse(id).success && (await this.principals.lookup(id)) !== undefined;
  }

  async resolve(parentSeedId: string): Promise<ParentKeys | null> {
    if (!Id.safeParse(parentSeedId).success) return null;
    const principal = await this.principals.lookup(parentSeedId);
    if (principal !== undefined) return { id: parentSeedId, kind: 'principal', keys: [...principal.keys.values()].map((jwk) => jwk.x) };
    const history = await this.participants.read(parentSeedId);
    const state = fold({ initialState: initialParticipantState, decide: () => [], evolve: evolveParticipant }, history.events);
    if (state.status !== 'active') return null;
    return { id: parentSeedId, kind: 'participant', keys: [state.child_key.x], manifest: state.manifest };
  }
}
