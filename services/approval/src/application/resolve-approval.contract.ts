import { Id, ResolveApproval } from '@writ/contracts';
import { z } from 'zod';

/** `<root>.qry.approval.resolve` request: the approval, its task (to find it in the log) and the signed resolution. */
export const ResolveApprovalRequest = ResolveApproval;
export type ResolveApprovalRequest = z.infer<typeof ResolveApprovalRequest>;

/** The success reply; failures reply `{ code, message }` (header Writ-Error-Code). */
export const ResolveApprovalReply = z.strictObject({
  approval_id: Id,
  task_id: Id,
  status: z.enum(['granted', 'denied', 'expired', 'invalidated']),
  resolved_by: Id,
  event_id: Id,
});
export type ResolveApprovalReply = z.infer<typeof ResolveApprovalReply>;
