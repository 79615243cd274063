import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { CapabilityGrantClaims, type EventEnvelope } from '@writ/contracts';
import type { Ed25519SigningKey } from '@writ/crypto';
import { grantDecider } from '@writ/kernel';
import { RotatingServiceKey } from '@writ/runtime';
import { uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantStateFor, readGrantHistory } from './application/grant-history.js';
import { ExecutorRig, enrollment, newIds, ofType, request, runAction, type Grant, type GrantSpec, type Ids } from '../test/executor-rig.js';

/**
 * The grant's life as the executor honours it: revocation, expiry and the
 * rotation of the issuer's signing key. The real executor runs in-process
 * against the real NATS and Docker on a test-unique root, streams and bucket
 * (deleted afterwards). The grant issuer's key is the real rotating keyring of
 * `@writ/runtime` in a temporary directory, as the approval service holds it;
 * its `principal.key_added` / `principal.key_revoked` and the task streams'
 * `grant.*` events are appended the way the approval service appends them.
 */

const rig = new ExecutorRig();
let issuerKey: RotatingServiceKey;

beforeAll(async () => {
  await rig.start('executor-grant-lifecycle', { cellsRoots: ['writ-executor-gl-'] });
  const keyDir = await rig.tempDir('writ-issuer-keys-');
  ({ key: issuerKey } = await RotatingServiceKey.start(rig.store, { principalId: rig.config.grant.issuer, displayName: 'approval (test)', keyDir, authorization: await enrollment(rig.config.grant.issuer) }));
}, 300_000);

afterAll(async () => {
  await issuerKey?.stop();
  await rig.close();
}, 60_000);

// ---- fixtures -------------------------------------------------------------------------------

async function waitForEvents(taskId: string, what: string, match: (event: EventEnvelope) => boolean, count = 1): Promise<EventEnvelope[]> {
  return waitFor(
    async () => {
      const found = (await rig.events(taskId)).filter(match);
      return found.length >= count ? found : undefined;
    },
    { what, timeoutMs: 60_000, intervalMs: 50 },
  );
}

/** A grant signed by the issuer's active key (or `signer`), as the approval service mints one. */
const mint = (spec: Omit<GrantSpec, 'signer'> & { signer?: Ed25519SigningKey }): Promise<Grant> => rig.mint({ ...spec, signer: spec.signer ?? issuerKey.active });

const claimsOf = (grant: Grant): CapabilityGrantClaims =>
  CapabilityGrantClaims.parse(JSON.parse(Buffer.from(grant.jws.split('.')[1] ?? '', 'base64url').toString('utf8')));

function draft(ids: Ids, eventType: string, entityType: 'grant' | 'approval', entityId: string, payload: Record<string, unknown>) {
  return {
    event_id: uniqueName('evt'),
    schema_version: 1,
    event_type: eventType,
    entity_type: entityType,
    entity_id: entityId,
    step_id: ids.step_id,
    attempt_id: ids.attempt_id,
    occurred_at: new Date().toISOString(),
    actor_type: 'service' as const,
    actor_id: rig.config.grant.issuer,
    payload,
    causation_id: null,
    correlation_id: ids.task_id,
    idempotency_key: `${entityId}:${eventType}`,
  };
}

/** Appends `grant.issued` (`{ claims, jws, at }`) to the task stream, after whatever is there. */
async function recordIssued(ids: Ids, grant: Grant, before: ReturnType<typeof draft>[] = []): Promise<void> {
  const head = (await rig.store.read(ids.task_id)).length;
  await rig.store.append(ids.task_id, [...before, draft(ids, 'grant.issued', 'grant', grant.grant_id, { claims: claimsOf(grant), jws: grant.jws, at: new Date().toISOString() })], head);
}

/** What the approval service does on a director's revocation: the kernel decides `revoke-grant` on the grant folded from the log, and `grant.revoked` is appended. */
async function revokeAsApprovalDoes(ids: Ids, grant: Grant): Promise<void> {
  const log = await rig.events(ids.task_id);
  const state = grantStateFor(readGrantHistory(log, grant.grant_id, 'revoke'), claimsOf(grant));
  const [event] = grantDecider.decide({ type: 'revoke-grant', data: { revoked_by: 'director-1', reason: 'the task was cancelled' }, metadata: { now: new Date().toISOString() } }, state);
  expect(event?.type).toBe('grant.revoked');
  await rig.store.append(ids.task_id, [draft(ids, 'grant.revoked', 'grant', grant.grant_id, { ...event?.data })], log.at(-1)?.task_seq ?? 0);
}

async function run(ids: Ids, grant: Grant, file: string): Promise<void> {
  const command = runAction(ids, grant, request(ids, { params: { argv: ['sh', '-c', `echo ran > ${file}`] }, target_resources: [file] }));
  await rig.publishRunAction(command);
}

// ---- tests ----------------------------------------------------------------------------------

describe('executor: revoked and expired grants', () => {
  it('given a grant used once, when it is revoked before its next use, then that use is refused GRANT_REVOKED and nothing runs', async () => {
    // given a two-use grant, issued and used once
    const ids = newIds('revoke');
    const grant = await mint({ ids, maxUses: 2 });
    await recordIssued(ids, grant);
    await run(ids, grant, 'first.txt');
    await waitForEvents(ids.task_id, 'the first execution', ofType('execution.completed'));
    expect(await readFile(rig.hostFile(ids.task_id, 'first.txt'), 'utf8')).toBe('ran\n');

    // when a director revokes it, and its second use arrives with the (unexpired) JWS
    await revokeAsApprovalDoes(ids, grant);
    await run(ids, grant, 'second.txt');

    // then the executor refuses the use and runs nothing
    const [refused] = await waitForEvents(ids.task_id, 'grant.refused', ofType('grant.refused'));
    expect(refused?.payload).toMatchObject({ code: 'GRANT_REVOKED' });
    expect((await rig.events(ids.task_id)).map((event) => event.event_type)).toEqual(['grant.issued', 'grant.use_claimed', 'execution.started', 'execution.completed', 'grant.revoked', 'grant.refused']);
    expect(existsSync(rig.hostFile(ids.task_id, 'second.txt'))).toBe(false);
  });

  it('given an approved attempt whose grant expired before it ran, then the use is refused GRANT_EXPIRED although approval.granted is in the log', async () => {
    // given approval.granted and a grant past its expiry (beyond the verifier's clock tolerance)
    const ids = newIds('expired');
    const approvalId = uniqueName('apr');
    const issuedAt = new Date(Date.now() - 10 * 60_000);
    const grant = await mint({ ids, issuedAt, expiresAt: new Date(issuedAt.getTime() + 5 * 60_000) });
    await recordIssued(ids, grant, [
      draft(ids, 'approval.requested', 'approval', approvalId, { approval_id: approvalId, requested_by: 'agent-test', at: issuedAt.toISOString() }),
      draft(ids, 'approval.granted', 'approval', approvalId, { resolved_by: 'director-1', witness_validated: true, at: issuedAt.toISOString() }),
    ]);

    // when it is presented
    await run(ids, grant, 'late.txt');

    // then it is refused as expired and nothing runs
    const [refused] = await waitForEvents(ids.task_id, 'grant.refused', ofType('grant.refused'));
    expect(refused?.payload).toMatchObject({ code: 'GRANT_EXPIRED' });
    expect((await rig.events(ids.task_id)).some(ofType('grant.use_claimed'))).toBe(false);
    expect(existsSync(rig.hostFile(ids.task_id, 'late.txt'))).toBe(false);
  });
});

describe('executor: rotation of the grant issuer key', () => {
  it('accepts a grant signed by the replaced key until it retires, and the new key at once; after retirement the replaced key is refused', async () => {
    // given two grants signed with the issuer's current key
    const oldKey = issuerKey.active;
    const [beforeIds, lateIds, newIds_] = [newIds('rot-before'), newIds('rot-late'), newIds('rot-new')];
    const before = await mint({ ids: beforeIds, signer: oldKey });
    const late = await mint({ ids: lateIds, signer: oldKey });
    await recordIssued(beforeIds, before);
    await recordIssued(lateIds, late);

    // when the key rotates (key_added first; the old key valid for another 5 minutes)
    const rotation = await issuerKey.rotate({ kid: `${rig.config.grant.issuer}-${rig.run}`, validForSeconds: 300 });
    expect(rotation).toMatchObject({ status: 'rotated', previous_kid: oldKey.kid });

    // then a grant minted before the rotation still runs
    await run(beforeIds, before, 'before.txt');
    const [completed] = await waitForEvents(beforeIds.task_id, 'execution.completed', ofType('execution.completed'));
    expect(completed?.payload).toMatchObject({ outcome: 'completed', exit_code: 0 });
    // and so does one signed by the new key
    const fresh = await mint({ ids: newIds_ });
    expect(issuerKey.active.kid).toBe(rotation.kid);
    await recordIssued(newIds_, fresh);
    await run(newIds_, fresh, 'new.txt');
    await waitForEvents(newIds_.task_id, 'execution.completed', ofType('execution.completed'));
    expect(await readFile(rig.hostFile(newIds_.task_id, 'new.txt'), 'utf8')).toBe('ran\n');

    // when the replaced key retires (principal.key_revoked, rotated)
    expect(await issuerKey.retireDue(new Date(Date.parse(rotation.retire_after) + 1_000))).toEqual([oldKey.kid]);

    // then a grant it signed is refused from the next use on, and nothing runs
    await run(lateIds, late, 'late.txt');
    const [refused] = await waitForEvents(lateIds.task_id, 'grant.refused', ofType('grant.refused'));
    expect(refused?.payload).toMatchObject({ code: 'GRANT_SIGNATURE_INVALID' });
    expect(existsSync(rig.hostFile(lateIds.task_id, 'late.txt'))).toBe(false);
  });
});
