import { Kvm, type KV } from '@nats-io/kv';
import type { ApplyPolicyProfileReply, PolicyProfileRecord } from '@writ/contracts';
import { canonicalJson } from '@writ/crypto';
import { BUILTIN_POLICY_DOCUMENTS } from '@writ/kernel';
import { serviceDraft } from '@writ/runtime';
import { uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinVersion, recordOf } from '../test/profiles.js';
import { createRig, evaluateUnder as evaluateUnderIn, disposeRig, registerPrincipal, signApplication, signedRecord, startApp, type Rig, type TestPrincipal } from '../test/rig.js';
import { validateDocument } from './application/profile-documents.js';
import type { PolicyApp } from './bootstrap.js';

/**
 * A profile is not trusted for merely being in the bucket or the log (DESIGN
 * invariant 9), against the real NATS: a record written into `WRIT_POLICY`
 * (or the profile's stream) around `writ policy apply` is refused with its
 * code, reported in the log and readiness, and the last good version (or the
 * built-in shipped in code) stays in force; evaluation never fails open.
 */

let rig: Rig;
let policy: PolicyApp;
let kv: KV;
let director: TestPrincipal;
let observer: TestPrincipal;

const enc = new TextEncoder();
const profileId = (name: string) => uniqueName(name).toLowerCase();

/** Commands allowed; destructive ones denied (`strict`) or sent to approval. */
function document(id: string, destructive: 'require_approval' | 'deny' = 'deny') {
  return { id, description: 'Commands in the workspace.', action_classes: { read_local: { outcome: 'allow' }, execute_command: { outcome: 'allow' } }, destructive_commands: destructive };
}

/** What a squatter on the bucket writes: destructive commands go to approval instead of being denied, and deletes and network writes are allowed outright. */
function permissive(id: string) {
  const allow = { outcome: 'allow' };
  return { ...document(id, 'require_approval'), action_classes: { read_local: allow, write_local: allow, delete_local: allow, execute_command: allow, network_write: allow } };
}

async function apply(jws: string): Promise<ApplyPolicyProfileReply> {
  return rig.bus.request<ApplyPolicyProfileReply>(rig.config.subjects.applyProfile, { application_jws: jws });
}

/** Writes a record straight into the bucket, as anyone with write access to KV_<bucket> could. */
async function putAround(record: unknown): Promise<void> {
  await kv.put((record as PolicyProfileRecord).profile_id, enc.encode(canonicalJson(record)));
}

/** Waits until the running instance reports the profile's latest bucket entry refused; returns its code. */
async function refusedAs(app: PolicyApp, id: string): Promise<string> {
  const line = await waitFor(() => app.profiles.refusals().find((entry) => entry.startsWith(`${id}: `)), { what: `a refusal of ${id}` });
  return line.slice(id.length + 2);
}

async function readiness(app: PolicyApp): Promise<{ status: number; body: { checks: Record<string, unknown> } }> {
  const response = await fetch(`${app.url}/readyz`);
  return { status: response.status, body: (await response.json()) as { checks: Record<string, unknown> } };
}

const evaluateUnder = (profile: string, argv: string[]) => evaluateUnderIn(rig, profile, argv);

/** A director's profile in force everywhere: rm -rf denied. */
async function strictProfile(name: string): Promise<{ id: string; version: string }> {
  const id = profileId(name);
  const { version } = await apply(await signApplication(director, document(id)));
  await waitFor(() => (rig.apps.every((app) => app.profiles.get(id)?.record.version === version) ? true : undefined), { what: `${id} loaded` });
  return { id, version };
}

beforeAll(async () => {
  rig = await createRig('trust');
  policy = await startApp(rig);
  kv = await new Kvm(rig.nc).open(rig.config.env.WRIT_POLICY_BUCKET);
  director = await registerPrincipal(rig, 'user', ['director']);
  observer = await registerPrincipal(rig, 'user', ['observer']);
});

afterAll(async () => {
  await disposeRig(rig);
});

describe('a profile record written into the bucket around writ policy apply', () => {
  it('given a strict profile in force, when a permissive record is written straight into the bucket, then it is refused POLICY_RECORD_UNSIGNED, reported in readiness, and evaluation keeps denying with the strict version', async () => {
    // given
    const strict = await strictProfile('squat');
    // when
    await putAround(recordOf(permissive(strict.id), { applied_by: director.id, applied_at: new Date(Date.now() + 60_000).toISOString(), previous_version: strict.version }));
    // then
    expect(await refusedAs(policy, strict.id)).toBe('POLICY_RECORD_UNSIGNED');
    expect(policy.profiles.get(strict.id)?.record.version).toBe(strict.version);
    expect(await evaluateUnder(strict.id, ['rm', '-rf', 'build'])).toMatchObject({ outcome: 'deny', matched_rules: ['destructive_command'], policy_version: strict.version });
    const ready = await readiness(policy);
    expect(ready.status).toBe(200);
    expect(ready.body.checks['policy_records_refused']).toContain(`${strict.id}: POLICY_RECORD_UNSIGNED`);
  });

  it("given a director's signed application kept with a permissive document swapped in, then it is refused POLICY_RECORD_MISMATCH (the content hash is not what was signed)", async () => {
    const strict = await strictProfile('swap');
    const signed = await signedRecord(director, document(strict.id, 'require_approval'), { appliedAt: new Date(Date.now() + 1_000) });
    const { document: swapped, version } = validateDocument(permissive(strict.id));
    await putAround({ ...signed, document: swapped, version });
    expect(await refusedAs(policy, strict.id)).toBe('POLICY_RECORD_MISMATCH');
    expect(policy.profiles.get(strict.id)?.record.version).toBe(strict.version);
  });

  it('given a record signed by an observer (a role that may not apply policy), then it is refused POLICY_RECORD_SIGNER_NOT_ALLOWED', async () => {
    const strict = await strictProfile('observer');
    await putAround(await signedRecord(observer, permissive(strict.id), { appliedAt: new Date(Date.now() + 1_000) }));
    expect(await refusedAs(policy, strict.id)).toBe('POLICY_RECORD_SIGNER_NOT_ALLOWED');
    expect(policy.profiles.get(strict.id)?.record.version).toBe(strict.version);
  });

  it("given an earlier version the director really signed, written back over a later one (a replay), then it is refused POLICY_RECORD_STALE", async () => {
    const id = profileId('replay');
    const earlier = await signedRecord(director, permissive(id), { appliedAt: new Date(Date.now() - 30_000) });
    await apply(earlier.application_jws!);
    const strict = await apply(await signApplication(director, document(id)));
    await waitFor(() => (policy.profiles.get(id)?.record.version === strict.version ? true : undefined), { what: 'the strict version loaded' });
    await putAround(earlier);
    expect(await refusedAs(policy, id)).toBe('POLICY_RECORD_STALE');
    expect(policy.profiles.get(id)?.record.version).toBe(strict.version);
  });

  it('given a permissive record of a built-in written into the bucket, then the built-in shipped in code stays in force', async () => {
    const builtin = BUILTIN_POLICY_DOCUMENTS.readonly_analysis;
    await putAround(recordOf({ ...builtin, ...permissive(builtin.id), id: builtin.id }));
    expect(await refusedAs(policy, builtin.id)).toBe('POLICY_RECORD_UNSIGNED');
    expect(policy.profiles.get(builtin.id)?.record.version).toBe(builtinVersion('readonly_analysis'));
  });

  it('given a good record after a refused one, then it is loaded and the refusal is no longer reported', async () => {
    const strict = await strictProfile('recover');
    await putAround(recordOf(permissive(strict.id), { applied_by: director.id }));
    await refusedAs(policy, strict.id);
    const next = await apply(await signApplication(director, document(strict.id, 'require_approval'), { appliedAt: new Date(Date.now() + 2_000) }));
    await waitFor(() => (policy.profiles.get(strict.id)?.record.version === next.version ? true : undefined), { what: 'the next version loaded' });
    expect(policy.profiles.refusals().some((entry) => entry.startsWith(`${strict.id}: `))).toBe(false);
  });
});

describe('a profile event appended to the log around the policy service', () => {
  it("given a permissive, unsigned policy.profile_applied of a built-in as the log's latest, when an instance starts, then it is refused and the built-in shipped in code is in force; a director's apply is neither blocked by it nor told 'unchanged'", async () => {
    // given: a forged latest record, dated far ahead (it would make every later application look stale)
    const id = 'network_read_allowed';
    const forged = recordOf({ ...permissive(id), id }, { applied_by: director.id, applied_at: '2099-01-01T00:00:00.000Z', previous_version: builtinVersion(id) });
    const head = await rig.store.headOfEntity('policy', id);
    await rig.store.appendToEntity(
      'policy',
      id,
      [serviceDraft({ key: uniqueName('forged'), eventType: 'policy.profile_applied', entityType: 'policy', entityId: id, occurredAt: new Date().toISOString(), actorId: 'writ-policy', payload: forged, causationId: null, correlationId: id })],
      head.taskSeq,
    );
    // when
    const restarted = await startApp(rig);
    // then
    expect(await refusedAs(restarted, id)).toBe('POLICY_RECORD_UNSIGNED');
    expect(restarted.profiles.get(id)?.record.version).toBe(builtinVersion(id));
    expect((await readiness(restarted)).body.checks['policy_records_refused']).toContain(`${id}: POLICY_RECORD_UNSIGNED`);

    // and a director applies the permissive content for real: not refused as stale, not "unchanged"
    const reply = await apply(await signApplication(director, { ...permissive(id), id }));
    expect(reply).toMatchObject({ status: 'applied', version: forged.version, previous_version: forged.version });
    await waitFor(() => (restarted.profiles.get(id)?.record.version === forged.version ? true : undefined), { what: 'the signed version loaded' });
  });

  it('given a director apply, then the stored record carries the signed application, which verifies as the record', async () => {
    const id = profileId('carried');
    const jws = await signApplication(director, document(id));
    await apply(jws);
    const entry = await kv.get(id);
    expect(entry?.json<PolicyProfileRecord>().application_jws).toBe(jws);
    // a record the service trusts is the current version: the same application again changes nothing
    expect(await apply(jws)).toMatchObject({ status: 'unchanged', profile_id: id });
  });
});
