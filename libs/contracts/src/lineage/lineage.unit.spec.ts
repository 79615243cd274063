import { describe, expect, it } from 'vitest';
import { crashReport, heartbeat, lastWill, spawnManifest } from '../../test/samples.js';
import { CrashReport, Heartbeat, KeyFingerprint, LastWill, PARTICIPANT_EVENT_PAYLOADS, ParticipantEvent, SeedSignature, SpawnManifest, VerifySpawn } from '../index.js';

describe('seed 002 contracts', () => {
  it.each([
    ['SpawnManifest', SpawnManifest, spawnManifest],
    ['LastWill', LastWill, lastWill],
    ['Heartbeat', Heartbeat, heartbeat],
    ['CrashReport', CrashReport, crashReport],
  ] as const)('given a %s with a field the seed does not define, then it is refused (an unsigned extra must not ride along)', (_name, schema, sample) => {
    expect(schema.safeParse(sample).success).toBe(true);
    expect(schema.safeParse({ ...sample, extra_field: true }).success).toBe(false);
    expect(schema.safeParse({ ...sample, signature: { ...sample.signature, note: 'x' } }).success).toBe(false);
  });

  it('given signature blocks, then only ed25519, a hex payload hash, a 64-byte base64 signature and a sha256: fingerprint pass', () => {
    const good = spawnManifest.signature;
    expect(SeedSignature.safeParse(good).success).toBe(true);
    for (const bad of [
      { ...good, algo: 'rsa' },
      { ...good, payload_hash: 'A'.repeat(64) },
      { ...good, sig: 'c2ln' },
      { ...good, signer: `symbikey:${'c'.repeat(64)}` },
    ]) {
      expect(SeedSignature.safeParse(bad).success).toBe(false);
    }
    expect(KeyFingerprint.safeParse(`sha256:${'0'.repeat(63)}`).success).toBe(false);
  });

  it('given a Last Will delta outside the seed vocabulary or confidence outside 0..1, then it is refused', () => {
    const delta = lastWill.deltas[0];
    expect(LastWill.safeParse({ ...lastWill, deltas: [{ ...delta, epistemic_type: 'rumour' }] }).success).toBe(false);
    expect(LastWill.safeParse({ ...lastWill, deltas: [{ ...delta, confidence: 1.5 }] }).success).toBe(false);
  });

  it('given VerifySpawn, then any manifest object with an Id seed_id passes (verification judges the rest) and a seed_id that is no subject token does not', () => {
    const x = 'A'.repeat(43);
    expect(VerifySpawn.safeParse({ manifest: { seed_id: 'seed-1', anything: 1 }, child_public_key: x }).success).toBe(true);
    expect(VerifySpawn.safeParse({ manifest: { seed_id: 'seed.1' }, child_public_key: x }).success).toBe(false);
    expect(VerifySpawn.safeParse({ manifest: { seed_id: 'seed-1' } }).success).toBe(false);
  });

  it('given the participant event table, then every payload is an option of ParticipantEvent and every type is past tense under participant.', () => {
    for (const type of Object.keys(PARTICIPANT_EVENT_PAYLOADS)) {
      expect(type).toMatch(/^participant\.[a-z_]+(ed|_refused|_anomaly)$/);
      expect(ParticipantEvent.options.some((option) => option.shape.type.value === type)).toBe(true);
    }
    expect(ParticipantEvent.options).toHaveLength(Object.keys(PARTICIPANT_EVENT_PAYLOADS).length);
  });
});
