import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TrustAnchor, type PublicEd25519Jwk } from '@writ/contracts';
import { exportEd25519PrivateJwk, generateEd25519Key, importEd25519PrivateJwk } from '@writ/crypto';
import { serviceEnrollmentPath, signServiceEnrollment } from '../service-enrollment.js';
import { DEFAULT_SERVICE_PRINCIPALS, WRIT_SERVICES, busLayout, dashboardPermissions, serviceConsumerPermissions, servicePermissions, type BusLayout, type SubjectPermissions, type WritService } from './bus-permissions.js';
import { DEFAULT_NATS_SERVER, NatsAuthority, fileExists as exists, writeSecret, type NatsServerSettings } from './nats-authority.js';
import { generatePgPassword, pgServiceRole } from '../pg-auth/pg-roles.js';

/** What `writ init` is asked to set up. */
export interface WritHomeOptions {
  /** The deployment's directory (`WRIT_HOME`); created 0700. */
  readonly home: string;
  readonly server?: Partial<NatsServerSettings>;
  /** The first operator's principal id (default `operator`). */
  readonly operatorId?: string;
  /**
   * Subject roots agents may publish under; the Writ account exports `<root>.ingress.action.*`
   * for each. Default: `*` (any one-token root: `writ`, and each test run's own), plus the
   * layout's root when it has several tokens. Only operator-signed agent accounts can import.
   */
  readonly roots?: readonly string[];
  readonly layout?: BusLayout;
}

/** Where `writ init` put everything (paths; no secret is ever returned or printed). */
export interface WritHome {
  readonly home: string;
  readonly natsUrl: string;
  readonly serverConfig: string;
  /** The monitoring endpoint of Writ's nats-server. */
  readonly monitorUrl: string;
  readonly creds: {
    /** Administration: every subject and JetStream call of the Writ account. */
    readonly operator: string;
    /** Pushes account JWTs (agent credentials issued and revoked). */
    readonly system: string;
    readonly dashboard: string;
    readonly services: Readonly<Record<WritService, string>>;
  };
  /** Each service principal's ServiceEnrollment (`<home>/services/<principal>.enrollment.jws`), signed by the first operator. */
  readonly enrollments: Readonly<Record<WritService, string>>;
  readonly operatorId: string;
  /** The first operator's PRIVATE JWK (0600). */
  readonly operatorKey: string;
  readonly operatorPublicKey: string;
  /**
   * The dashboard's HTTP identity: principal `dashboard`, type `system` (not `service`: /v1/keys serves service keys), role observer (reads everything, changes
   * nothing), its PRIVATE JWK (0600) and public JWK. scripts/writ-up.sh registers it; it signs the
   * dashboard's bearer tokens (`writ http token --principal dashboard --key <dashboardKey>`).
   */
  readonly dashboardId: string;
  readonly dashboardKey: string;
  readonly dashboardPublicKey: string;
  readonly trustAnchor: string;
  /** `. <home>/writ.env` sets WRIT_HOME, WRIT_NATS_URL, WRIT_NATS_CREDS (operator), WRIT_TRUST_ANCHOR, WRIT_OPERATOR_ID / _KEY. */
  readonly envFile: string;
  /**
   * Postgres: the deployment's schema, and each Postgres-using service's role and
   * password file (0600; `writ pg setup` creates the role with it). `admin` is the
   * superuser password of a Postgres Writ runs itself (docker-compose), unused
   * with the machine's own.
   */
  readonly pg: {
    readonly schema: string;
    readonly roles: { readonly projection: string };
    readonly passwordFiles: { readonly projection: string; readonly admin: string };
  };
  /** The files this run created or reissued (empty on a re-run of the same release: nothing else is overwritten). */
  readonly created: readonly string[];
}

/**
 * Sets up a deployment's trust material, idempotently: the NATS authority
 * (operator, system and Writ accounts), the server's configuration, the
 * credentials of the operator, the system user, the dashboard and each
 * service (least privilege, `servicePermissions`), the first operator's
 * Ed25519 key and the trust anchor naming it. Existing files are kept, so a
 * re-run changes nothing and a lost file is recreated alone.
 */
export async function initWritHome(options: WritHomeOptions): Promise<WritHome> {
  const { home } = options;
  const layout = options.layout ?? busLayout();
  const server: NatsServerSettings = { ...DEFAULT_NATS_SERVER, ...options.server };
  const roots = options.roots ?? (layout.root.includes('.') ? ['*', layout.root] : ['*']);
  const operatorId = options.operatorId ?? 'operator';
  const created: string[] = [];
  await mkdir(home, { recursive: true, mode: 0o700 });
  for (const dir of ['creds', 'operator', 'pg', 'dashboard']) await mkdir(join(home, dir), { recursive: true, mode: 0o700 });

  const { authority } = await NatsAuthority.ensure(home);
  const natsDir = NatsAuthority.directory(home);
  await mkdir(join(natsDir, 'resolver'), { recursive: true, mode: 0o700 });
  const ensure = async (path: string, make: () => Promise<string>, secret: boolean) => {
    if (await exists(path)) return;
    const content = await make();
    if (secret) await writeSecret(path, content);
    else await writeFile(path, content);
    created.push(path);
  };
  await ensure(join(natsDir, 'operator.jwt'), () => authority.operatorJwt(), false);
  const serverConfig = join(natsDir, 'nats-server.conf');
  await authority.rememberRoots(roots);
  await ensure(serverConfig, () => authority.serverConfig(server, roots), false);

  const credsFile = (name: string) => join(home, 'creds', `${name}.creds`);
  await ensure(credsFile('operator'), () => authority.writUserCreds('operator', 'all'), true);
  await ensure(credsFile('system'), () => authority.systemUserCreds('system'), true);
  // Issued again when this release grants them other permissions than the file holds (restart the service to use it).
  const current = async (path: string, name: string, permissions: SubjectPermissions) => {
    if ((await exists(path)) && NatsAuthority.credsGrant(await readFile(path, 'utf8'), permissions)) return;
    await writeSecret(path, await authority.writUserCreds(name, permissions));
    created.push(path);
  };
  await current(credsFile('dashboard'), 'dashboard', dashboardPermissions(layout));
  const services = {} as Record<WritService, string>;
  for (const service of WRIT_SERVICES) {
    services[service] = credsFile(service);
    await current(services[service], `svc-${service}`, servicePermissions(service, layout));
    // Beside it, the credential its durable consumers pull with (bus `consumerCredsFile`).
    await current(credsFile(`${service}.consumer`), `svc-${service}`, serviceConsumerPermissions(service, layout));
  }

  const operatorKey = join(home, 'operator', `${operatorId}.jwk.json`);
  const operatorPublicKey = join(home, 'operator', `${operatorId}.pub.json`);
  const trustAnchor = join(home, 'trust-anchor.json');
  if (!(await exists(operatorKey))) {
    const key = await generateEd25519Key({ kid: `${operatorId}-${Date.now().toString(36)}`, extractable: true });
    await writeSecret(operatorKey, `${JSON.stringify(await exportEd25519PrivateJwk(key))}\n`);
    await writeFile(operatorPublicKey, `${JSON.stringify(key.publicJwk)}\n`);
    created.push(operatorKey, operatorPublicKey);
  }
  const dashboardId = 'dashboard';
  const dashboardKey = join(home, 'dashboard', `${dashboardId}.jwk.json`);
  const dashboardPublicKey = join(home, 'dashboard', `${dashboardId}.pub.json`);
  if (!(await exists(dashboardKey))) {
    const key = await generateEd25519Key({ kid: `${dashboardId}-${Date.now().toString(36)}`, extractable: true });
    await writeSecret(dashboardKey, `${JSON.stringify(await exportEd25519PrivateJwk(key))}\n`);
    await writeFile(dashboardPublicKey, `${JSON.stringify(key.publicJwk)}\n`);
    created.push(dashboardKey, dashboardPublicKey);
  }
  await ensure(
    trustAnchor,
    async () => {
      const publicJwk = JSON.parse(await readFile(operatorPublicKey, 'utf8')) as PublicEd25519Jwk;
      return `${JSON.stringify(TrustAnchor.parse({ principal_id: operatorId, keys: [publicJwk] }), null, 2)}\n`;
    },
    false,
  );

  // Postgres passwords: generated here, never printed, read by the service from the file.
  const pgSchema = projectionSchema(authority.writAccount);
  const pgPasswordFiles = { projection: join(home, 'pg', 'projection.password'), admin: join(home, 'pg', 'admin.password') };
  for (const file of Object.values(pgPasswordFiles)) await ensure(file, async () => `${generatePgPassword()}\n`, true);
  // Each service principal's enrollment, signed by the first operator: the authorization a service
  // attaches to the keys it registers and rotates itself (readers trust a service key only with it).
  await mkdir(join(home, 'services'), { recursive: true, mode: 0o700 });
  const enrollments = {} as Record<WritService, string>;
  for (const service of WRIT_SERVICES) {
    const principalId = DEFAULT_SERVICE_PRINCIPALS[service];
    enrollments[service] = serviceEnrollmentPath(home, principalId);
    await ensure(
      enrollments[service],
      async () => {
        const key = await importEd25519PrivateJwk(JSON.parse(await readFile(operatorKey, 'utf8')));
        return `${await signServiceEnrollment(principalId, { principalId: operatorId, key, now: new Date() })}\n`;
      },
      false,
    );
  }

  const natsUrl = `${server.tls === undefined ? 'nats' : 'tls'}://${server.host === '0.0.0.0' ? '127.0.0.1' : server.host}:${server.port}`;
  const envFile = join(home, 'writ.env');
  await ensure(
    envFile,
    async () =>
      [
        '# Written by `writ init`: `. <this file>` to act as the operator of this Writ deployment.',
        `WRIT_HOME=${home}`,
        `WRIT_NATS_URL=${natsUrl}`,
        `WRIT_NATS_CREDS=${credsFile('operator')}`,
        `WRIT_TRUST_ANCHOR=${trustAnchor}`,
        `WRIT_OPERATOR_ID=${operatorId}`,
        `WRIT_OPERATOR_KEY=${operatorKey}`,
        '# The projection\'s schema is this deployment\'s own: its checkpoint belongs to this log, never to another',
        '# deployment sharing the database (a new WRIT_HOME starts a new, empty log).',
        `WRIT_PG_SCHEMA=${projectionSchema(authority.writAccount)}`,
        'export WRIT_HOME WRIT_NATS_URL WRIT_NATS_CREDS WRIT_TRUST_ANCHOR WRIT_OPERATOR_ID WRIT_OPERATOR_KEY WRIT_PG_SCHEMA',
        '',
      ].join('\n'),
    false,
  );
  return {
    home,
    natsUrl,
    serverConfig,
    monitorUrl: `http://127.0.0.1:${server.monitorPort}`,
    creds: { operator: credsFile('operator'), system: credsFile('system'), dashboard: credsFile('dashboard'), services },
    enrollments,
    operatorId,
    operatorKey,
    operatorPublicKey,
    dashboardId,
    dashboardKey,
    dashboardPublicKey,
    trustAnchor,
    envFile,
    pg: { schema: pgSchema, roles: { projection: pgServiceRole(pgSchema, 'projection') }, passwordFiles: pgPasswordFiles },
    created,
  };
}

/** `writ_<12 characters of the Writ account's key>`: a Postgres schema name no other deployment's writ init makes. */
function projectionSchema(writAccount: string): string {
  return `writ_${writAccount.slice(1, 13).toLowerCase()}`;
}
