import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasErrorCode } from '@writ/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadIngressConfig } from './config.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'writ-ingress-config-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The offending variables of a RUNTIME_CONFIG_INVALID. */
function offending(env: Record<string, string>): string[] {
  try {
    loadIngressConfig(env);
  } catch (error) {
    expect(hasErrorCode(error, 'RUNTIME_CONFIG_INVALID')).toBe(true);
    return (error as { details: { issues: { path: string }[] } }).details.issues.map((issue) => issue.path);
  }
  throw new Error('the configuration was accepted');
}

describe('loadIngressConfig: participants (seed 002)', () => {
  it('given nothing, then the documented defaults: install writ-local, default ceilings, rooted subjects', () => {
    const { seeds } = loadIngressConfig({ WRIT_SUBJECT_ROOT: 't_2' });
    expect(seeds.install).toMatchObject({ install_id: 'writ-local', genesis_fingerprint: 'genesis:writ-local', clock_skew_seconds: 300 });
    expect(seeds.install.ceilings).toMatchObject({ fs: ['read:**', 'write:**'], net: [], shell: [], providers: [], max_ttl_seconds: 86_400 });
    expect(seeds.subjects).toMatchObject({
      spawnVerify: 't_2.qry.ingress.spawn-verify',
      heartbeatVerify: 't_2.qry.ingress.heartbeat-verify',
      retireIngest: 't_2.qry.ingress.retire-ingest',
      crashReport: 't_2.qry.ingress.crash-report',
      participantCheck: 't_2.qry.ingress.participant-check',
      expire: 't_2.cmd.ingress.participant-expire',
      expireDeadLetter: 't_2.dlq.ingress.participant-expire',
    });
    expect(seeds.subjects.expireDurable).toMatch(/^ingress__t_2_cmd_ingress_participant-expire-[0-9a-f]{8}$/);
    expect(seeds.expiryRefreshMs).toBe(12 * 3_600_000);
    expect(seeds.artifacts).toEqual({ bucket: 'WRIT_ARTIFACTS', maxBytes: 10 * 1024 ** 3, replicas: 1 });
  });

  it('given ceilings as JSON or in a file, then they are parsed with defaults for what they leave out', async () => {
    const inline = loadIngressConfig({ WRIT_PARTICIPANT_CEILINGS: JSON.stringify({ net: ['api.example.com'], shell: ['ls'] }) });
    expect(inline.seeds.install.ceilings).toMatchObject({ fs: ['read:**', 'write:**'], net: ['api.example.com'], shell: ['ls'], resource_limits: { max_calls: 10_000 } });
    const file = join(dir, 'ceilings.json');
    await writeFile(file, JSON.stringify({ fs: ['read:docs/**'], max_ttl_seconds: 600 }));
    expect(loadIngressConfig({ WRIT_PARTICIPANT_CEILINGS_FILE: file }).seeds.install.ceilings).toMatchObject({ fs: ['read:docs/**'], max_ttl_seconds: 600 });
  });

  it.each([
    [{ WRIT_PARTICIPANT_CEILINGS: '{not json' }, 'WRIT_PARTICIPANT_CEILINGS'],
    [{ WRIT_PARTICIPANT_CEILINGS: JSON.stringify({ fs: ['write:/etc/**'] }) }, 'WRIT_PARTICIPANT_CEILINGS'],
    [{ WRIT_PARTICIPANT_CEILINGS: JSON.stringify({ surprise: true }) }, 'WRIT_PARTICIPANT_CEILINGS'],
    [{ WRIT_PARTICIPANT_CEILINGS: '{}', WRIT_PARTICIPANT_CEILINGS_FILE: '/nonexistent' }, 'WRIT_PARTICIPANT_CEILINGS'],
    [{ WRIT_PARTICIPANT_CEILINGS_FILE: '/nonexistent/ceilings.json' }, 'WRIT_PARTICIPANT_CEILINGS_FILE'],
    [{ WRIT_INSTALL_ID: 'a.b' }, 'WRIT_INSTALL_ID'],
    [{ WRIT_GENESIS_FINGERPRINT: 'has space' }, 'WRIT_GENESIS_FINGERPRINT'],
  ])('given %j, then it fails fast naming %s', (env, variable) => {
    expect(offending(env)).toEqual([variable]);
  });
});
