import type { QuarantineRecord } from '@writ/contracts';
import type { ProjectionStore, ProjectionTx } from './ports.js';
import type { ProjectedEvent } from './projected-event.js';
import { foldPlan, planEvent, type RowChange, type RowPlan } from './project-event.js';
import { publishedViews, sequenceChanges, type PublishedChange } from './published-change.js';
import { VIEW_NAMES, type ViewName } from './views/index.js';

export type ApplyOutcome =
  /** Folded and committed together with the checkpoint; `changes` are the rows written, `published` those of published views as they go out (with their versions). */
  | { readonly kind: 'applied'; readonly changes: readonly RowChange[]; readonly published: readonly PublishedChange[] }
  /** At or below the checkpoint: already applied (a redelivery), nothing done. */
  | { readonly kind: 'skipped'; readonly checkpoint: number }
  /** Above checkpoint + 1: an earlier event is not applied yet; nothing done. */
  | { readonly kind: 'gap'; readonly checkpoint: number };

/**
 * Applies the event at `streamSeq` in ONE transaction with the checkpoint:
 * lock the checkpoint, check the event is the next one, then for each row it
 * touches load it, fold (pure) and write it, and move the checkpoint. A crash
 * anywhere leaves both as they were, so a redelivery re-applies it exactly
 * once. `event` undefined advances the checkpoint past a message that is not
 * an event (nothing to fold); its `quarantined` record, when given, is
 * written in the same transaction (invariant 10: passed over, recorded).
 *
 * The log's stream sequences are contiguous (the stream denies deletes and
 * purges), so "the next event" is checkpoint + 1. `views` limits the folding
 * to some views (a partial rebuild); the live projector folds all.
 */
export async function applyEvent(
  store: ProjectionStore,
  streamSeq: number,
  event: ProjectedEvent | undefined,
  views: readonly ViewName[] = VIEW_NAMES,
  quarantined?: QuarantineRecord,
): Promise<ApplyOutcome> {
  return store.transaction(async (tx): Promise<ApplyOutcome> => {
    const checkpoint = await tx.lockCheckpoint();
    if (streamSeq <= checkpoint) return { kind: 'skipped', checkpoint };
    if (streamSeq > checkpoint + 1) return { kind: 'gap', checkpoint };
    let changes: RowChange[] = [];
    let published: PublishedChange[] = [];
    if (event !== undefined) {
      const plans = planEvent(event, views);
      const before = await versionsBefore(tx, plans);
      await tx.prefetch?.(plans);
      changes = await foldInto(tx, event, plans);
      published = sequenceChanges(changes, before);
    }
    if (quarantined !== undefined) await tx.quarantine(quarantined);
    await tx.setCheckpoint(streamSeq);
    return { kind: 'applied', changes, published };
  });
}

/** One event of a batch: its stream sequence, and its envelope (undefined: not an event, passed over, with its quarantine record when the log gave one). */
export interface BatchEvent {
  readonly streamSeq: number;
  readonly event: ProjectedEvent | undefined;
  readonly quarantined?: QuarantineRecord;
}

/**
 * Applies a run of consecutive events in ONE transaction, the checkpoint
 * moved once to the last: what a rebuild does, where nobody reads the rows
 * in between and a commit per event would only cost time. Each event is
 * folded exactly as `applyEvent` folds it (same plans, same loads, which see
 * the batch's own writes), so the rows are identical. The batch must start at
 * checkpoint + 1 and be contiguous, else nothing is applied (`gap`/`skipped`).
 */
export async function applyBatch(store: ProjectionStore, batch: readonly BatchEvent[], views: readonly ViewName[] = VIEW_NAMES): Promise<ApplyOutcome> {
  return store.transaction(async (tx): Promise<ApplyOutcome> => {
    const checkpoint = await tx.lockCheckpoint();
    const first = batch[0];
    if (first === undefined) return { kind: 'skipped', checkpoint };
    if (first.streamSeq <= checkpoint) return { kind: 'skipped', checkpoint };
    if (batch.some((item, index) => item.streamSeq !== first.streamSeq + index) || first.streamSeq > checkpoint + 1) return { kind: 'gap', checkpoint };
    const planned = batch.map((item) => (item.event === undefined ? [] : planEvent(item.event, views)));
    const before = await versionsBefore(tx, planned.flat());
    await tx.prefetch?.(planned.flat());
    const changes: RowChange[] = [];
    for (const [index, item] of batch.entries()) {
      if (item.event !== undefined) changes.push(...(await foldInto(tx, item.event, planned[index] ?? [])));
      if (item.quarantined !== undefined) await tx.quarantine(item.quarantined);
    }
    await tx.setCheckpoint(first.streamSeq + batch.length - 1);
    return { kind: 'applied', changes, published: sequenceChanges(changes, before) };
  });
}

/** The highest row version of each published view the plans may change, before this transaction writes anything. */
async function versionsBefore(tx: ProjectionTx, plans: readonly RowPlan[]): Promise<Readonly<Partial<Record<ViewName, number>>>> {
  const views = publishedViews(plans.map((plan) => plan.view));
  return views.length === 0 ? {} : tx.viewVersions(views);
}

/** Load, fold, write, row by row: a later row of the same event sees an earlier one's write. */
async function foldInto(tx: ProjectionTx, event: ProjectedEvent, plans: readonly RowPlan[]): Promise<RowChange[]> {
  const changes: RowChange[] = [];
  for (const plan of plans) {
    const change = foldPlan(event, plan, await tx.load(plan.view, plan.locator));
    if (change === undefined) continue;
    await tx.save(change);
    changes.push(change);
  }
  return changes;
}
