import type { ClaimReply, SubmitClaim } from '@writ/contracts';
import { generateEd25519Key, type Ed25519SigningKey } from '@writ/crypto';
import { SIGNED_REQUESTS, signRequest } from '@writ/runtime';
import type { Rig } from './rig.js';

/** A principal registered in the rig's log, as `writ principal add` would, with its signing key. */
export interface TestPrincipal {
  readonly id: string;
  readonly key: Ed25519SigningKey;
}

export async function registerPrincipal(rig: Rig, id: string, type: 'agent' | 'user' = 'agent', roles: readonly string[] = ['executor']): Promise<TestPrincipal> {
  const key = await generateEd25519Key({ kid: `${id}-k1` });
  const at = new Date().toISOString();
  await rig.store.appendToEntity(
    'principal',
    id,
    [
      {
        event_id: `${id}-registered`,
        schema_version: 1,
        event_type: 'principal.registered',
        entity_type: 'principal',
        entity_id: id,
        occurred_at: at,
        actor_type: 'user',
        actor_id: 'operator',
        payload: { principal_id: id, principal_type: type, display_name: id, roles: [...roles], keys: [key.publicJwk], registered_by: 'operator', at },
        causation_id: null,
        correlation_id: id,
      },
    ],
    0,
  );
  return { id, key };
}

export type ClaimKindName = 'done' | 'blocked' | 'correction';

/** Signs a claim body for `taskId` as `signer`, at `now` (default the real clock). */
export async function signClaim(kind: ClaimKindName, taskId: string, body: unknown, signer: TestPrincipal, now = new Date()): Promise<string> {
  const by = { principalId: signer.id, key: signer.key, now };
  switch (kind) {
    case 'done':
      return (await signRequest(SIGNED_REQUESTS.doneClaim, { task_id: taskId, claim: body as never }, by)).jws;
    case 'blocked':
      return (await signRequest(SIGNED_REQUESTS.blockedClaim, { task_id: taskId, claim: body as never }, by)).jws;
    case 'correction':
      return (await signRequest(SIGNED_REQUESTS.correction, { task_id: taskId, correction: body as never }, by)).jws;
  }
}

/** The orchestrator's answer to a claim request: the reply, or the refusal `{ code, message }` (header Writ-Error-Code). */
export async function requestClaim(rig: Rig, kind: ClaimKindName, request: SubmitClaim): Promise<{ reply?: ClaimReply; code?: string; message?: string }> {
  const subject = kind === 'done' ? rig.config.subjects.claimDone : kind === 'blocked' ? rig.config.subjects.claimBlocked : rig.config.subjects.claimCorrection;
  const msg = await rig.nc.request(subject, JSON.stringify(request), { timeout: 15_000 });
  const code = msg.headers?.get('Writ-Error-Code');
  const body = msg.json<Record<string, unknown>>();
  if (code !== undefined && code !== '') return { code, message: String(body['message']) };
  return { reply: body as unknown as ClaimReply };
}
