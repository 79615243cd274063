import { hasErrorCode, type ContractError } from '@writ/contracts';
import { applyBatch, type BatchEvent } from './apply-event.js';
import type { EventLog, ProjectionSnapshot, ProjectionStore, ViewChecksum } from './ports.js';
import { ProjectionError } from './projection-errors.js';
import { toProjectedEvent, unjudgedQuarantine, type RawStoredEvent } from './projected-event.js';
import { VIEW_NAMES, type ViewName } from './views/index.js';

export interface ViewComparison {
  readonly view: ViewName;
  readonly live: ViewChecksum;
  readonly rebuilt: ViewChecksum;
  readonly match: boolean;
}

export interface RebuildReport {
  /** The live checkpoint the rebuild replayed up to. */
  readonly lastSeq: number;
  readonly identical: boolean;
  readonly views: readonly ViewComparison[];
  /** Messages of the log that are not events (quarantined), passed over as the live projector passes over them. */
  readonly skipped: number;
}

export interface RebuildDeps {
  readonly log: EventLog;
  /** The projection serving reads. */
  readonly live: ProjectionStore;
  /** A freshly migrated, empty projection (another schema). */
  readonly target: ProjectionStore;
  readonly eventsPrefix: string;
  /** The views to rebuild and compare (default all). */
  readonly views?: readonly ViewName[];
}

/** Events per transaction of a replay. */
export const REPLAY_BATCH = 500;

export interface ReplayProgress {
  /** Events applied by this replay so far. */
  readonly replayed: number;
  readonly skipped: number;
  /** The stream sequence the target has reached. */
  readonly at: number;
}

export interface ReplayOptions {
  readonly log: EventLog;
  readonly target: ProjectionStore;
  readonly eventsPrefix: string;
  readonly views: readonly ViewName[];
  /** Replays up to and including this stream sequence. */
  readonly untilSeq: number;
  readonly batchSize?: number;
  /** After each committed batch; may throw to stop the replay (e.g. the service is stopping). */
  readonly onBatch?: (progress: ReplayProgress) => void | Promise<void>;
}

/**
 * Replays the log into `target` from its checkpoint + 1 up to `untilSeq`,
 * with the very same folds the live projector runs, in batches of
 * consecutive events per transaction (`applyBatch`: identical rows, fewer
 * commits). A message that is not an event is passed over, counted and
 * recorded, exactly as the live projector moves its checkpoint past it. Ends
 * with the target's checkpoint at `untilSeq`, or throws
 * `PROJECTION_LOG_UNAVAILABLE` when the log does not yield those events.
 */
export async function replayInto(options: ReplayOptions): Promise<ReplayProgress> {
  const { log, target, eventsPrefix, views, untilSeq } = options;
  const batchSize = options.batchSize ?? REPLAY_BATCH;
  const from = (await target.checkpoint()) + 1;
  let replayed = 0;
  let skipped = 0;
  let at = from - 1;
  if (from > untilSeq) return { replayed, skipped, at };
  let batch: BatchEvent[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const outcome = await applyBatch(target, batch, views);
    if (outcome.kind !== 'applied') {
      throw new ProjectionError('PROJECTION_LOG_UNAVAILABLE', `the replay was not contiguous at stream seq ${batch[0]?.streamSeq} (${outcome.kind})`, {
        details: { streamSeq: batch[0]?.streamSeq, checkpoint: outcome.checkpoint },
      });
    }
    replayed += batch.length;
    at = batch.at(-1)?.streamSeq ?? at;
    batch = [];
    await options.onBatch?.({ replayed, skipped, at });
  };
  for await (const raw of log.replay(from)) {
    if (raw.streamSeq > untilSeq) break;
    batch.push(parse(raw, eventsPrefix, () => skipped++));
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  if (at !== untilSeq) {
    throw new ProjectionError('PROJECTION_LOG_UNAVAILABLE', `the replay ended at stream seq ${at}, before ${untilSeq}`, { details: { reached: at, until: untilSeq } });
  }
  return { replayed, skipped, at };
}

function parse(raw: RawStoredEvent, eventsPrefix: string, onSkip: () => void): BatchEvent {
  if (raw.quarantined !== undefined) {
    onSkip();
    return { streamSeq: raw.streamSeq, event: undefined, quarantined: raw.quarantined };
  }
  try {
    return { streamSeq: raw.streamSeq, event: toProjectedEvent(raw, eventsPrefix) };
  } catch (error) {
    if (!hasErrorCode(error, 'CONTRACT_INVALID')) throw error;
    onSkip();
    return { streamSeq: raw.streamSeq, event: undefined, quarantined: unjudgedQuarantine(raw, 'events', error as ContractError) };
  }
}

/** Per view, live vs rebuilt. */
export function compareSnapshots(live: ProjectionSnapshot, rebuilt: ProjectionSnapshot, views: readonly ViewName[]): ViewComparison[] {
  return views.map((view) => {
    const a = live.views[view] ?? { rows: 0, checksum: '' };
    const b = rebuilt.views[view] ?? { rows: 0, checksum: '' };
    return { view, live: a, rebuilt: b, match: a.rows === b.rows && a.checksum === b.checksum };
  });
}

/**
 * Invariant 2, checked (no swap: `RebuildJobs` swaps): replays the log from
 * its first event into `target` with the very same folds the live projector
 * runs, up to the live checkpoint read in the same snapshot as the live
 * checksums, then compares every view's checksum. Identical rows ⇔ `identical`.
 */
export async function rebuildProjection(deps: RebuildDeps): Promise<RebuildReport> {
  const views = deps.views ?? VIEW_NAMES;
  if ((await deps.target.checkpoint()) !== 0) {
    throw new ProjectionError('PROJECTION_REBUILD_TARGET_INVALID', 'the rebuild target already holds a projection; rebuild into a fresh, empty schema');
  }
  const live = await deps.live.snapshot(views);
  const { skipped } = await replayInto({ log: deps.log, target: deps.target, eventsPrefix: deps.eventsPrefix, views, untilSeq: live.lastSeq });
  const rebuilt = await deps.target.snapshot(views);
  const compared = compareSnapshots(live, rebuilt, views);
  return { lastSeq: live.lastSeq, identical: compared.every((v) => v.match), views: compared, skipped };
}
