import { describe, expect, it } from 'vitest';
import { manifest } from '../../test/lineage-flow.js';
import { ParticipantCeilings, checkWithinCeilings, parseFsCapability } from './participant-ceilings.js';
import { manifestLineage } from './lineage-extra.js';

describe('ParticipantCeilings', () => {
  it('given nothing, then the defaults: own cell home read and write, no network, no program, no provider, one day', () => {
    expect(ParticipantCeilings.parse({})).toEqual({
      fs: ['read:**', 'write:**'],
      net: [],
      shell: [],
      providers: [],
      modes: ['ephemeral', 'durable'],
      max_ttl_seconds: 86_400,
      resource_limits: { max_tokens: 1_000_000, max_calls: 10_000, max_wallclock_seconds: 86_400 },
    });
  });

  it('given a glob reaching outside the cell home or a malformed host, then the ceilings do not parse', () => {
    expect(ParticipantCeilings.safeParse({ fs: ['read:/etc/**'] }).success).toBe(false);
    expect(ParticipantCeilings.safeParse({ fs: ['read:../x'] }).success).toBe(false);
    expect(ParticipantCeilings.safeParse({ net: ['http://x'] }).success).toBe(false);
  });
});

describe('checkWithinCeilings', () => {
  const ceilings = ParticipantCeilings.parse({ fs: ['read:**', 'write:out/**'], net: ['*.example.com'], shell: ['*'], providers: [] });
  const m = (capabilities: object) => manifest({ capabilities: { fs: [], net: [], shell: [], providers: [], ...capabilities } });

  it.each([
    [{ fs: ['read:src/**', 'write:out/a/**'] }, true],
    [{ fs: ['write:out/*.json'] }, true],
    [{ fs: ['write:**'] }, false],
    [{ fs: ['write:outer/**'] }, false],
    [{ net: ['api.example.com', '*.api.example.com:8443'.replace(':8443', '')] }, true],
    [{ net: ['example.com'] }, false],
    [{ shell: ['anything', 'rm'] }, true],
    [{ providers: ['anthropic'] }, false],
  ])('given capabilities %j, then within: %s', (capabilities, within) => {
    expect(checkWithinCeilings(m(capabilities), ceilings, 'the ceilings').ok).toBe(within);
  });

  it('given read:/write: entries, then write implies read and a bad glob is undefined', () => {
    expect(parseFsCapability('write:out/**')).toMatchObject({ mode: 'write' });
    expect(parseFsCapability('read:~/x')).toBeUndefined();
    expect(parseFsCapability('exec:x')).toBeUndefined();
  });
});

describe('manifestLineage', () => {
  const hash = 'a'.repeat(64);
  it.each([
    [[], { ok: true, lineage: { kind: 'worker' } }],
    [['note:free text'], { ok: true, lineage: { kind: 'worker' } }],
    [['forensic_of:seed-1', `forensic_manifest_hash:${hash}`], { ok: true, lineage: { kind: 'forensic', target: { seed_id: 'seed-1', manifest_hash: hash } } }],
    [['reconstituted_from:seed-1', `prior_manifest_hash:${hash}`, `prior_last_will_hash:${hash}`], { ok: true, lineage: { kind: 'reconstituted', source: { seed_id: 'seed-1', manifest_hash: hash, last_will_hash: hash } } }],
    [['forensic_of:seed-1'], { ok: false }],
    [['forensic_of:seed-1', 'forensic_of:seed-2', `forensic_manifest_hash:${hash}`], { ok: false }],
    [['forensic_of:seed-1', `forensic_manifest_hash:${hash}`, 'reconstituted_from:seed-0'], { ok: false }],
    [['reconstituted_from:a.b', `prior_manifest_hash:${hash}`, `prior_last_will_hash:${hash}`], { ok: false }],
  ])('given extra %j, then %j', (extra, want) => {
    expect(manifestLineage(extra)).toMatchObject(want);
  });
});
