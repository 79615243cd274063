import { describe, expect, it } from 'vitest';
import { APPROVAL, TASK, logWithPendingApproval, orchestratorReaction } from '../../test/racing-log.js';
import { CancelApprovalHandler } from './cancel-approval.handler.js';
import { ExpireApprovalHandler } from './expire-approval.handler.js';

// A resolution and its decision.recorded are two publishes: when another writer lands between them, the
// redelivered command (same causation) must record the decision, not find the approval resolved and stop.

const types = (events: readonly { event_type: string }[]) => events.map((event) => event.event_type);

describe('a resolution whose decision lost the race', () => {
  it('given the orchestrator reacts between an invalidation and its decision, when the cancel command is redelivered, then the decision is recorded once', async () => {
    // given
    const log = logWithPendingApproval();
    log.interleave = orchestratorReaction();
    const handler = new CancelApprovalHandler({ log, clock: () => new Date('2030-01-01T00:05:00.000Z'), principalId: 'writ-approval' });
    const command = { task_id: TASK, step_id: 'step-1', attempt_id: 'att-1', approval_id: APPROVAL, cause: 'input_drift' as const, reason: 'superseded by ar-2', cancelled_by: 'writ-orchestrator' };
    await expect(handler.handle(command, { commandId: 'cmd-1' })).rejects.toMatchObject({ code: 'EVENTSTORE_CONFLICT' });
    // when the bus redelivers it, twice
    const first = await handler.handle(command, { commandId: 'cmd-1' });
    const second = await handler.handle(command, { commandId: 'cmd-1' });
    // then
    expect([first, second]).toEqual(['invalidated', 'invalidated']);
    expect(types(log.events)).toEqual(['approval.requested', 'approval.invalidated', 'attempt.approval_denied', 'decision.recorded']);
  });

  it('given the orchestrator reacts between an expiry and its decision, when the timer fires, then it reports expired with the decision recorded', async () => {
    // given
    const log = logWithPendingApproval();
    log.interleave = orchestratorReaction();
    const handler = new ExpireApprovalHandler({ log, clock: () => new Date('2030-01-01T02:00:00.000Z'), principalId: 'writ-approval' });
    // when
    const outcome = await handler.handle({ task_id: TASK, step_id: 'step-1', attempt_id: 'att-1', approval_id: APPROVAL, expires_at: '2030-01-01T01:00:00.000Z' }, { commandId: 'timer-1' });
    // then
    expect(outcome).toEqual({ kind: 'expired' });
    expect(types(log.events)).toEqual(['approval.requested', 'approval.expired', 'attempt.approval_denied', 'decision.recorded']);
  });
});
