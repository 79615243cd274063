import type { ParticipantEvent, SpawnManifest } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { at, deciderSpec } from '../../test/decider-spec.js';
import {
  HASH,
  INSTALL,
  KEYS,
  P,
  PARENT,
  PRESENTED,
  crashReport,
  heartbeat,
  lastWill,
  manifest,
  manifestBody,
  signed,
  testCrypto,
} from '../../test/lineage-flow.js';
import { fold } from '../shared/decider.js';
import { participantDecider, type ParticipantRecord, type ParticipantState } from './participant.decider.js';
import { seedVerdict } from './seed-verdict.js';

const decider = participantDecider(testCrypto);
const spec = deciderSpec(decider);

const M = manifest();
const M_HASH = testCrypto.payloadHash(M);

/** The events a command produces against the state folded from `history`, and that state afterwards. */
function run(history: readonly ParticipantEvent[], command: Parameters<typeof decider.decide>[0]): { events: ParticipantEvent[]; after: ParticipantState; log: ParticipantEvent[] } {
  const state = fold(decider, history);
  const events = decider.decide(command, state);
  const after = fold(decider, events, state);
  expect(after.anomalies).toEqual(state.anomalies);
  return { events, after, log: [...history, ...events] };
}

/** Folds the command sequence, returning the log. */
function play(...commands: Parameters<typeof decider.decide>[0][]): ParticipantEvent[] {
  let log: ParticipantEvent[] = [];
  for (const command of commands) log = run(log, command).log;
  return log;
}

const types = (events: readonly ParticipantEvent[]) => events.map((e) => e.type);
const codeOf = (events: readonly ParticipantEvent[]) => (events.at(-1)?.data as { code?: string }).code;

const SPAWNED = play(P.spawn(1, M));

describe('participant decider: verify-spawn', () => {
  it('given a manifest signed by the parent, when verified, then participant.spawn_verified binds the child key and the TTL', () => {
    const [event] = spec.given([]).when(P.spawn(1, M)).thenEvents();
    expect(event).toEqual({
      type: 'participant.spawn_verified',
      data: {
        seed_id: 'seed-1',
        kind: 'worker',
        manifest: M,
        manifest_hash: M_HASH,
        parent: { id: 'director-1', kind: 'principal', key_fingerprint: KEYS.parent.fingerprint },
        child_key: { fingerprint: KEYS.child.fingerprint, x: KEYS.child.x },
        forensic_of: null,
        reconstituted_from: null,
        expires_at: at(3_600),
        at: at(1),
      },
    });
    const state = fold(decider, [event]) as ParticipantRecord;
    expect(state).toMatchObject({ status: 'active', manifest_hash: M_HASH, expires_at: at(3_600) });
  });

  type Case = { note: string; command: () => Parameters<typeof decider.decide>[0]; code: string };
  const cases: Case[] = [
    { note: 'a field changed without re-signing', command: () => P.spawn(1, { ...M, role: 'docs.writer' }), code: 'SPAWN_PAYLOAD_HASH_MISMATCH' },
    {
      note: 'the hash recomputed but the signature kept',
      command: () => {
        const body = { ...M, role: 'docs.writer' };
        return P.spawn(1, { ...body, signature: { ...M.signature, payload_hash: testCrypto.payloadHash(body) } });
      },
      code: 'SPAWN_SIGNATURE_INVALID',
    },
    { note: 'signed by a stranger who names its own key as the parent key', command: () => P.spawn(1, manifest({ lineage: { ...M.lineage, parent_key_fingerprint: KEYS.stranger.fingerprint } }, KEYS.stranger)), code: 'SPAWN_SIGNER_NOT_PARENT' },
    { note: 'signed by a stranger under the declared parent key', command: () => P.spawn(1, manifest({}, KEYS.stranger)), code: 'SPAWN_SIGNER_NOT_PARENT' },
    { note: 'a parent that names nobody', command: () => P.spawn(1, M, { parent: null }), code: 'SPAWN_PARENT_UNKNOWN' },
    { note: 'another installation', command: () => P.spawn(1, manifest({ lineage: { ...M.lineage, install_id: 'install-2' } })), code: 'SPAWN_INSTALL_MISMATCH' },
    { note: 'another genesis', command: () => P.spawn(1, manifest({ lineage: { ...M.lineage, genesis_fingerprint: 'genesis:2' } })), code: 'SPAWN_GENESIS_MISMATCH' },
    { note: 'expires_at before created_at', command: () => P.spawn(1, manifest({ ttl: { created_at: at(100), expires_at: at(50) } })), code: 'SPAWN_TTL_INVALID' },
    { note: 'an expired manifest', command: () => P.spawn(4_000, M), code: 'SPAWN_TTL_INVALID' },
    { note: 'created in the future beyond the skew', command: () => P.spawn(1, manifest({ ttl: { created_at: at(1_000), expires_at: at(3_600) } })), code: 'SPAWN_TTL_INVALID' },
    { note: 'a TTL above the ceiling', command: () => P.spawn(1, manifest({ ttl: { created_at: at(0), expires_at: at(7_201) } })), code: 'SPAWN_TTL_INVALID' },
    { note: 'a write glob beyond the ceiling', command: () => P.spawn(1, manifest({ capabilities: { ...M.capabilities, fs: ['write:src/**'] } })), code: 'SPAWN_CAPABILITY_EXCEEDS_CEILING' },
    { note: 'a glob reaching outside the cell home', command: () => P.spawn(1, manifest({ capabilities: { ...M.capabilities, fs: ['read:../etc/**'] } })), code: 'SPAWN_CAPABILITY_INVALID' },
    { note: 'a host beyond the ceiling', command: () => P.spawn(1, manifest({ capabilities: { ...M.capabilities, net: ['evil.example.net'] } })), code: 'SPAWN_CAPABILITY_EXCEEDS_CEILING' },
    { note: 'any host while the ceiling lists some', command: () => P.spawn(1, manifest({ capabilities: { ...M.capabilities, net: ['*'] } })), code: 'SPAWN_CAPABILITY_EXCEEDS_CEILING' },
    { note: 'a program beyond the ceiling', command: () => P.spawn(1, manifest({ capabilities: { ...M.capabilities, shell: ['rm'] } })), code: 'SPAWN_CAPABILITY_EXCEEDS_CEILING' },
    { note: 'a provider beyond the ceiling', command: () => P.spawn(1, manifest({ capabilities: { ...M.capabilities, providers: ['openai'] } })), code: 'SPAWN_CAPABILITY_EXCEEDS_CEILING' },
    { note: 'more calls than the ceiling', command: () => P.spawn(1, manifest({ resource_limits: { ...M.resource_limits, max_calls: 101 } })), code: 'SPAWN_RESOURCE_LIMITS_EXCEED_CEILING' },
    { note: 'a mode the ceilings do not allow', command: () => P.spawn(1, M, { install: { ...INSTALL, ceilings: { ...INSTALL.ceilings, modes: ['durable'] } } }), code: 'SPAWN_MODE_NOT_ALLOWED' },
    { note: 'another child key than the one bound', command: () => P.spawn(1, M, { child: KEYS.child2.x }), code: 'SPAWN_CHILD_KEY_INVALID' },
    { note: 'the parent key as the child key', command: () => P.spawn(1, manifest({ key_binding: { ...M.key_binding, child_key_fingerprint: KEYS.parent.fingerprint } }), { child: KEYS.parent.x }), code: 'SPAWN_CHILD_KEY_INVALID' },
    { note: 'not a manifest', command: () => P.spawn(1, { seed_id: 'seed-1', manifest_version: 'seed.spawn.v0' }), code: 'SPAWN_MANIFEST_INVALID' },
    { note: 'its own parent', command: () => P.spawn(1, manifest({ parent_seed_id: 'seed-1' })), code: 'SPAWN_LINEAGE_INVALID' },
    { note: 'a forensic manifest through verify-spawn', command: () => P.spawn(1, manifest({ constraints: { ...M.constraints, extra: ['forensic_of:seed-0', `forensic_manifest_hash:${HASH.other}`] } })), code: 'SPAWN_LINEAGE_INVALID' },
  ];

  it.each(cases)('given $note, when verified, then participant.spawn_refused $code and the seed stays unspawned', ({ command, code }) => {
    const { events, after } = run([], command());
    expect(types(events)).toEqual(['participant.spawn_refused']);
    expect(codeOf(events)).toBe(code);
    expect(after.status).toBe('none');
    expect(after.refusals).toBe(1);
  });

  it('given an active seed, when the same manifest comes again, then nothing is appended (duplicate)', () => {
    expect(run(SPAWNED, P.spawn(2, M)).events).toEqual([]);
  });

  it('given an active seed, when its TTL is edited in place (not re-signed), then SPAWN_TTL_EDITED and the TTL in force stays', () => {
    const edited = { ...M, ttl: { ...M.ttl, expires_at: at(7_000) } };
    const { events, after } = run(SPAWNED, P.spawn(2, edited));
    expect(codeOf(events)).toBe('SPAWN_TTL_EDITED');
    expect((after as ParticipantRecord).expires_at).toBe(at(3_600));
  });

  it('given an active seed, when the parent signs a new manifest with a longer TTL and more calls, then participant.manifest_renewed', () => {
    const renewed = manifest({ ttl: { created_at: at(0), expires_at: at(7_000) }, resource_limits: { ...M.resource_limits, max_calls: 50 } });
    const { events, after } = run(SPAWNED, P.spawn(2, renewed));
    expect(types(events)).toEqual(['participant.manifest_renewed']);
    expect(after).toMatchObject({ status: 'active', expires_at: at(7_000), manifest_hash: testCrypto.payloadHash(renewed) });
  });

  it('given a seed_id that names a registered principal, when a valid manifest is verified, then SPAWN_SEED_ID_REUSED (a participant acts under its seed_id)', () => {
    const command = P.spawn(1, M);
    const taken = { ...command, data: { ...command.data, seed_id_is_principal: true } } as Parameters<typeof decider.decide>[0];
    const { events, after } = run([], taken);
    expect(codeOf(events)).toBe('SPAWN_SEED_ID_REUSED');
    expect(after.status).toBe('none');
  });

  it('given an active seed, when a signed manifest changes its role, then SPAWN_SEED_ID_REUSED', () => {
    expect(codeOf(run(SPAWNED, P.spawn(2, manifest({ role: 'docs.writer' }))).events)).toBe('SPAWN_SEED_ID_REUSED');
  });

  it('given a participant parent, when it spawns a sub-seed within its own capabilities and TTL, then it is verified; beyond them, refused', () => {
    const parent = { id: 'seed-1', kind: 'participant', keys: [KEYS.child.x], manifest: M } as const;
    const sub = (overrides: Partial<SpawnManifest>) =>
      signed<SpawnManifest>(
        manifestBody({
          seed_id: 'seed-1a',
          parent_seed_id: 'seed-1',
          lineage: { ...M.lineage, parent_key_fingerprint: KEYS.child.fingerprint },
          key_binding: { ...M.key_binding, child_key_fingerprint: KEYS.child2.fingerprint },
          capabilities: { fs: ['read:docs/a/**'], net: [], shell: ['ls'], providers: [] },
          ...overrides,
        }),
        KEYS.child,
      );
    expect(types(run([], P.spawn(1, sub({}), { parent, child: KEYS.child2.x })).events)).toEqual(['participant.spawn_verified']);
    expect(codeOf(run([], P.spawn(1, sub({ capabilities: { fs: ['read:src/**'], net: [], shell: [], providers: [] } }), { parent, child: KEYS.child2.x })).events)).toBe(
      'SPAWN_CAPABILITY_EXCEEDS_CEILING',
    );
    expect(codeOf(run([], P.spawn(1, sub({ ttl: { created_at: at(0), expires_at: at(3_700) } }), { parent, child: KEYS.child2.x })).events)).toBe('SPAWN_TTL_INVALID');
  });
});

describe('participant decider: record-heartbeat', () => {
  it('given an active seed, when heartbeat 1 carries the manifest hashes, then participant.heartbeat_recorded', () => {
    const { events, after } = run(SPAWNED, P.beat(10, heartbeat(1)));
    expect(events).toEqual([
      { type: 'participant.heartbeat_recorded', data: { seed_id: 'seed-1', heartbeat_seq: 1, last_event_seq: 10, sent_at: at(1), heartbeat_hash: testCrypto.payloadHash(heartbeat(1)), at: at(10) } },
    ]);
    expect((after as ParticipantRecord).heartbeat.last_seq).toBe(1);
  });

  it('given heartbeat 1, when heartbeat 4 arrives, then HEARTBEAT_GAP is logged and the heartbeat recorded', () => {
    const log = play(P.spawn(1, M), P.beat(10, heartbeat(1)));
    const { events } = run(log, P.beat(20, heartbeat(4)));
    expect(types(events)).toEqual(['participant.heartbeat_anomaly', 'participant.heartbeat_recorded']);
    expect(events[0]?.data).toMatchObject({ code: 'HEARTBEAT_GAP', heartbeat_seq: 4, expected_seq: 2 });
  });

  it('given heartbeat 3, when heartbeat 2 arrives late, then HEARTBEAT_OUT_OF_ORDER is logged and nothing else of it applies', () => {
    const log = play(P.spawn(1, M), P.beat(10, heartbeat(3)));
    const { events, after } = run(log, P.beat(20, heartbeat(2, { constraints: { anchor_hash: HASH.other, parent_hash: HASH.other, policy_hash: HASH.policy } })));
    expect(types(events)).toEqual(['participant.heartbeat_anomaly']);
    expect(codeOf(events)).toBe('HEARTBEAT_OUT_OF_ORDER');
    expect(after).toMatchObject({ status: 'active', heartbeat: { last_seq: 3 } });
  });

  it('given heartbeat 1 recorded, when the very same heartbeat is sent again, then nothing is appended', () => {
    expect(run(play(P.spawn(1, M), P.beat(10, heartbeat(1))), P.beat(11, heartbeat(1))).events).toEqual([]);
  });

  it('given an active seed, when the anchor hash drifts, then it is paused; when the hashes match again, resumed', () => {
    const drifted = heartbeat(1, { constraints: { anchor_hash: HASH.other, parent_hash: HASH.parent, policy_hash: HASH.policy } });
    const paused = run(SPAWNED, P.beat(10, drifted));
    expect(types(paused.events)).toEqual(['participant.heartbeat_recorded', 'participant.paused']);
    expect(paused.events[1]?.data).toMatchObject({ code: 'HEARTBEAT_HASH_DRIFT', drift: [{ constraint: 'anchor_hash', expected: HASH.anchor, observed: HASH.other }] });
    expect(paused.after.status).toBe('paused');
    const resumed = run(paused.log, P.beat(20, heartbeat(2)));
    expect(types(resumed.events)).toEqual(['participant.heartbeat_recorded', 'participant.resumed']);
    expect(resumed.after.status).toBe('active');
  });

  it('given an active seed, when the policy hash drifts, then it is paused', () => {
    const { after } = run(SPAWNED, P.beat(10, heartbeat(1, { constraints: { anchor_hash: HASH.anchor, parent_hash: HASH.parent, policy_hash: HASH.other } })));
    expect(after.status).toBe('paused');
  });

  it('given an active seed, when the parent hash changes, then it fails at once', () => {
    const { events, after } = run(SPAWNED, P.beat(10, heartbeat(1, { constraints: { anchor_hash: HASH.anchor, parent_hash: HASH.other, policy_hash: HASH.policy } })));
    expect(types(events)).toEqual(['participant.heartbeat_recorded', 'participant.failed']);
    expect(codeOf(events)).toBe('HEARTBEAT_PARENT_HASH_CHANGED');
    expect(after).toMatchObject({ status: 'failed', last_will: null });
  });

  it('given an active seed, when a heartbeat claims another expiry, then HEARTBEAT_TTL_MISMATCH is logged and the manifest TTL stays', () => {
    const { events, after } = run(SPAWNED, P.beat(10, heartbeat(1, { ttl: { expires_at: at(9_000) } })));
    expect(events[0]?.data).toMatchObject({ code: 'HEARTBEAT_TTL_MISMATCH' });
    expect((after as ParticipantRecord).expires_at).toBe(at(3_600));
  });

  it.each([
    ['signed by the parent, not the child', () => heartbeat(1, {}, KEYS.parent), 'HEARTBEAT_SIGNER_NOT_CHILD'],
    ['changed after signing', () => ({ ...heartbeat(1), last_event_seq: 99 }), 'HEARTBEAT_PAYLOAD_HASH_MISMATCH'],
    ['signed by a stranger naming the child key', () => signed(heartbeat(1), KEYS.stranger, { signer: KEYS.child.fingerprint }), 'HEARTBEAT_SIGNATURE_INVALID'],
    ['naming another parent', () => heartbeat(1, { parent_seed_id: 'someone-else' }), 'HEARTBEAT_MANIFEST_MISMATCH'],
    ['not a heartbeat', () => ({ seed_id: 'seed-1' }), 'HEARTBEAT_INVALID'],
  ])('given an active seed, when a heartbeat %s arrives, then participant.heartbeat_refused %s and nothing changes', (_note, build, code) => {
    const { events, after } = run(SPAWNED, P.beat(10, build()));
    expect(types(events)).toEqual(['participant.heartbeat_refused']);
    expect(codeOf(events)).toBe(code);
    expect(after).toMatchObject({ status: 'active', heartbeat: { last_seq: 0 } });
  });

  it('given no spawn, when a heartbeat arrives, then HEARTBEAT_PARTICIPANT_UNKNOWN', () => {
    expect(codeOf(run([], P.beat(10, heartbeat(1))).events)).toBe('HEARTBEAT_PARTICIPANT_UNKNOWN');
  });

  it('given a seed past its expiry, when a heartbeat arrives, then it is expired first and the heartbeat refused', () => {
    const { events, after } = run(SPAWNED, P.beat(3_600, heartbeat(1)));
    expect(types(events)).toEqual(['participant.expired', 'participant.heartbeat_refused']);
    expect(codeOf(events)).toBe('HEARTBEAT_PARTICIPANT_TERMINAL');
    expect(after.status).toBe('expired');
  });
});

describe('participant decider: ingest-retire', () => {
  const will = lastWill(M_HASH);

  it('given an active seed, when its verified Last Will arrives, then participant.retired applies its deltas', () => {
    const { events, after } = run(SPAWNED, P.retire(700, will));
    expect(events).toEqual([
      {
        type: 'participant.retired',
        data: {
          seed_id: 'seed-1',
          last_will: will,
          last_will_hash: testCrypto.payloadHash(will),
          manifest_hash: M_HASH,
          will_status: 'retired',
          deltas_applied: 1,
          artifacts: [{ path: 'out/index.json', sha256: HASH.other, verified_by: 'presented' }],
          at: at(700),
        },
      },
    ]);
    expect(after).toMatchObject({ status: 'retired', last_will: { deltas_applied: 1 } });
    expect(seedVerdict('seed-1', events, after)).toMatchObject({ outcome: 'accepted', status: 'retired', last_will_hash: testCrypto.payloadHash(will) });
  });

  it('given a retired seed, when the same Last Will comes again, then nothing is appended', () => {
    expect(run(play(P.spawn(1, M), P.retire(700, will)), P.retire(701, will)).events).toEqual([]);
  });

  it.each([
    ['its content changed after signing', () => P.retire(700, { ...will, summary: 'rewritten' }), 'RETIRE_PAYLOAD_HASH_MISMATCH'],
    ['its manifest_hash changed after signing', () => P.retire(700, { ...will, manifest_hash: HASH.other }), 'RETIRE_PAYLOAD_HASH_MISMATCH'],
    ['signed by the child for another manifest', () => P.retire(700, lastWill(HASH.other)), 'RETIRE_MANIFEST_HASH_MISMATCH'],
    ['signed by the parent, not the child', () => P.retire(700, lastWill(M_HASH, {}, KEYS.parent)), 'RETIRE_SIGNER_NOT_CHILD'],
    ['signed by a stranger naming the child key', () => P.retire(700, signed(will, KEYS.stranger, { signer: KEYS.child.fingerprint })), 'RETIRE_SIGNATURE_INVALID'],
    ['an artifact whose bytes hash otherwise', () => P.retire(700, will, [{ path: 'out/index.json', sha256: HASH.anchor, source: 'presented' }]), 'RETIRE_ARTIFACT_HASH_MISMATCH'],
    ['an artifact nowhere to be found', () => P.retire(700, will, [{ path: 'out/index.json', sha256: null, source: 'artifact_store' }]), 'RETIRE_ARTIFACT_MISSING'],
    ['retired_at in the future', () => P.retire(100, will), 'RETIRE_TTL_INVALID'],
    ['another anchor', () => P.retire(700, lastWill(M_HASH, { anchor_id: 'anchor:other' })), 'RETIRE_MANIFEST_MISMATCH'],
    ['a claimed reconstitution the lineage does not show', () => P.retire(700, lastWill(M_HASH, { reconstitution: { reconstituted_from_seed_id: 'seed-0' } })), 'RETIRE_LINEAGE_MISMATCH'],
    ['forensic insight from a worker', () => P.retire(700, lastWill(M_HASH, { deltas: [{ ...will.deltas[0]!, epistemic_type: 'forensic_insight' }] })), 'RETIRE_DELTA_TYPE_INVALID'],
    ['not a Last Will', () => P.retire(700, { seed_id: 'seed-1' }), 'RETIRE_LAST_WILL_INVALID'],
  ])('given an active seed, when a Last Will with %s arrives, then participant.retire_refused %s and no delta applies', (_note, command, code) => {
    const { events, after } = run(SPAWNED, command());
    expect(types(events)).toEqual(['participant.retire_refused']);
    expect(codeOf(events)).toBe(code);
    expect(after).toMatchObject({ status: 'active', last_will: null });
  });

  it('given a seed past its expiry, when its Last Will arrives, then it is expired and the Last Will refused', () => {
    const { events, after } = run(SPAWNED, P.retire(3_601, will));
    expect(types(events)).toEqual(['participant.expired', 'participant.retire_refused']);
    expect(codeOf(events)).toBe('RETIRE_AFTER_EXPIRY');
    expect(after).toMatchObject({ status: 'expired', last_will: null });
  });

  it('given a crashed seed, when a Last Will arrives, then RETIRE_PARTICIPANT_TERMINAL (no state update)', () => {
    const log = play(P.spawn(1, M), P.crash(100, crashReport()));
    expect(codeOf(run(log, P.retire(700, will)).events)).toBe('RETIRE_PARTICIPANT_TERMINAL');
  });
});

describe('participant decider: report-crash and expire', () => {
  it('given an active seed, when its parent reports a crash, then participant.failed without a Last Will', () => {
    const { events, after } = run(SPAWNED, P.crash(100, crashReport()));
    expect(events[0]).toMatchObject({ type: 'participant.failed', data: { code: 'PARTICIPANT_CRASHED', reported_by: KEYS.parent.fingerprint } });
    expect(after).toMatchObject({ status: 'failed', last_will: null });
  });

  it.each([
    ['signed by the child', () => crashReport({}, KEYS.child), PARENT, 'CRASH_SIGNER_NOT_PARENT'],
    ['by a parent key since revoked', () => crashReport(), { ...PARENT, keys: [] }, 'CRASH_SIGNER_NOT_PARENT'],
    ['changed after signing', () => ({ ...crashReport(), reason: 'other' }), PARENT, 'CRASH_PAYLOAD_HASH_MISMATCH'],
  ])('given an active seed, when a crash report %s arrives, then participant.crash_refused %s', (_note, build, parent, code) => {
    const { events, after } = run(SPAWNED, P.crash(100, build(), parent));
    expect(codeOf(events)).toBe(code);
    expect(after.status).toBe('active');
  });

  it('given an active seed, when the timer fires before expires_at, then PARTICIPANT_TTL_NOT_ELAPSED', () => {
    spec.given(SPAWNED).when(P.expire(3_599)).thenThrows('PARTICIPANT_TTL_NOT_ELAPSED');
  });

  it('given an active seed, when the timer fires at expires_at, then participant.expired once', () => {
    const { events, log } = run(SPAWNED, P.expire(3_600));
    expect(types(events)).toEqual(['participant.expired']);
    expect(run(log, P.expire(3_700)).events).toEqual([]);
  });

  it('given no spawn, when the timer fires, then PARTICIPANT_UNKNOWN', () => {
    spec.given([]).when(P.expire(10)).thenThrows('PARTICIPANT_UNKNOWN');
  });

  it('given a command for another seed than the stream, then PARTICIPANT_COMMAND_MISMATCH', () => {
    spec.given(SPAWNED).when(P.expire(10, 'seed-2')).thenThrows('PARTICIPANT_COMMAND_MISMATCH');
  });
});

describe('participant decider: record-call (actions the policy service admitted)', () => {
  it('given an active seed, when calls are recorded, then participant.call_recorded counts them in order against the manifest in force', () => {
    const { events, log } = run(SPAWNED, P.call(10, 1));
    expect(events).toEqual([
      { type: 'participant.call_recorded', data: { seed_id: 'seed-1', call: 1, manifest_hash: M_HASH, task_id: 'tsk-1', attempt_id: 'att-1', policy_entry: 1, action_request_id: 'ar-1', at: at(10) } },
    ]);
    const after = fold(decider, play(...[P.spawn(1, M), P.call(10, 1), P.call(11, 2), P.call(12, 3)])) as ParticipantRecord;
    expect(after.calls).toBe(3);
    expect((fold(decider, log) as ParticipantRecord).calls).toBe(1);
  });

  it('given max_calls used, when one more call is recorded, then PARTICIPANT_CALLS_EXHAUSTED and nothing is counted', () => {
    const limited = manifest({ resource_limits: { max_tokens: 10, max_calls: 2, max_wallclock_seconds: 3_600 } });
    const log = play(P.spawn(1, limited), P.call(10, 1), P.call(11, 2));
    spec.given(log).when(P.call(12, 3)).thenThrows('PARTICIPANT_CALLS_EXHAUSTED');
  });

  it.each([
    ['paused', () => play(P.spawn(1, M), P.beat(10, heartbeat(1, { constraints: { anchor_hash: HASH.other, parent_hash: HASH.parent, policy_hash: HASH.policy } })))],
    ['retired', () => play(P.spawn(1, M), P.retire(600, lastWill(M_HASH)))],
    ['failed', () => play(P.spawn(1, M), P.crash(100, crashReport()))],
    ['expired', () => play(P.spawn(1, M), P.expire(3_600))],
  ])('given a %s seed, when a call is recorded, then PARTICIPANT_NOT_ACTIVE', (_status, log) => {
    spec.given(log()).when(P.call(700, 1)).thenThrows('PARTICIPANT_NOT_ACTIVE');
  });

  it('given an active seed past its expires_at, when a call is recorded, then PARTICIPANT_NOT_ACTIVE (the TTL is judged first)', () => {
    spec.given(SPAWNED).when(P.call(3_600, 1)).thenThrows('PARTICIPANT_NOT_ACTIVE');
  });

  it('given no spawn, when a call is recorded, then PARTICIPANT_UNKNOWN', () => {
    spec.given([]).when(P.call(10, 1)).thenThrows('PARTICIPANT_UNKNOWN');
  });

  it('given a recorded call out of order or for another manifest, when folded, then it is an anomaly and the count stays', () => {
    const [call] = decider.decide(P.call(10, 1), fold(decider, SPAWNED)) as [ParticipantEvent & { type: 'participant.call_recorded' }];
    const skipped = fold(decider, [...SPAWNED, { ...call, data: { ...call.data, call: 2 } }]) as ParticipantRecord;
    expect(skipped.calls).toBe(0);
    expect(skipped.anomalies.map((a) => a.event_type)).toEqual(['participant.call_recorded']);
    const other = fold(decider, [...SPAWNED, { ...call, data: { ...call.data, manifest_hash: HASH.other } }]) as ParticipantRecord;
    expect(other.calls).toBe(0);
  });

  it('given a renewed manifest, then the count carries on (calls are the seed\'s, across renewals)', () => {
    const renewed = manifest({ ttl: { created_at: at(0), expires_at: at(5_000) } });
    const after = fold(decider, play(P.spawn(1, M), P.call(10, 1), P.spawn(20, renewed), P.call(30, 2))) as ParticipantRecord;
    expect(after).toMatchObject({ calls: 2, manifest_hash: testCrypto.payloadHash(renewed) });
  });
});

describe('participant decider: forensic seeds', () => {
  const crashed = fold(decider, play(P.spawn(1, M), P.crash(100, crashReport())));
  const forensicManifest = (overrides: Partial<SpawnManifest> = {}) =>
    manifest({
      seed_id: 'seed-f',
      key_binding: { ...M.key_binding, child_key_fingerprint: KEYS.child2.fingerprint },
      capabilities: { fs: ['read:**'], net: [], shell: [], providers: ['anthropic'] },
      constraints: { ...M.constraints, extra: ['forensic_of:seed-1', `forensic_manifest_hash:${M_HASH}`] },
      ...overrides,
    });

  it('given a crashed seed, when a read-only forensic seed names it, then it is verified as forensic and its forensic Last Will accepted', () => {
    const fm = forensicManifest();
    const spawned = run([], P.forensic(200, fm, crashed));
    expect(spawned.events[0]).toMatchObject({ type: 'participant.spawn_verified', data: { kind: 'forensic', forensic_of: { seed_id: 'seed-1', manifest_hash: M_HASH } } });
    const insight = lastWill(testCrypto.payloadHash(fm), {
      seed_id: 'seed-f',
      deltas: [{ epistemic_type: 'forensic_insight', confidence: 0.6, content: 'OOM killed it', provenance: 'logs', support: [] }],
      artifacts: [],
      lineage: { ...lastWill(M_HASH).lineage, child_key_fingerprint: KEYS.child2.fingerprint },
    }, KEYS.child2);
    expect(types(run(spawned.log, P.retire(700, insight, [], 'seed-f')).events)).toEqual(['participant.retired']);
    const withArtifact = lastWill(testCrypto.payloadHash(fm), { ...insight, artifacts: lastWill(M_HASH).artifacts }, KEYS.child2);
    expect(codeOf(run(spawned.log, P.retire(700, withArtifact, PRESENTED, 'seed-f')).events)).toBe('RETIRE_FORENSIC_ARTIFACTS_FORBIDDEN');
    const notInsight = lastWill(testCrypto.payloadHash(fm), { ...insight, deltas: lastWill(M_HASH).deltas }, KEYS.child2);
    expect(codeOf(run(spawned.log, P.retire(700, notInsight, [], 'seed-f')).events)).toBe('RETIRE_DELTA_TYPE_INVALID');
  });

  it('given an active forensic seed, when its parent signs a renewal that adds a write glob, then SPAWN_FORENSIC_NOT_READ_ONLY', () => {
    const spawned = run([], P.forensic(200, forensicManifest(), crashed));
    const widened = forensicManifest({ capabilities: { fs: ['read:**', 'write:out/**'], net: [], shell: [], providers: [] } });
    expect(codeOf(run(spawned.log, P.forensic(300, widened, crashed)).events)).toBe('SPAWN_FORENSIC_NOT_READ_ONLY');
  });

  it('given a seed that did not crash, when a forensic seed names it, then SPAWN_FORENSIC_TARGET_INVALID', () => {
    expect(codeOf(run([], P.forensic(200, forensicManifest(), fold(decider, SPAWNED))).events)).toBe('SPAWN_FORENSIC_TARGET_INVALID');
  });

  it('given a crashed seed, when the forensic seed names another manifest hash, then SPAWN_FORENSIC_TARGET_INVALID', () => {
    const fm = forensicManifest({ constraints: { ...M.constraints, extra: ['forensic_of:seed-1', `forensic_manifest_hash:${HASH.other}`] } });
    expect(codeOf(run([], P.forensic(200, fm, crashed)).events)).toBe('SPAWN_FORENSIC_TARGET_INVALID');
  });

  it('given a crashed seed, when the forensic seed asks to write, then SPAWN_FORENSIC_NOT_READ_ONLY', () => {
    const fm = forensicManifest({ capabilities: { fs: ['read:**', 'write:out/**'], net: [], shell: [], providers: [] } });
    expect(codeOf(run([], P.forensic(200, fm, crashed)).events)).toBe('SPAWN_FORENSIC_NOT_READ_ONLY');
  });
});

describe('participant decider: reconstitution', () => {
  const will = lastWill(M_HASH);
  const retired = fold(decider, play(P.spawn(1, M), P.retire(700, will)));
  const WILL_HASH = testCrypto.payloadHash(will);
  const next = (extra: string[] = ['reconstituted_from:seed-1', `prior_manifest_hash:${M_HASH}`, `prior_last_will_hash:${WILL_HASH}`], child = KEYS.child2) =>
    manifest({ seed_id: 'seed-2', key_binding: { ...M.key_binding, child_key_fingerprint: child.fingerprint }, constraints: { ...M.constraints, extra } });

  it('given a retired seed, when a new seed names its manifest and Last Will, then it is verified with the lineage link, and its Last Will must name the prior seed', () => {
    const m2 = next();
    const spawned = run([], P.reconstitute(800, m2, retired));
    expect(spawned.events[0]).toMatchObject({ type: 'participant.spawn_verified', data: { kind: 'reconstituted', reconstituted_from: { seed_id: 'seed-1', manifest_hash: M_HASH, last_will_hash: WILL_HASH } } });
    const base = { seed_id: 'seed-2', retired_at: at(900), heartbeat_last: at(890), lineage: { ...will.lineage, child_key_fingerprint: KEYS.child2.fingerprint } };
    const linked = lastWill(testCrypto.payloadHash(m2), { ...base, reconstitution: { reconstituted_from_seed_id: 'seed-1' } }, KEYS.child2);
    expect(types(run(spawned.log, P.retire(1_000, linked, PRESENTED, 'seed-2')).events)).toEqual(['participant.retired']);
    const unlinked = lastWill(testCrypto.payloadHash(m2), base, KEYS.child2);
    expect(codeOf(run(spawned.log, P.retire(1_000, unlinked, PRESENTED, 'seed-2')).events)).toBe('RETIRE_LINEAGE_MISMATCH');
  });

  it('given a crashed prior seed (no Last Will), when reconstituted, then SPAWN_RECONSTITUTION_PRIOR_INVALID', () => {
    const crashed = fold(decider, play(P.spawn(1, M), P.crash(100, crashReport())));
    expect(codeOf(run([], P.reconstitute(800, next(), crashed)).events)).toBe('SPAWN_RECONSTITUTION_PRIOR_INVALID');
  });

  it('given a retired seed, when the new manifest names another Last Will hash, then SPAWN_RECONSTITUTION_PRIOR_INVALID', () => {
    const m2 = next(['reconstituted_from:seed-1', `prior_manifest_hash:${M_HASH}`, `prior_last_will_hash:${HASH.other}`]);
    expect(codeOf(run([], P.reconstitute(800, m2, retired)).events)).toBe('SPAWN_RECONSTITUTION_PRIOR_INVALID');
  });

  it('given a retired seed, when the new seed reuses its child key, then SPAWN_RECONSTITUTION_KEY_REUSED', () => {
    expect(codeOf(run([], P.reconstitute(800, next(undefined, KEYS.child), retired, KEYS.child.x)).events)).toBe('SPAWN_RECONSTITUTION_KEY_REUSED');
  });

  it('given an active seed, when a new spawn names it as prior, then SPAWN_RECONSTITUTION_PRIOR_INVALID', () => {
    expect(codeOf(run([], P.reconstitute(800, next(), fold(decider, SPAWNED))).events)).toBe('SPAWN_RECONSTITUTION_PRIOR_INVALID');
  });
});

describe('seedVerdict', () => {
  it('given a refusal, then refused with its code; given nothing, duplicate; given anomalies, accepted with them', () => {
    const refused = run([], P.spawn(1, { ...M, role: 'x.y' }));
    expect(seedVerdict('seed-1', refused.events, refused.after)).toMatchObject({ outcome: 'refused', status: 'none', code: 'SPAWN_PAYLOAD_HASH_MISMATCH', events: ['participant.spawn_refused'] });
    expect(seedVerdict('seed-1', [], fold(decider, SPAWNED))).toMatchObject({ outcome: 'duplicate', status: 'active', manifest_hash: M_HASH });
    const log = play(P.spawn(1, M), P.beat(10, heartbeat(1)));
    const gap = run(log, P.beat(20, heartbeat(3, { constraints: { anchor_hash: HASH.anchor, parent_hash: HASH.other, policy_hash: HASH.policy } })));
    expect(seedVerdict('seed-1', gap.events, gap.after)).toMatchObject({ outcome: 'accepted', status: 'failed', code: 'HEARTBEAT_PARENT_HASH_CHANGED', anomalies: ['HEARTBEAT_GAP'] });
  });
});
