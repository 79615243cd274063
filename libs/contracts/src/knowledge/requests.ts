import { z } from 'zod';
import { Id, Name, Timestamp } from '../ids.js';
import { LIMITS } from '../limits.js';
import { Text } from '../text.js';
import { Belief, BeliefStatus } from './belief.js';
import { WORKING_STATE_CEILINGS, WorkingStateEntry } from './working-state.js';

/**
 * The signed knowledge requests (issue 17): a task's owner (or a director)
 * revises the task's working state or asserts, supersedes and revokes its
 * beliefs through the orchestrator, which owns task state. Modelled on the
 * task claims: a compact EdDSA JWS whose `typ` names the kind, so a JWS of one
 * kind never passes for another.
 */
export const WORKING_STATE_REVISION_JWS_TYPE = 'writ-working-state-revision+jws';
export const BELIEF_REQUEST_JWS_TYPE = 'writ-belief-request+jws';

/**
 * What the signer signs to revise a task's working state (typ
 * `writ-working-state-revision+jws`). `request_id` is the signer's own id of
 * this revision: the same id sent again is answered as a duplicate and
 * appends nothing. `expected_revision` is the revision the signer read
 * (0 before the first): a revision made against a stale read is refused
 * (KNOWLEDGE_WORKING_STATE_REVISION_CONFLICT), never merged. `compact`
 * compacts first (Hermit 15.2): every entry no root reaches through `refs` is
 * dropped (roots: pinned entries, objectives, constraints, pending questions,
 * uncertainties, and the keys in `references`), then `set` and `remove` apply;
 * it is how a working state at its size limit makes room.
 */
export const WorkingStateRevisionSubmission = z.strictObject({
  task_id: Id,
  request_id: Id,
  expected_revision: z.int().min(0),
  set: z.array(WorkingStateEntry).max(WORKING_STATE_CEILINGS.max_entries),
  remove: z.array(Name).max(WORKING_STATE_CEILINGS.max_entries),
  compact: z
    .strictObject({ references: z.array(Name).max(LIMITS.listItems).describe('Keys held from outside (the current plan, what a pending attempt reads): kept, with all they reach.') })
    .optional(),
  revised_by: Id,
  revised_at: Timestamp,
});
export type WorkingStateRevisionSubmission = z.infer<typeof WorkingStateRevisionSubmission>;

/**
 * A belief as its asserter writes it: the orchestrator sets `task_id`
 * (the request's), `status`, `version`, `created_at` and `asserted_by` (the
 * verified signer). `supersedes` retires an earlier belief of the task;
 * `contradicts` marks contradictions with existing ones (Hermit 15.3).
 */
export const BeliefAssertion = Belief.omit({ task_id: true, status: true, version: true, created_at: true, asserted_by: true, superseded_by: true }).meta({
  title: 'BeliefAssertion',
  description: 'A belief as its asserter writes it; Writ sets task, status, version, creation time and asserter.',
});
export type BeliefAssertion = z.infer<typeof BeliefAssertion>;

/** One change to a task's beliefs: assert (a supersession is an assertion naming `supersedes`), or revoke. Beliefs are never deleted. */
export const BeliefChange = z.discriminatedUnion('op', [
  z.strictObject({ op: z.literal('assert'), belief: BeliefAssertion }),
  z.strictObject({ op: z.literal('revoke'), belief_id: Id, reason: Text }),
]);
export type BeliefChange = z.infer<typeof BeliefChange>;

/** What the signer signs to change a task's beliefs (typ `writ-belief-request+jws`); `request_id` as in a working state revision. */
export const BeliefRequestSubmission = z.strictObject({
  task_id: Id,
  request_id: Id,
  change: BeliefChange,
  requested_by: Id,
  requested_at: Timestamp,
});
export type BeliefRequestSubmission = z.infer<typeof BeliefRequestSubmission>;

/** `writ.qry.orchestrator.revise-working-state` / `writ.qry.orchestrator.change-belief` (request/reply): the signed request and its task. */
export const SubmitKnowledgeRequest = z.strictObject({ task_id: Id, request_jws: z.string().min(1).max(LIMITS.rawMessage) });
export type SubmitKnowledgeRequest = z.infer<typeof SubmitKnowledgeRequest>;

/** The orchestrator's answer to an accepted revision (a refusal travels as `{ code, message }`). */
export const WorkingStateRevisionReply = z.strictObject({
  task_id: Id,
  request_id: Id,
  status: z.literal('accepted'),
  /** The revision this request made (a duplicate: the revision it made the first time). */
  revision: z.int().min(1),
  /** Whether the log already held this request (the same request_id sent again). */
  duplicate: z.boolean(),
});
export type WorkingStateRevisionReply = z.infer<typeof WorkingStateRevisionReply>;

/** The orchestrator's answer to an accepted belief change. */
export const BeliefRequestReply = z.strictObject({
  task_id: Id,
  request_id: Id,
  status: z.literal('accepted'),
  op: z.enum(['assert', 'revoke']),
  belief_id: Id,
  /** The belief's status and version as the log says now. */
  belief_status: BeliefStatus,
  version: z.int().min(1),
  /** The event types this request appended, in order (`belief.asserted`, `belief.superseded`, ...). */
  events: z.array(z.string()).max(LIMITS.listItems),
  duplicate: z.boolean(),
});
export type BeliefRequestReply = z.infer<typeof BeliefRequestReply>;
