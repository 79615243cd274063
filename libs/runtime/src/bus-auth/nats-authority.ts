import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createAccount, createOperator, createUser, decode, encodeAccount, encodeOperator, encodeUser, fmtCreds, fromSeed, type KeyPair } from '@nats-io/jwt';
import type { NatsConnection } from '@nats-io/transport-node';
import { userJwtOf } from '@writ/bus';
import { RuntimeError } from '../runtime-errors.js';
import { agentIngressSubject, type BusLayout, type SubjectPermissions } from './bus-permissions.js';

/**
 * Account limits: the Writ account holds the streams (JetStream on); an
 * agent's account holds nothing (no JetStream) and a handful of connections.
 */
const UNLIMITED = { subs: -1, conn: -1, leaf: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true };
const WRIT_ACCOUNT_LIMITS = { ...UNLIMITED, disk_storage: -1, mem_storage: -1, streams: -1, consumer: -1 };
const AGENT_CONNECTIONS = 16;
const AGENT_ACCOUNT_LIMITS = { ...UNLIMITED, conn: AGENT_CONNECTIONS, disk_storage: 0, mem_storage: 0, streams: 0, consumer: 0 };

/** Where the server listens and keeps its data (`nats-server.conf`). */
export interface NatsServerSettings {
  /** Default 127.0.0.1: loopback unless configured wider. */
  readonly host: string;
  /** Writ's own port (default 4223: the machines run an unauthenticated server of their own on 4222). */
  readonly port: number;
  /** The monitoring endpoint (`writ doctor` reads it); loopback. */
  readonly monitorPort: number;
  /** TLS for client connections: the server's certificate and key (PEM files). */
  readonly tls?: { readonly certFile: string; readonly keyFile: string };
}

export const DEFAULT_NATS_SERVER: NatsServerSettings = Object.freeze({ host: '127.0.0.1', port: 4223, monitorPort: 8223 });

/** One agent's NATS account and the credential of its user. */
export interface AgentBusCredential {
  readonly principalId: string;
  /** The agent account's public nkey (`A...`). */
  readonly account: string;
  /** The account JWT, signed by the operator, to push to the server's resolver. */
  readonly accountJwt: string;
  /** The `.creds` text (user JWT + seed): a secret, written 0600. */
  readonly creds: string;
}

/**
 * The users of the Writ account issued to principals (directors, operators,
 * dashboards: `writ principal add`) and the ones revoked, under
 * `<home>/nats/writ-users.json`; `roots` are the subject roots the account
 * exports (from `writ init`), so a re-signed account JWT exports the same.
 */
interface WritUsersRecord {
  readonly roots: readonly string[] | null;
  readonly users: Readonly<Record<string, readonly string[]>>;
  readonly revoked: Readonly<Record<string, number>>;
}

const NO_WRIT_USERS: WritUsersRecord = Object.freeze({ roots: null, users: {}, revoked: {} });

interface AgentRecord {
  readonly principal_id: string;
  readonly subject: string;
  readonly account_seed: string;
  readonly users: string[];
  readonly revoked: Record<string, number>;
  readonly disabled: boolean;
}

/**
 * The NATS authority of one Writ deployment, kept under `<home>/nats`: the
 * operator key (signs account JWTs), the system account (pushes them to the
 * server), the Writ account and its signing key (signs its users), and one
 * account per agent. Decentralized JWT auth: the server holds no secret and
 * no user list; it trusts the operator's signature, so issuing a credential
 * never restarts or reconfigures it. Seeds are files of mode 0600 in a 0700
 * directory, never printed.
 */
export class NatsAuthority {
  private constructor(
    readonly dir: string,
    private readonly operator: KeyPair,
    private readonly system: KeyPair,
    private readonly writ: KeyPair,
    private readonly writSigner: KeyPair,
  ) {}

  /** The key directory of `<home>`. */
  static directory(home: string): string {
    return join(home, 'nats');
  }

  /** Creates the keys that are missing (idempotent: existing ones are kept) and loads them. */
  static async ensure(home: string): Promise<{ authority: NatsAuthority; created: boolean }> {
    const dir = NatsAuthority.directory(home);
    await mkdir(join(dir, 'keys'), { recursive: true, mode: 0o700 });
    await chmod(dir, 0o700);
    let created = false;
    for (const [name, make] of [
      ['operator', createOperator],
      ['system', createAccount],
      ['writ', createAccount],
      ['writ-signing', createAccount],
    ] as const) {
      const file = join(dir, 'keys', `${name}.nk`);
      if (!(await fileExists(file))) {
        await writeSecret(file, new TextDecoder().decode(make().getSeed()));
        created = true;
      }
    }
    return { authority: await NatsAuthority.load(home), created };
  }

  /** Loads the keys `ensure` made; RUNTIME_BUS_AUTHORITY_MISSING when there are none. */
  static async load(home: string): Promise<NatsAuthority> {
    const dir = NatsAuthority.directory(home);
    const seed = async (name: string) => {
      try {
        return fromSeed(new TextEncoder().encode((await readFile(join(dir, 'keys', `${name}.nk`), 'utf8')).trim()));
      } catch (cause) {
        throw new RuntimeError('RUNTIME_BUS_AUTHORITY_MISSING', `no NATS authority under ${dir} (keys/${name}.nk): run \`writ init\` there first, or set WRIT_HOME to the operator's directory`, { cause });
      }
    };
    return new NatsAuthority(dir, await seed('operator'), await seed('system'), await seed('writ'), await seed('writ-signing'));
  }

  get systemAccount(): string {
    return this.system.getPublicKey();
  }

  get writAccount(): string {
    return this.writ.getPublicKey();
  }

  /** The operator JWT the server trusts. */
  operatorJwt(): Promise<string> {
    return encodeOperator('writ', this.operator, { system_account: this.system.getPublicKey() });
  }

  systemAccountJwt(): Promise<string> {
    return encodeAccount('SYS', this.system, { limits: UNLIMITED }, { signer: this.operator });
  }

  /**
   * The Writ account: JetStream, its users signed by its signing key, and the
   * one service agents' accounts may import: `<root>.ingress.action.*` (each
   * agent account imports its own subject only; only the operator signs
   * accounts, so no agent can import another's).
   */
  async writAccountJwt(roots: readonly string[]): Promise<string> {
    const exports = [...new Set(roots)].map((root) => ({ name: `ingress ${root}`, subject: `${root}.ingress.action.*`, type: 'service' as const, response_type: 'Singleton' as const }));
    const { revoked } = await this.#writUsers();
    return encodeAccount(
      'WRIT',
      this.writ,
      { limits: WRIT_ACCOUNT_LIMITS, signing_keys: [this.writSigner.getPublicKey()], exports, ...(Object.keys(revoked).length === 0 ? {} : { revocations: { ...revoked } }) },
      { signer: this.operator },
    );
  }

  /** Records the subject roots the Writ account exports (kept once written: `writ init` decides them). */
  async rememberRoots(roots: readonly string[]): Promise<void> {
    const record = await this.#writUsers();
    if (record.roots !== null) return;
    await this.#saveWritUsers({ ...record, roots: [...roots] });
  }

  /**
   * A user of the Writ account for a principal (a director's or a dashboard's
   * credential), remembered under the principal so that revoking it cuts
   * every credential ever issued to it.
   */
  async issueWritUser(principalId: string, name: string, permissions: SubjectPermissions): Promise<string> {
    const user = createUser();
    const record = await this.#writUsers();
    await this.#saveWritUsers({ ...record, users: { ...record.users, [principalId]: [...(record.users[principalId] ?? []), user.getPublicKey()] } });
    const jwt = await encodeUser(name, user, this.writ, natsPermissions(permissions), { signer: this.writSigner });
    return new TextDecoder().decode(fmtCreds(jwt, user));
  }

  /**
   * The Writ account JWT with every user issued to the principal revoked (and
   * every earlier revocation kept): pushed, the server disconnects those users
   * at once and refuses their credentials from then on, across restarts (the
   * full resolver keeps the newer JWT over the config's preload). Undefined
   * when the principal was never issued a Writ-account credential.
   */
  async revokeWritUsers(principalId: string, at: Date): Promise<string | undefined> {
    const record = await this.#writUsers();
    const users = record.users[principalId] ?? [];
    if (users.length === 0) return undefined;
    if (record.roots === null) {
      throw new RuntimeError('RUNTIME_BUS_AUTHORITY_MISSING', `${this.dir}/writ-users.json names no exported subject roots: run \`writ init\` on this home once more, then revoke again`);
    }
    const seconds = Math.ceil(at.getTime() / 1000);
    await this.#saveWritUsers({ ...record, revoked: { ...record.revoked, ...Object.fromEntries(users.map((user) => [user, record.revoked[user] ?? seconds])) } });
    const accountJwt = await this.writAccountJwt(record.roots);
    await this.#preloadWritAccount(accountJwt);
    return accountJwt;
  }

  /**
   * Puts the re-signed Writ account into the server config's preload as well: a restarted
   * server starts from it, so the revocation does not depend on which of the preload and
   * the resolver's stored copy the server prefers (both were signed within the same second
   * in a fast deployment, and JWT times have second resolution).
   */
  async #preloadWritAccount(accountJwt: string): Promise<void> {
    const config = join(this.dir, 'nats-server.conf');
    let text: string;
    try {
      text = await readFile(config, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    const prefix = `  ${this.writ.getPublicKey()}: `;
    const lines = text.split('\n');
    const index = lines.findIndex((line) => line.startsWith(prefix));
    if (index < 0) return;
    lines[index] = `${prefix}${accountJwt}`;
    await writeFile(`${config}.tmp`, lines.join('\n'));
    await rename(`${config}.tmp`, config);
  }

  async #writUsers(): Promise<WritUsersRecord> {
    try {
      return { ...NO_WRIT_USERS, ...(JSON.parse(await readFile(join(this.dir, 'writ-users.json'), 'utf8')) as Partial<WritUsersRecord>) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return NO_WRIT_USERS;
      throw error;
    }
  }

  async #saveWritUsers(record: WritUsersRecord): Promise<void> {
    await writeSecret(join(this.dir, 'writ-users.json'), `${JSON.stringify(record, null, 2)}\n`);
  }

  /** The server's configuration: operator mode, full resolver preloaded with the system and Writ accounts. */
  async serverConfig(settings: NatsServerSettings, roots: readonly string[]): Promise<string> {
    const dir = this.dir;
    const lines = [
      '# Writ\'s own nats-server, written by `writ init` (edit the settings there, not here).',
      '# Decentralized JWT auth: every client needs a credential signed under this operator;',
      '# anonymous connections are refused.',
      `server_name: writ`,
      `host: ${JSON.stringify(settings.host)}`,
      `port: ${settings.port}`,
      `http: ${JSON.stringify(`127.0.0.1:${settings.monitorPort}`)}`,
      `max_payload: 1MB`,
      `jetstream { store_dir: ${JSON.stringify(join(dir, 'jetstream'))} }`,
      `operator: ${JSON.stringify(join(dir, 'operator.jwt'))}`,
      `system_account: ${this.system.getPublicKey()}`,
      `resolver { type: full, dir: ${JSON.stringify(join(dir, 'resolver'))}, allow_delete: false, interval: "2m", timeout: "5s" }`,
      'resolver_preload {',
      `  ${this.system.getPublicKey()}: ${await this.systemAccountJwt()}`,
      `  ${this.writ.getPublicKey()}: ${await this.writAccountJwt(roots)}`,
      '}',
    ];
    if (settings.tls !== undefined) {
      lines.push(`tls { cert_file: ${JSON.stringify(settings.tls.certFile)}, key_file: ${JSON.stringify(settings.tls.keyFile)}, timeout: 2 }`);
    }
    return `${lines.join('\n')}\n`;
  }

  /** A user of the Writ account with these permissions, as `.creds` text. */
  async writUserCreds(name: string, permissions: SubjectPermissions | 'all'): Promise<string> {
    const user = createUser();
    const claims = permissions === 'all' ? {} : natsPermissions(permissions);
    const jwt = await encodeUser(name, user, this.writ, claims, { signer: this.writSigner });
    return new TextDecoder().decode(fmtCreds(jwt, user));
  }

  /**
   * Whether `.creds` text holds a user of the Writ account with exactly these
   * permissions (false for anything unreadable): `writ init` reissues a
   * service's credential when a release changed what the service may do.
   */
  static credsGrant(creds: string, permissions: SubjectPermissions | 'all'): boolean {
    const jwt = userJwtOf(creds);
    if (jwt === undefined) return false;
    try {
      const claims = decode<{ pub?: unknown; sub?: unknown; resp?: unknown }>(jwt).nats;
      const wanted = permissions === 'all' ? {} : natsPermissions(permissions);
      const held = { pub: claims.pub, sub: claims.sub, resp: claims.resp };
      return JSON.stringify(canonical(held)) === JSON.stringify(canonical({ pub: undefined, sub: undefined, resp: undefined, ...wanted }));
    } catch {
      return false;
    }
  }

  /** A user of the system account (pushes account JWTs; the operator's only). */
  async systemUserCreds(name: string): Promise<string> {
    const user = createUser();
    const jwt = await encodeUser(name, user, this.system);
    return new TextDecoder().decode(fmtCreds(jwt, user));
  }

  /**
   * The agent's own account (created on first issue, kept under
   * `agents/<principal>.json`) importing only its ingress subject, and a new
   * user in it allowed exactly that subject. Push `accountJwt` before use.
   */
  async issueAgent(principalId: string, layout: BusLayout, permissions: SubjectPermissions): Promise<AgentBusCredential> {
    const record = (await this.#agentRecord(principalId)) ?? { principal_id: principalId, subject: agentIngressSubject(principalId, layout), account_seed: new TextDecoder().decode(createAccount().getSeed()), users: [], revoked: {}, disabled: false };
    const account = fromSeed(new TextEncoder().encode(record.account_seed));
    const user = createUser();
    const updated: AgentRecord = { ...record, subject: agentIngressSubject(principalId, layout), users: [...record.users, user.getPublicKey()], disabled: false };
    await this.#saveAgent(updated);
    const userJwt = await encodeUser(principalId, user, account, natsPermissions(permissions));
    return { principalId, account: account.getPublicKey(), accountJwt: await this.#agentAccountJwt(updated, account), creds: new TextDecoder().decode(fmtCreds(userJwt, user)) };
  }

  /**
   * The agent's account JWT with every user issued so far revoked and no
   * connection allowed: pushed, it disconnects the agent at once and refuses
   * its credentials from then on. Undefined when the agent has no account.
   */
  async revokeAgent(principalId: string, at: Date): Promise<string | undefined> {
    const record = await this.#agentRecord(principalId);
    if (record === undefined) return undefined;
    const seconds = Math.ceil(at.getTime() / 1000);
    const updated: AgentRecord = { ...record, disabled: true, revoked: { ...record.revoked, ...Object.fromEntries(record.users.map((user) => [user, seconds])) } };
    await this.#saveAgent(updated);
    return this.#agentAccountJwt(updated, fromSeed(new TextEncoder().encode(record.account_seed)));
  }

  async #agentAccountJwt(record: AgentRecord, account: KeyPair): Promise<string> {
    return encodeAccount(
      `agent ${record.principal_id}`,
      account,
      {
        limits: record.disabled ? { ...AGENT_ACCOUNT_LIMITS, conn: 0 } : AGENT_ACCOUNT_LIMITS,
        imports: [{ name: 'ingress', subject: record.subject, account: this.writ.getPublicKey(), type: 'service' }],
        revocations: record.revoked,
      },
      { signer: this.operator },
    );
  }

  async #agentRecord(principalId: string): Promise<AgentRecord | undefined> {
    try {
      return JSON.parse(await readFile(join(this.dir, 'agents', `${principalId}.json`), 'utf8')) as AgentRecord;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async #saveAgent(record: AgentRecord): Promise<void> {
    await mkdir(join(this.dir, 'agents'), { recursive: true, mode: 0o700 });
    await writeSecret(join(this.dir, 'agents', `${record.principal_id}.json`), `${JSON.stringify(record, null, 2)}\n`);
  }
}

/** The user JWT's permission claims (NATS's `pub` / `sub` allow and deny). */
function natsPermissions(permissions: SubjectPermissions) {
  const list = (values: readonly string[]) => (values.length === 0 ? undefined : [...values]);
  const side = (p: SubjectPermissions['pub']) => ({ ...(list(p.allow) ? { allow: list(p.allow) } : { deny: ['>'] }), ...(list(p.deny) && p.allow.length > 0 ? { deny: list(p.deny) } : {}) });
  return {
    pub: side(permissions.pub),
    sub: side(permissions.sub),
    ...(permissions.responses === undefined ? {} : { resp: { max: permissions.responses.max, ttl: permissions.responses.ttlMs * 1_000_000 } }),
  };
}

/**
 * Pushes an account JWT to the server's resolver over a system-account
 * connection (`$SYS.REQ.CLAIMS.UPDATE`); the server applies it at once
 * (imports, limits, revocations: revoked users are disconnected).
 */
export async function pushAccountJwt(systemConnection: NatsConnection, accountJwt: string): Promise<void> {
  let reply: string;
  try {
    reply = (await systemConnection.request('$SYS.REQ.CLAIMS.UPDATE', accountJwt, { timeout: 5_000 })).string();
  } catch (cause) {
    throw new RuntimeError('RUNTIME_BUS_AUTHORITY_MISSING', 'the NATS server did not accept the account update: is it Writ\'s server (operator mode, full resolver) and the system credential its own?', { cause });
  }
  const parsed = JSON.parse(reply) as { data?: { code?: number; message?: string }; error?: { code?: number; description?: string } };
  if (parsed.error !== undefined || (parsed.data?.code ?? 200) >= 300) {
    throw new RuntimeError('RUNTIME_BUS_AUTHORITY_MISSING', `the NATS server refused the account update: ${parsed.error?.description ?? parsed.data?.message ?? reply}`);
  }
}

export async function fileExists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Writes a secret file readable by its owner only (mode set before any content lands). */
export async function writeSecret(path: string, content: string): Promise<void> {
  await writeFile(path, '', { mode: 0o600 });
  await chmod(path, 0o600);
  await writeFile(path, content, { mode: 0o600 });
}

/** Drops undefined members so two claim sets compare by what they say. */
function canonical(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? null)) as unknown;
}
