import { Kvm, type KV } from '@nats-io/kv';
import { hasErrorCode, type ApplyPolicyProfileReply, type EvaluatePolicyDryRunReply, type EventEnvelope, type PolicyProfileRecord } from '@writ/contracts';
import { canonicalJson, generateEd25519Key, signJws } from '@writ/crypto';
import { BUILTIN_POLICY_DOCUMENTS } from '@writ/kernel';
import { uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinVersion, recordOf } from '../test/profiles.js';
import { commandRequest, taskIds } from '../test/task-fixtures.js';
import { createRig, evaluateUnder as evaluateUnderIn, disposeRig, registerPrincipal, signApplication, signedRecord, startApp, type Rig, type TestPrincipal } from '../test/rig.js';
import { validateDocument } from './application/profile-documents.js';
import type { PolicyApp } from './bootstrap.js';

/**
 * Policy profiles as data: the service on its own subject root, streams and
 * bucket on the real NATS. The test registers principals in the log, signs
 * applications as `writ policy apply` does, sends them over the bus, and
 * reads what the log and the bucket hold.
 */

let rig: Rig;
let policy: PolicyApp;
let kv: KV;
let director: TestPrincipal;

const enc = new TextEncoder();
/** A fresh profile id (a lowercase Name that is also one subject token). */
const profileId = (name: string) => uniqueName(name).toLowerCase();

/** A profile document: commands allowed, destructive ones as `destructive`. */
function document(id: string, destructive: 'require_approval' | 'deny' = 'require_approval', description = 'Commands in the workspace.') {
  return { id, description, action_classes: { read_local: { outcome: 'allow' }, execute_command: { outcome: 'allow' } }, destructive_commands: destructive };
}

async function apply(jws: string): Promise<ApplyPolicyProfileReply> {
  return rig.bus.request<ApplyPolicyProfileReply>(rig.config.subjects.applyProfile, { application_jws: jws });
}

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a refusal');
}

async function profileEvents(id: string): Promise<EventEnvelope[]> {
  return (await rig.store.readEntity('policy', id)).map((stored) => stored.event);
}

async function bucketRecord(id: string): Promise<PolicyProfileRecord | null> {
  const entry = await kv.get(id);
  return entry === null || entry.operation !== 'PUT' ? null : entry.json<PolicyProfileRecord>();
}

/**
 * Waits until every running instance has loaded `version` of `id` from the
 * bucket: each reloads on its own, and any of them may take the next command.
 */
async function loaded(id: string, version: string): Promise<void> {
  await waitFor(async () => (rig.apps.every((app) => app.profiles.get(id)?.record.version === version) ? true : undefined), { what: `${id}@${version} loaded everywhere` });
}

const evaluateUnder = (profile: string, argv: string[]) => evaluateUnderIn(rig, profile, argv);

beforeAll(async () => {
  rig = await createRig('profiles');
  policy = await startApp(rig);
  kv = await new Kvm(rig.nc).open(rig.config.env.WRIT_POLICY_BUCKET);
  director = await registerPrincipal(rig, 'user', ['director']);
});

afterAll(async () => {
  await disposeRig(rig);
});

describe('seeding the built-ins', () => {
  it('given a fresh log and bucket, when the service starts, then each built-in is recorded once in the log and stored under its id with its content version', async () => {
    for (const id of Object.keys(BUILTIN_POLICY_DOCUMENTS) as (keyof typeof BUILTIN_POLICY_DOCUMENTS)[]) {
      const version = builtinVersion(id);
      const events = await profileEvents(id);
      expect(events.map((e) => e.event_type)).toEqual(['policy.profile_applied']);
      expect(events[0]!.payload).toMatchObject({ profile_id: id, version, applied_by: 'writ-policy', previous_version: null });
      expect(await bucketRecord(id)).toMatchObject({ profile_id: id, version, applied_by: 'writ-policy' });
      expect(policy.profiles.get(id)?.record.version).toBe(version);
    }
    const ready = await fetch(`${policy.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ checks: { policy_profiles: Object.keys(BUILTIN_POLICY_DOCUMENTS).length } });
  });

  it('given the built-ins already recorded, when a second instance starts, then it records nothing again', async () => {
    await startApp(rig);
    for (const id of Object.keys(BUILTIN_POLICY_DOCUMENTS)) expect(await profileEvents(id)).toHaveLength(1);
  });

  it('evaluates with the stored content version: policy_version and policy_profile_ref carry it', async () => {
    const version = builtinVersion('local_edit_allowed');
    const result = await evaluateUnder('local_edit_allowed', ['sh', '-c', 'echo hello > out.txt']);
    expect(result).toMatchObject({ outcome: 'allow', policy_version: version, policy_profile_ref: `local_edit_allowed@${version}` });
  });
});

describe('writ.qry.policy.apply-profile', () => {
  it('given a director, when a valid profile is applied, then the log records it, the bucket holds it, and the next evaluation uses it without a restart', async () => {
    // given a new profile that sends rm -rf to approval
    const id = profileId('team');
    const first = validateDocument(document(id)).version;
    const applied = await apply(await signApplication(director, document(id)));
    expect(applied).toEqual({ status: 'applied', profile_id: id, version: first, previous_version: null });
    await loaded(id, first);
    expect((await evaluateUnder(id, ['rm', '-rf', 'build'])).outcome).toBe('require_approval');

    // when a stricter version is applied
    const stricter = document(id, 'deny');
    const second = validateDocument(stricter).version;
    const reply = await apply(await signApplication(director, stricter));

    // then the event comes first in the log, the bucket holds the record, and evaluation uses the new version at once
    expect(reply).toEqual({ status: 'applied', profile_id: id, version: second, previous_version: first });
    const events = await profileEvents(id);
    expect(events.map((e) => (e.payload as PolicyProfileRecord).version)).toEqual([first, second]);
    expect(events[1]).toMatchObject({ event_type: 'policy.profile_applied', entity_type: 'policy', entity_id: id, actor_id: 'writ-policy' });
    expect(events[1]!.payload).toMatchObject({ applied_by: director.id, previous_version: first });
    expect(await bucketRecord(id)).toEqual(events[1]!.payload);
    await loaded(id, second);
    const result = await evaluateUnder(id, ['rm', '-rf', 'build']);
    expect(result).toMatchObject({ outcome: 'deny', matched_rules: ['destructive_command'], policy_version: second, policy_profile_ref: `${id}@${second}` });
  });

  it('given the content already current, when it is applied again, then the reply is unchanged and nothing is appended', async () => {
    const id = profileId('same');
    const first = await apply(await signApplication(director, document(id)));
    // the same content in another key order and with a default spelled out is the same version
    const again = await apply(await signApplication(director, { files_owned: 'enforce', ...document(id) }));
    expect(again).toEqual({ status: 'unchanged', profile_id: id, version: first.version, previous_version: null });
    expect(await profileEvents(id)).toHaveLength(1);
  });

  it('given an invalid document, then it is refused with POLICY_PROFILE_INVALID and nothing is stored', async () => {
    const id = profileId('bad');
    const invalid = { id, description: '', action_classes: { teleport: { outcome: 'allow' } }, destructive_commands: 'sometimes', version: '7' };
    const error = await refusal(apply(await signApplication(director, invalid)));
    expect(hasErrorCode(error, 'POLICY_PROFILE_INVALID')).toBe(true);
    expect(await profileEvents(id)).toEqual([]);
    expect(await bucketRecord(id)).toBeNull();
  });

  it('given an id with a dot (a valid name but not a subject token), then it is refused with POLICY_PROFILE_INVALID', async () => {
    const error = await refusal(apply(await signApplication(director, document('team.dotted'))));
    expect(hasErrorCode(error, 'POLICY_PROFILE_INVALID')).toBe(true);
  });

  describe('who may apply', () => {
    it('refuses an observer with POLICY_APPLY_FORBIDDEN', async () => {
      const observer = await registerPrincipal(rig, 'user', ['observer']);
      const id = profileId('obs');
      expect(hasErrorCode(await refusal(apply(await signApplication(observer, document(id)))), 'POLICY_APPLY_FORBIDDEN')).toBe(true);
      expect(await profileEvents(id)).toEqual([]);
    });

    it('refuses an agent with POLICY_APPLY_FORBIDDEN', async () => {
      const agent = await registerPrincipal(rig, 'agent', ['executor']);
      expect(hasErrorCode(await refusal(apply(await signApplication(agent, document(profileId('agt'))))), 'POLICY_APPLY_FORBIDDEN')).toBe(true);
    });

    it('refuses an unknown principal with POLICY_APPLY_FORBIDDEN', async () => {
      const stranger = { id: 'nobody-registered-this', key: await generateEd25519Key({ kid: 'stranger-k1' }) };
      expect(hasErrorCode(await refusal(apply(await signApplication(stranger, document(profileId('unk'))))), 'POLICY_APPLY_FORBIDDEN')).toBe(true);
    });

    it("refuses an application naming the director but signed with another key (forged) with POLICY_APPLY_SIGNATURE_INVALID", async () => {
      const forger = { id: director.id, key: await generateEd25519Key({ kid: director.key.kid }) };
      const id = profileId('forged');
      expect(hasErrorCode(await refusal(apply(await signApplication(forger, document(id)))), 'POLICY_APPLY_SIGNATURE_INVALID')).toBe(true);
      expect(await profileEvents(id)).toEqual([]);
    });

    it('refuses a director-signed JWS of another type with POLICY_APPLY_SIGNATURE_INVALID', async () => {
      const jws = await signApplication(director, document(profileId('typ')), { typ: 'writ-grant+jwt' });
      expect(hasErrorCode(await refusal(apply(jws)), 'POLICY_APPLY_SIGNATURE_INVALID')).toBe(true);
    });

    it('refuses something that is not a compact JWS with POLICY_APPLY_SIGNATURE_INVALID', async () => {
      expect(hasErrorCode(await refusal(apply('not.a-jws')), 'POLICY_APPLY_SIGNATURE_INVALID')).toBe(true);
    });

    it('refuses a payload that is not a PolicyProfileApplication with CONTRACT_INVALID', async () => {
      const jws = await signJws(JSON.stringify({ applied_by: director.id, what: 'else' }), director.key);
      expect(hasErrorCode(await refusal(apply(jws)), 'CONTRACT_INVALID')).toBe(true);
    });
  });

  describe('when it was signed', () => {
    it('refuses an applied_at outside ±300 s with POLICY_APPLY_STALE', async () => {
      const id = profileId('old');
      const old = await signApplication(director, document(id), { appliedAt: new Date(Date.now() - 10 * 60_000) });
      const future = await signApplication(director, document(id), { appliedAt: new Date(Date.now() + 10 * 60_000) });
      expect(hasErrorCode(await refusal(apply(old)), 'POLICY_APPLY_STALE')).toBe(true);
      expect(hasErrorCode(await refusal(apply(future)), 'POLICY_APPLY_STALE')).toBe(true);
      expect(await profileEvents(id)).toEqual([]);
    });

    it('refuses a captured older application replayed over a newer version with POLICY_APPLY_STALE', async () => {
      const id = profileId('replay');
      const t0 = Date.now() - 60_000;
      const captured = await signApplication(director, document(id), { appliedAt: new Date(t0) });
      await apply(captured);
      await apply(await signApplication(director, document(id, 'deny'), { appliedAt: new Date(t0 + 30_000) }));
      expect(hasErrorCode(await refusal(apply(captured)), 'POLICY_APPLY_STALE')).toBe(true);
      expect(await profileEvents(id)).toHaveLength(2);
      expect((await bucketRecord(id))?.version).toBe(validateDocument(document(id, 'deny')).version);
    });
  });
});

describe('the bucket as a view of the log', () => {
  it('given a damaged record written around the log, then it is ignored and evaluation keeps the previous version', async () => {
    const id = profileId('damaged');
    const good = (await apply(await signApplication(director, document(id, 'deny')))).version;
    await loaded(id, good);
    // when the bucket is written around the log: not JSON, then a record whose document no longer matches its version
    await kv.put(id, enc.encode('{not json'));
    const tampered = { ...recordOf(document(id, 'deny')), document: document(id, 'require_approval') };
    await kv.put(id, enc.encode(canonicalJson(tampered)));
    // a valid record of another profile afterwards (a director's, as the service would store it): once it is loaded, the watch has seen both damaged ones
    const sentinel = profileId('sentinel');
    const sentinelRecord = await signedRecord(director, document(sentinel));
    await kv.put(sentinel, enc.encode(canonicalJson(sentinelRecord)));
    await loaded(sentinel, sentinelRecord.version);
    // then the previous version stays in use
    expect(policy.profiles.get(id)?.record.version).toBe(good);
    expect(await evaluateUnder(id, ['rm', '-rf', 'build'])).toMatchObject({ outcome: 'deny', policy_version: good });
  });

  it('given the bucket behind the log, when an instance starts, then it puts the log\'s latest record back', async () => {
    const id = profileId('behind');
    const v1 = recordOf(document(id));
    await apply(await signApplication(director, document(id)));
    const v2 = (await apply(await signApplication(director, document(id, 'deny'), { appliedAt: new Date(Date.now() + 1_000) }))).version;
    // a put of the old record, as if the latest put had been lost
    await kv.put(id, enc.encode(canonicalJson({ ...v1, applied_by: director.id })));
    const restarted = await startApp(rig);
    expect((await bucketRecord(id))?.version).toBe(v2);
    expect(restarted.profiles.get(id)?.record.version).toBe(v2);
  });
});

describe('writ.qry.policy.evaluate (dry run)', () => {
  const dryRun = (payload: Record<string, unknown>) => rig.bus.request<EvaluatePolicyDryRunReply>(rig.config.subjects.evaluateDryRun, payload);
  const ids = taskIds('dry');

  it('evaluates against a stored profile and appends nothing', async () => {
    const reply = await dryRun({ action_request: commandRequest(ids, ['rm', '-rf', 'build']), profile_id: 'local_edit_allowed', files_owned: ['**'] });
    expect(reply).toMatchObject({ outcome: 'require_approval', matched_rules: ['destructive_command'], profile_id: 'local_edit_allowed', policy_version: builtinVersion('local_edit_allowed') });
    expect(reply.reasons.length).toBeGreaterThan(0);
    expect(await rig.store.read(ids.task_id)).toEqual([]);
  });

  it('evaluates against an inline candidate document under its content version', async () => {
    const id = profileId('candidate');
    const reply = await dryRun({ action_request: commandRequest(ids, ['rm', '-rf', 'build']), document: document(id, 'deny'), files_owned: ['**'] });
    expect(reply).toMatchObject({ outcome: 'deny', profile_id: id, policy_version: validateDocument(document(id, 'deny')).version });
    expect(await profileEvents(id)).toEqual([]);
  });

  it('refuses an unknown profile (POLICY_PROFILE_UNKNOWN), an invalid candidate (POLICY_PROFILE_INVALID) and both or neither (CONTRACT_INVALID)', async () => {
    const action_request = commandRequest(ids, ['true']);
    expect(hasErrorCode(await refusal(dryRun({ action_request, profile_id: 'no_such_profile', files_owned: [] })), 'POLICY_PROFILE_UNKNOWN')).toBe(true);
    expect(hasErrorCode(await refusal(dryRun({ action_request, document: { id: 'x' }, files_owned: [] })), 'POLICY_PROFILE_INVALID')).toBe(true);
    expect(hasErrorCode(await refusal(dryRun({ action_request, files_owned: [] })), 'CONTRACT_INVALID')).toBe(true);
    expect(hasErrorCode(await refusal(dryRun({ action_request, profile_id: 'local_edit_allowed', document: document('y'), files_owned: [] })), 'CONTRACT_INVALID')).toBe(true);
  });

  it('refuses a body that is not JSON with BUS_PAYLOAD_INVALID, in the header and the body, as the bus does', async () => {
    const reply = await rig.nc.request(rig.config.subjects.evaluateDryRun, '{not json', { timeout: 5_000 });
    expect(reply.headers?.get('Writ-Error-Code')).toBe('BUS_PAYLOAD_INVALID');
    expect(reply.json()).toMatchObject({ code: 'BUS_PAYLOAD_INVALID' });
  });
});
