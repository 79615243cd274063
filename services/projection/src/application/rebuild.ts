import { applyEvent } from './apply-event.js';
import type { EventLog, ProjectionStore, ViewChecksum } from './ports.js';
import { ProjectionError } from './projection-errors.js';
import { toProjectedEvent } from './projected-event.js';
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
}

export interface RebuildDeps {
  readonly log: EventLog;
  /** The projection serving reads. */
  readonly live: ProjectionStore;
  /** A freshly migrated, empty projection (another schema). */
  readonly target: ProjectionStore;
  readonly eventsPrefix: string;
}

/**
 * Invariant 2, checked: replays the log from its first event into `target`
 * with the very same `applyEvent` the live projector runs, up to the live
 * checkpoint read in the same snapshot as the live checksums, then compares
 * every view's checksum. Identical rows ⇔ `identical`.
 *
 * A log holding a message that is not an event envelope fails the replay
 * (`PROJECTION_LOG_UNAVAILABLE`): the rebuild reports such a log rather than
 * folding around it.
 */
export async function rebuildProjection(deps: RebuildDeps): Promise<RebuildReport> {
  if ((await deps.target.checkpoint()) !== 0) {
    throw new ProjectionError('PROJECTION_REBUILD_TARGET_INVALID', 'the rebuild target already holds a projection; rebuild into a fresh, empty schema');
  }
  const live = await deps.live.snapshot();
  if (live.lastSeq > 0) {
    for await (const raw of deps.log.replay(1)) {
      if (raw.streamSeq > live.lastSeq) break;
      const outcome = await applyEvent(deps.target, raw.streamSeq, toProjectedEvent(raw, deps.eventsPrefix));
      if (outcome.kind !== 'applied') {
        throw new ProjectionError('PROJECTION_LOG_UNAVAILABLE', `the replay was not contiguous at stream seq ${raw.streamSeq} (${outcome.kind})`, {
          details: { streamSeq: raw.streamSeq, checkpoint: outcome.checkpoint },
        });
      }
    }
  }
  const rebuilt = await deps.target.snapshot();
  if (rebuilt.lastSeq !== live.lastSeq) {
    throw new ProjectionError('PROJECTION_LOG_UNAVAILABLE', `the replay ended at stream seq ${rebuilt.lastSeq}, before the live checkpoint ${live.lastSeq}`, {
      details: { rebuilt: rebuilt.lastSeq, live: live.lastSeq },
    });
  }
  const views = VIEW_NAMES.map((view) => {
    const a = live.views[view];
    const b = rebuilt.views[view];
    return { view, live: a, rebuilt: b, match: a.rows === b.rows && a.checksum === b.checksum };
  });
  return { lastSeq: live.lastSeq, identical: views.every((v) => v.match), views };
}
