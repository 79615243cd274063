import type { EventDraft } from '@writ/contracts';
import type { ResolutionRefusals, TaskHistory, TaskLog } from './ports.js';

/**
 * The task log as every handler of the approval service reads it (DESIGN invariant 9):
 * a director's decision (`approval.granted` / `approval.denied`) counts only when its
 * recorded signature holds up (`@writ/runtime` ResolutionAuthority). The others are
 * left out of the events the handlers fold, and listed in `refused`: a forged grant is
 * no grant, so no capability is minted on it, and the approval stays pending for a
 * real director (or its expiry, or its cancellation).
 */
export class TrustedTaskLog implements TaskLog {
  constructor(
    private readonly inner: TaskLog,
    private readonly authority: ResolutionRefusals,
  ) {}

  async read(taskId: string): Promise<TaskHistory> {
    const history = await this.inner.read(taskId);
    const refused = await this.authority.refusals(history.events);
    if (refused.size === 0) return { ...history, refused };
    return { events: history.events.filter((event) => !refused.has(event.event_id)), seq: history.seq, refused };
  }

  append(taskId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<{ readonly duplicate: boolean }> {
    return this.inner.append(taskId, drafts, expectedSeq);
  }
}
