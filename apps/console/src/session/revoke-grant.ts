import { signGrantRevocation } from '@writ/verification';
import { consoleError } from '../api/api-error.js';
import type { GrantRow, RevokeReply } from '../api/rows.js';
import type { WritApi } from '../api/writ-api.js';
import type { Session } from './session.js';

/**
 * `writ grant revoke` in the browser: the director's `GrantRevocation`
 * `{ grant_id, task_id, reason, revoked_by, revoked_at }` signed here with the
 * session's key (WebCrypto Ed25519, the bytes the CLI's jose produces),
 * POSTed as `{ task_id, revocation_jws }` to `/v1/grants/<id>/revoke`. The
 * approval service decides (signature, director, not the action's proposer,
 * fresh); its refusal code is the error shown. `already_revoked` is an answer,
 * not an error: the standing revocation.
 */
export async function revokeGrant(api: WritApi, session: Session, grant: Pick<GrantRow, 'grant_id' | 'task_id'>, reason: string): Promise<RevokeReply> {
  const trimmed = reason.trim();
  const revocationJws = await signGrantRevocation(
    { grant_id: grant.grant_id, task_id: grant.task_id, reason: trimmed === '' ? `revoked by ${session.principalId}` : trimmed },
    { principalId: session.principalId, key: session.key, now: new Date() },
  );
  const reply = await api.revokeGrant(grant.grant_id, { task_id: grant.task_id, revocation_jws: revocationJws });
  if (reply.status !== 'revoked' && reply.status !== 'already_revoked') {
    throw consoleError('CONSOLE_REVOCATION_UNEXPECTED', `the API answered ${String(reply.status)} to the revocation of grant ${grant.grant_id}`);
  }
  return reply;
}
