import type { ProjectionStore } from './ports.js';
import type { ProjectedEvent } from './projected-event.js';
import { planEvent, projectEvent, type LoadedRows, type RowChange } from './project-event.js';

export type ApplyOutcome =
  /** Folded and committed together with the checkpoint; `changes` are the rows to publish. */
  | { readonly kind: 'applied'; readonly changes: readonly RowChange[] }
  /** At or below the checkpoint: already applied (a redelivery), nothing done. */
  | { readonly kind: 'skipped'; readonly checkpoint: number }
  /** Above checkpoint + 1: an earlier event is not applied yet; nothing done. */
  | { readonly kind: 'gap'; readonly checkpoint: number };

/**
 * Applies the event at `streamSeq` in ONE transaction with the checkpoint:
 * lock the checkpoint, check the event is the next one, load the rows it
 * touches, fold (pure), write the changed rows, move the checkpoint. A crash
 * anywhere leaves both as they were, so a redelivery re-applies it exactly
 * once. `event` undefined advances the checkpoint past an event that is not
 * an envelope (nothing to fold; it is dead-lettered by the caller).
 *
 * The log's stream sequences are contiguous (the stream denies deletes and
 * purges), so "the next event" is checkpoint + 1.
 */
export async function applyEvent(store: ProjectionStore, streamSeq: number, event: ProjectedEvent | undefined): Promise<ApplyOutcome> {
  return store.transaction(async (tx): Promise<ApplyOutcome> => {
    const checkpoint = await tx.lockCheckpoint();
    if (streamSeq <= checkpoint) return { kind: 'skipped', checkpoint };
    if (streamSeq > checkpoint + 1) return { kind: 'gap', checkpoint };
    let changes: RowChange[] = [];
    if (event !== undefined) {
      const plans = planEvent(event);
      const loaded: { [K in keyof LoadedRows]: LoadedRows[K] } = {};
      for (const plan of plans) (loaded as Record<string, unknown>)[plan.view] = await tx.load(plan.view, plan.locator);
      changes = projectEvent(event, plans, loaded);
      for (const change of changes) await tx.save(change);
    }
    await tx.setCheckpoint(streamSeq);
    return { kind: 'applied', changes };
  });
}
