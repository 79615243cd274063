import type { RequestApproval } from '@writ/contracts';
import { approvalDecider } from '@writ/kernel';
import { ApprovalServiceError } from './approval-errors.js';
import { buildApprovalPacket, packetArtifactRef, packetDocument, packetDocumentBytes } from './approval-packet.js';
import { causationIdOf, serviceDraft } from './event-drafts.js';
import type { ArtifactStore, Clock, CommandOrigin, ExpiryScheduler, TaskLog, WorkspaceWitness } from './ports.js';
import { stateWitness, witnessRequired, witnessResources } from './state-witness.js';
import { foldApproval } from './task-history.js';

export interface RequestApprovalDeps {
  readonly log: TaskLog;
  readonly clock: Clock;
  /** The approval service principal: actor of the events. */
  readonly principalId: string;
  readonly approvalTtlSeconds: number;
  /** The executor's read-only workspace observation, for the state witness. */
  readonly witness: WorkspaceWitness;
  /** Where the packet (with its state witness) is stored as an approval.packet artifact (Hermit 16.7). */
  readonly artifacts: ArtifactStore;
  /** The durable expiry timer of every pending approval. */
  readonly expiry: ExpiryScheduler;
}

export type RequestApprovalOutcome = 'requested' | 'already_requested';

/**
 * `writ.cmd.approval.request` (governed path step 4): load the task, decide
 * `request-approval` with the kernel, append `approval.requested` carrying the
 * approval packet. A redelivered command finds the approval in the log and
 * appends nothing.
 *
 * When the policy result requires a state witness (Hermit 16.8, 12.4), the executor
 * observes the request's resources first and their fingerprints are the witness the
 * kernel records on `approval.requested` (and the packet's `state_witness_ref`). If
 * the executor cannot answer, APPROVAL_WITNESS_UNAVAILABLE is thrown and the bus
 * retries with backoff: an approval is never recorded without the witness it needs.
 *
 * The packet and the witness are stored as one approval.packet artifact (RFC 8785 JSON in the
 * artifact bucket) before anything is appended, and `approval_packet_ref` is
 * `artifact:sha256:<hex>` of it; the packet stays inline on the event too. After the append
 * (and again for a redelivered command whose approval is still pending) the expiry timer is
 * scheduled: a crash between the two leaves the command unacked, and its redelivery schedules it.
 */
export class RequestApprovalHandler {
  constructor(private readonly deps: RequestApprovalDeps) {}

  async handle(command: RequestApproval, origin: CommandOrigin): Promise<RequestApprovalOutcome> {
    const history = await this.deps.log.read(command.task_id);
    if (history.seq === 0) {
      throw new ApprovalServiceError('APPROVAL_TASK_NOT_FOUND', `task ${command.task_id} has no events; nothing to approve`, { details: { task_id: command.task_id } });
    }
    const state = foldApproval(history.events, command.approval_id);
    if (state.status !== 'initial') {
      if (state.attempt_id !== command.attempt_id) {
        throw new ApprovalServiceError('APPROVAL_ID_CONFLICT', `approval ${command.approval_id} belongs to attempt ${state.attempt_id}`, {
          details: { approval_id: command.approval_id, attempt_id: state.attempt_id },
        });
      }
      // The timer may not have been scheduled before a crash: schedule it again (deduplicated by msg id).
      if (state.status === 'pending') await this.#scheduleExpiry(command, state.expires_at);
      return 'already_requested';
    }

    const witness = witnessRequired(history.events, command.policy_result_id)
      ? stateWitness(command.task_id, await this.deps.witness.observe(command.task_id, witnessResources(command.action_request), { wait: true }))
      : undefined;
    const now = this.deps.clock();
    const at = now.toISOString();
    const expiresAt = new Date(now.getTime() + this.deps.approvalTtlSeconds * 1000).toISOString();
    const packet = buildApprovalPacket(command, expiresAt, witness?.ref);
    const stored = await this.deps.artifacts.put(packetDocumentBytes(packetDocument(packet, witness)));
    const events = approvalDecider.decide(
      {
        type: 'request-approval',
        data: {
          approval_id: command.approval_id,
          task_id: command.task_id,
          step_id: command.step_id,
          attempt_id: command.attempt_id,
          approval_type: 'action',
          requested_action_ref: `action_request:${command.action_request.action_request_id}`,
          approval_packet_ref: packetArtifactRef(stored.sha256),
          requested_by: command.requested_by,
          policy_result_ref: `policy_result:${command.policy_result_id}`,
          expires_at: expiresAt,
          ...(witness === undefined ? {} : { state_witness: witness }),
        },
        metadata: { now: at },
      },
      state,
    );
    const drafts = events.map((event) =>
      serviceDraft({
        key: `${command.approval_id}:${event.type}`,
        eventType: event.type,
        entityType: 'approval',
        entityId: command.approval_id,
        stepId: command.step_id,
        attemptId: command.attempt_id,
        occurredAt: at,
        actorId: this.deps.principalId,
        payload: { ...event.data, packet },
        causationId: causationIdOf(origin.commandId),
        correlationId: command.task_id,
      }),
    );
    await this.deps.log.append(command.task_id, drafts, history.seq);
    await this.#scheduleExpiry(command, expiresAt);
    return 'requested';
  }

  #scheduleExpiry(command: RequestApproval, expiresAt: string): Promise<void> {
    return this.deps.expiry.schedule({
      task_id: command.task_id,
      step_id: command.step_id,
      attempt_id: command.attempt_id,
      approval_id: command.approval_id,
      expires_at: expiresAt,
    });
  }
}
