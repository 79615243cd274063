import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TrustAnchor } from '@writ/contracts';
import { generateEd25519Key } from '@writ/crypto';
import { RegistrationAuthority } from '../registration-authority.js';
import { loadServiceEnrollment } from '../service-enrollment.js';
import { consumerCredsFile } from '@writ/bus';
import { DEFAULT_SERVICE_PRINCIPALS, busLayout, serviceConsumerPermissions, servicePermissions, type WritService } from './bus-permissions.js';
import { NatsAuthority } from './nats-authority.js';
import { initWritHome } from './writ-home.js';

let home: string;
beforeEach(async () => {
  home = join(await mkdtemp(join(tmpdir(), 'writ-home-')), 'writ');
});
afterEach(async () => {
  await rm(join(home, '..'), { recursive: true, force: true });
});

const mode = async (path: string) => (await stat(path)).mode & 0o777;

describe('writ init (initWritHome)', () => {
  it('given an empty home, then every secret is 0600 in 0700 directories, the trust anchor names the operator, and the server config refuses anonymous clients', async () => {
    const made = await initWritHome({ home });
    expect(await mode(home)).toBe(0o700);
    expect(await mode(join(home, 'nats'))).toBe(0o700);
    for (const secret of [made.operatorKey, made.dashboardKey, made.creds.operator, made.creds.system, made.creds.dashboard, ...Object.values(made.creds.services), join(home, 'nats', 'keys', 'operator.nk')]) {
      expect(await mode(secret), secret).toBe(0o600);
    }
    // and beside each service's credential, 0600 too, the one its consumers pull with: the same subjects, and no right to answer
    for (const [service, file] of Object.entries(made.creds.services)) {
      const beside = file.replace(/\.creds$/, '.consumer.creds');
      expect(await mode(beside), beside).toBe(0o600);
      expect(consumerCredsFile({ WRIT_NATS_CREDS: file })).toBe(beside);
      const granted = await readFile(beside, 'utf8');
      expect(NatsAuthority.credsGrant(granted, serviceConsumerPermissions(service as WritService, busLayout())), service).toBe(true);
      expect(NatsAuthority.credsGrant(granted, servicePermissions(service as WritService, busLayout())), service).toBe(false);
    }
    const anchor = TrustAnchor.parse(JSON.parse(await readFile(made.trustAnchor, 'utf8')));
    expect(anchor.principal_id).toBe('operator');
    expect(anchor.keys[0]).not.toHaveProperty('d');
    const config = await readFile(made.serverConfig, 'utf8');
    expect(config).toMatch(/^operator: /m);
    expect(config).toMatch(/^resolver \{ type: full/m);
    expect(config).toMatch(/^host: "127\.0\.0\.1"$/m);
    expect(config).toMatch(/^port: 4223$/m);
    expect(made.natsUrl).toBe('nats://127.0.0.1:4223');
    // and the projection's schema is this deployment's own (a new home is a new, empty log)
    expect(await readFile(made.envFile, 'utf8')).toMatch(/^WRIT_PG_SCHEMA=writ_[a-z2-7]{12}$/m);
    // and its Postgres passwords are generated, 0600 in a 0700 directory, and named nowhere but their files
    expect(await mode(join(home, 'pg'))).toBe(0o700);
    expect(made.pg.roles.projection).toBe(`${made.pg.schema}_projection`);
    const env = await readFile(made.envFile, 'utf8');
    for (const file of Object.values(made.pg.passwordFiles)) {
      expect(await mode(file), file).toBe(0o600);
      const password = (await readFile(file, 'utf8')).trim();
      expect(password).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(env).not.toContain(password);
      expect(JSON.stringify(made)).not.toContain(password);
    }
  });

  it('given an empty home, then each service principal gets an enrollment signed by the first operator, which a service key registered under it chains to', async () => {
    const made = await initWritHome({ home });
    const anchor = TrustAnchor.parse(JSON.parse(await readFile(made.trustAnchor, 'utf8')));
    for (const [service, file] of Object.entries(made.enrollments)) {
      const principalId = DEFAULT_SERVICE_PRINCIPALS[service as keyof typeof DEFAULT_SERVICE_PRINCIPALS];
      expect(file).toBe(join(home, 'services', `${principalId}.enrollment.jws`));
      // found the way a service finds it: by its principal id under WRIT_HOME
      const enrollment = await loadServiceEnrollment(principalId, { WRIT_HOME: home });
      expect(enrollment).toBeDefined();
      const key = await generateEd25519Key({ kid: `${principalId}-k1` });
      const at = new Date().toISOString();
      const events = [
        {
          event_type: 'principal.registered',
          payload: { principal_id: principalId, principal_type: 'service', display_name: service, roles: [], keys: [key.publicJwk], registered_by: principalId, at, authorization: enrollment },
        },
      ];
      expect(await new RegistrationAuthority(() => events, anchor).key(principalId, key.kid)).toBeUndefined();
    }
    // and another service's enrollment is refused for a principal it does not name
    await expect(loadServiceEnrollment('writ-approval', { WRIT_SERVICE_ENROLLMENT: made.enrollments.receipt })).rejects.toMatchObject({ code: 'RUNTIME_CONFIG_INVALID' });
  });

  it('given a second run, then nothing is created or changed', async () => {
    const first = await initWritHome({ home });
    const operatorKey = await readFile(first.operatorKey, 'utf8');
    const again = await initWritHome({ home });
    expect(again.created).toEqual([]);
    expect(await readFile(again.operatorKey, 'utf8')).toBe(operatorKey);
  });

  it("given a service credential with other permissions than this release grants, then it is reissued and nothing else", async () => {
    const first = await initWritHome({ home });
    const authority = await NatsAuthority.load(home);
    await writeFile(first.creds.services.policy, await authority.writUserCreds('svc-policy', 'all'), { mode: 0o600 });
    const again = await initWritHome({ home });
    expect(again.created).toEqual([first.creds.services.policy]);
    expect(NatsAuthority.credsGrant(await readFile(first.creds.services.policy, 'utf8'), servicePermissions('policy', busLayout()))).toBe(true);
  });

  it('given TLS files, then the server requires TLS and the URL says tls://', async () => {
    const made = await initWritHome({ home, server: { tls: { certFile: '/etc/writ/server.pem', keyFile: '/etc/writ/server.key' } } });
    expect(await readFile(made.serverConfig, 'utf8')).toMatch(/^tls \{ cert_file: "\/etc\/writ\/server\.pem", key_file: "\/etc\/writ\/server\.key"/m);
    expect(made.natsUrl).toBe('tls://127.0.0.1:4223');
  });
});
