import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import type { Server } from 'node:net';
import path from 'node:path';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import { BusClient } from '@writ/bus';
import { hasErrorCode, type ActionRequest, type EventEnvelope, type PrincipalRegistered, type PrincipalRole, type RunAction } from '@writ/contracts';
import { generateEd25519Key, signClaims, type Ed25519SigningKey } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { loadOperatorSigner, registerServicePrincipal, signServiceEnrollment } from '@writ/runtime';
import { createLogger } from '@writ/telemetry';
import { connectTestNats, deleteStreams, NATS_URL, uniqueName, waitFor } from '@writ/testing';
import Docker from 'dockerode';
import { expect } from 'vitest';
import { createExecutorApp, type CreateExecutorAppOptions, type ExecutorApp } from '../src/bootstrap.js';
import { ExecutorEnv, toExecutorConfig, type ExecutorConfig } from '../src/config.js';
import { closeServer, listenAnywhere } from './recording-server.js';
import { ensureCellImage, removeTestCells, tempDir } from './test-cells.js';

const MiB = 1024 ** 2;

/** The environment of one test file's executor: unique subject root, streams and bucket, small streams, HTTP on a free port. */
export function testEnv(cellsRoot: string, env: Record<string, string> = {}): Record<string, string> {
  return {
    // The NATS the tests connect to (WRIT_NATS_URL of the shell, e.g. a worktree's own), not the service default.
    WRIT_NATS_URL: NATS_URL,
    WRIT_SUBJECT_ROOT: uniqueName('t'),
    WRIT_EVENTS_STREAM: uniqueName('EXEC_EV'),
    WRIT_INGRESS_STREAM: uniqueName('EXEC_IN'),
    WRIT_COMMANDS_STREAM: uniqueName('EXEC_CMD'),
    WRIT_DLQ_STREAM: uniqueName('EXEC_DLQ'),
    WRIT_EVENTS_MAX_BYTES: String(64 * MiB),
    WRIT_BUS_MAX_BYTES: String(64 * MiB),
    WRIT_ARTIFACTS_BUCKET: uniqueName('EXEC_ART'),
    WRIT_ARTIFACTS_MAX_BYTES: String(64 * MiB),
    WRIT_HTTP_PORT: '0',
    WRIT_CELLS_ROOT: cellsRoot,
    WRIT_BUS_PULL_EXPIRES_MS: '1000',
    WRIT_ACTION_TIMEOUT_MS: '20000',
    // The deployment's trust anchor (npm test sets it from writ init): grant issuer keys must chain to it.
    ...(process.env['WRIT_TRUST_ANCHOR'] === undefined ? {} : { WRIT_TRUST_ANCHOR: process.env['WRIT_TRUST_ANCHOR'] }),
    ...env,
  };
}

/** The operator's enrollment of a service principal (WRIT_OPERATOR_KEY, from writ init, as npm test sets it). */
export async function enrollment(principalId: string): Promise<string> {
  const operator = await loadOperatorSigner();
  if (operator === undefined) throw new Error('WRIT_OPERATOR_KEY is not set: run the tests through npm test (writ init makes the operator)');
  return signServiceEnrollment(principalId, { ...operator, now: new Date() });
}

/** A config of its own for one test file (`testEnv`, parsed as the service parses its environment). */
export function testConfig(cellsRoot: string, env: Record<string, string> = {}): ExecutorConfig {
  return toExecutorConfig(ExecutorEnv.parse(testEnv(cellsRoot, env)));
}

/** Every stream the config names, plus the artifact bucket's stream: what a test deletes afterwards. */
export function testStreams(config: ExecutorConfig): string[] {
  return [config.streams.events, config.streams.ingress, config.streams.commands, config.streams.dlq, `OBJ_${config.artifacts.bucket}`];
}

export interface Ids {
  readonly task_id: string;
  readonly step_id: string;
  readonly attempt_id: string;
}

export function newIds(label: string, taskId?: string): Ids {
  return { task_id: taskId ?? uniqueName(`task-${label}`), step_id: uniqueName('step'), attempt_id: uniqueName('attempt') };
}

/** `sh -c 'echo hello > out.txt'` as an agent would propose it, unless overridden. */
export function request(ids: Ids, overrides: Partial<ActionRequest> = {}): ActionRequest {
  return {
    action_request_id: uniqueName('ar'),
    task_id: ids.task_id,
    action_class: 'execute_command',
    target_resources: ['out.txt'],
    params: { argv: ['sh', '-c', 'echo hello > out.txt'] },
    expected_effects: ['out.txt holds hello'],
    reversibility_hint: 'reversible',
    reason: 'integration test',
    proposed_by: 'agent-test',
    proposed_at: new Date().toISOString(),
    ...overrides,
  };
}

export interface GrantSpec {
  readonly ids: Ids;
  readonly signer: Ed25519SigningKey;
  readonly actionClass?: ActionRequest['action_class'];
  readonly paths?: string[];
  readonly hosts?: string[];
  /** `resource_scope.repos` of a vcs_mutation grant. */
  readonly repos?: { repo: string; refs: string[] }[];
  readonly maxUses?: number;
  readonly issuedAt?: Date;
  readonly expiresAt?: Date;
  readonly paramsSha256?: string;
  /** Capability constraints (`secret_handles`, `timeout_ms`, …); with `paramsSha256`, its `params_sha256` is added. */
  readonly constraints?: Record<string, unknown>;
}

export interface Grant {
  readonly grant_id: string;
  readonly jws: string;
}

/** A grant minted with the real crypto, as the approval service mints one (typ writ-grant+jwt, iss and aud from the config). */
export async function mintGrant(config: ExecutorConfig, spec: GrantSpec): Promise<Grant> {
  const grantId = uniqueName('grant');
  const issuedAt = spec.issuedAt ?? new Date();
  const constraints = { ...spec.constraints, ...(spec.paramsSha256 === undefined ? {} : { params_sha256: spec.paramsSha256 }) };
  const claims = {
    task_id: spec.ids.task_id,
    step_id: spec.ids.step_id,
    attempt_id: spec.ids.attempt_id,
    action_class: spec.actionClass ?? 'execute_command',
    resource_scope: { paths: spec.paths ?? ['.'], hosts: spec.hosts ?? [], ...(spec.repos === undefined ? {} : { repos: spec.repos }) },
    max_uses: spec.maxUses ?? 1,
    issued_by_principal_id: 'writ-policy',
    policy_result_ref: `policy_result:${uniqueName('pr')}`,
    ...(Object.keys(constraints).length === 0 ? {} : { constraints }),
  };
  const jws = await signClaims(claims, spec.signer, {
    issuer: config.grant.issuer,
    audience: config.grant.audience,
    subject: config.principalId,
    jwtId: grantId,
    issuedAt,
    expiresAt: spec.expiresAt ?? new Date(issuedAt.getTime() + 300_000),
    typ: 'writ-grant+jwt',
  });
  return { grant_id: grantId, jws };
}

export function runAction(ids: Ids, grant: Grant, actionRequest: ActionRequest): RunAction {
  return { ...ids, grant_id: grant.grant_id, grant_jws: grant.jws, action_request: actionRequest };
}

export const ofType = (type: string) => (event: EventEnvelope) => event.event_type === type;

/** The event that ends a use of the grant: its `execution.completed`, or its `grant.refused`. */
export const endOfUse = (grantId: string) => (event: EventEnvelope) =>
  (event.event_type === 'execution.completed' && event.payload['grant_id'] === grantId) || (event.event_type === 'grant.refused' && event.entity_id === grantId);

/** Asserts that `pending` is refused with the error code `code` (a code, never a message); resolves with the refusal's message for a test that reads it. */
export async function expectRefused(code: string, pending: Promise<unknown>): Promise<string> {
  const error = await pending.then(
    () => new Error('the request was accepted'),
    (failure: unknown) => failure,
  );
  expect(hasErrorCode(error, code), `expected ${code}, got ${String(error)}`).toBe(true);
  return error instanceof Error ? error.message : String(error);
}

/** A principal registered in the log with a signing key of its own. */
export interface User {
  readonly id: string;
  readonly key: Ed25519SigningKey;
}

export interface OpenOptions {
  /** Prefixes of the temporary cells roots, one per host; the first is `cellsRoot`, the config's. */
  readonly cellsRoots: readonly string[];
  /** Overrides of `testEnv`. */
  readonly env?: Record<string, string>;
  /** Build the cell image when Docker lacks it (default true; false where no cell runs). */
  readonly cellImage?: boolean;
}

export interface StartOptions extends OpenOptions {
  /** One executor per id, started in turn and competing for the same durable as replicas of a deploy do (default: one, with the config's own id). */
  readonly executorIds?: readonly [string, ...string[]];
  /** Options of each executor started (its cells and egress networks carry the rig's label whatever these say). */
  readonly app?: CreateExecutorAppOptions;
  /** Registers the grant issuer with a new key of this kid (`approvalKey`). */
  readonly approval?: { readonly kid: string; readonly displayName: string };
}

export const quietLogger = createLogger('executor-test', { level: 'silent' });

/** docker0's address: the test host names resolve here (a granted name may not resolve to loopback). */
export const EGRESS_TARGET = '172.17.0.1';

/** The egress proxy's resolver in tests: every `*.egress.test` name is this host, as a cell reaches it. */
export const egressTestLookup = async (host: string): Promise<string[]> => (host.endsWith('.egress.test') ? [EGRESS_TARGET] : []);

/**
 * One test file's executors against the real NATS and Docker Engine: a test-unique subject root,
 * streams and bucket (deleted by `close`), temporary cells roots, and cells and egress networks
 * labelled `writ.test=<run>` (removed by `close`). Specs keep their given / when / then; the rig
 * holds what they all start, read, publish and wait on.
 */
export class ExecutorRig {
  /** The `writ.test` label value of every cell and egress network this file's executors make. */
  readonly run = randomBytes(5).toString('hex');
  readonly docker = new Docker();
  nc!: NatsConnection;
  jsm!: JetStreamManager;
  config!: ExecutorConfig;
  /** `testEnv` as `config` was parsed from (for an executor started as a process). */
  env: Record<string, string> = {};
  /** The temporary cells roots, one per host, in the order `open` was given their prefixes. */
  readonly cellsRoots: string[] = [];
  store!: EventStore;
  client!: BusClient;
  /** The grant issuer's key registered by `openLog` / `registerApprovalKey`: `mint` signs with it unless told otherwise. */
  approvalKey!: Ed25519SigningKey;
  readonly #running = new Set<ExecutorApp>();
  readonly #servers: Server[] = [];
  readonly #dirs: string[] = [];

  get cellsRoot(): string {
    const [first] = this.cellsRoots;
    if (first === undefined) throw new Error('the rig has no cells root: call open() first');
    return first;
  }

  /** Builds the cell image if missing, connects to NATS and makes the cells roots and the config. */
  async open(name: string, options: OpenOptions): Promise<ExecutorConfig> {
    if (options.cellImage !== false) await ensureCellImage(this.docker);
    this.nc = await connectTestNats(name);
    this.jsm = await jetstreamManager(this.nc);
    for (const prefix of options.cellsRoots) this.cellsRoots.push(await this.tempDir(prefix));
    this.env = testEnv(this.cellsRoot, options.env);
    this.config = toExecutorConfig(ExecutorEnv.parse(this.env));
    return this.config;
  }

  /** What most specs set up: `open`, the executors, then `openLog`. */
  async start(name: string, options: StartOptions): Promise<[ExecutorApp, ...ExecutorApp[]]> {
    await this.open(name, options);
    const [first, ...others] = options.executorIds ?? [this.config.executorId];
    const apps: [ExecutorApp, ...ExecutorApp[]] = [await this.startExecutor({ executorId: first }, options.app)];
    for (const executorId of others) apps.push(await this.startExecutor({ executorId }, options.app));
    await this.openLog(options.approval);
    return apps;
  }

  /** A temporary directory removed by `close`. */
  async tempDir(prefix: string): Promise<string> {
    const dir = await tempDir(prefix);
    this.#dirs.push(dir);
    return dir;
  }

  /** A secrets directory (`WRIT_SECRETS_DIR`): one file per handle, its value and a newline, readable by its owner only; removed by `close`. */
  async secretsDir(prefix: string, secrets: Record<string, string>): Promise<string> {
    const dir = await this.tempDir(prefix);
    for (const [handle, value] of Object.entries(secrets)) await writeFile(path.join(dir, handle), `${value}\n`, { mode: 0o600 });
    return dir;
  }

  /** Listens on every address on a free port (a cell reaches the host through docker0, never loopback); `close` closes the server. */
  listen(server: Server): Promise<number> {
    this.#servers.push(server);
    return listenAnywhere(server);
  }

  /** Starts an executor in this process on the file's config (with `overrides`): its cells and egress networks labelled, silent unless given a logger. */
  async startExecutor(overrides: Partial<ExecutorConfig> = {}, options: CreateExecutorAppOptions = {}): Promise<ExecutorApp> {
    const labels = { 'writ.test': this.run };
    const app = await createExecutorApp(
      { ...this.config, ...overrides },
      {
        logger: quietLogger,
        busLogger: quietLogger,
        nestLogLevels: false,
        ...options,
        cells: { ...options.cells, labels },
        ...(options.egress === undefined ? {} : { egress: { ...options.egress, labels } }),
      },
    );
    this.#running.add(app);
    return app;
  }

  /** A graceful stop of one executor (a test taking a host away); `close` stops the others. */
  async stopExecutor(app: ExecutorApp): Promise<void> {
    this.#running.delete(app);
    await app.close();
  }

  /** Opens the event log and a bus client; with `approval`, registers the grant issuer with a new key (`approvalKey`). */
  async openLog(approval?: { kid: string; displayName: string }): Promise<void> {
    this.store = await EventStore.open(this.nc, { stream: this.config.streams.events, subjectPrefix: this.config.subjects.eventsPrefix, maxBytes: 64 * MiB });
    this.client = new BusClient(this.nc);
    if (approval !== undefined) await this.registerApprovalKey(approval.kid, approval.displayName);
  }

  /** Registers the grant issuer (`WRIT_GRANT_ISSUER`) in the log with a new key, as the approval service does at its start. */
  async registerApprovalKey(kid: string, displayName: string): Promise<Ed25519SigningKey> {
    this.approvalKey = await generateEd25519Key({ kid });
    // Enrolled by the operator, as `writ init` enrolls the approval service: the executor trusts its key only so.
    const authorization = await enrollment(this.config.grant.issuer);
    await registerServicePrincipal(this.store, { principalId: this.config.grant.issuer, displayName, key: this.approvalKey, authorization });
    return this.approvalKey;
  }

  /** Registers a principal (`principal.registered`, one key) as the CLI does. */
  async registerUser(roles: PrincipalRole[], principalType: PrincipalRegistered['principal_type'] = 'user', id = uniqueName('user')): Promise<User> {
    const key = await generateEd25519Key({ kid: `${id}-k1` });
    const at = new Date().toISOString();
    const payload: PrincipalRegistered = { principal_id: id, principal_type: principalType, display_name: id, roles, keys: [key.publicJwk], registered_by: 'test', at };
    await this.store.appendToEntity(
      'principal',
      id,
      [{ event_id: uniqueName('evt'), schema_version: 1, event_type: 'principal.registered', entity_type: 'principal', entity_id: id, occurred_at: at, actor_type: 'system', actor_id: 'test', payload, causation_id: null, correlation_id: id }],
      0,
    );
    return { id, key };
  }

  /** A grant for this file's executors, signed by `approvalKey` unless the spec names a signer. */
  mint(spec: Omit<GrantSpec, 'signer'> & { signer?: Ed25519SigningKey }): Promise<Grant> {
    return mintGrant(this.config, { ...spec, signer: spec.signer ?? this.approvalKey });
  }

  /** Publishes on the RunAction subject (anything: a test may publish what is not a RunAction) and resolves with its stream sequence. */
  async publishRunAction(command: RunAction | Record<string, unknown>, msgId = uniqueName('msg')): Promise<number> {
    return (await this.client.publish(this.config.subjects.run, command, { msgId })).seq;
  }

  /** The task stream's events, in order. */
  async events(taskId: string): Promise<EventEnvelope[]> {
    return (await this.store.read(taskId)).map((stored) => stored.event);
  }

  /** The cell's own stream's events, in order. */
  async cellEvents(cellId: string): Promise<EventEnvelope[]> {
    return (await this.store.readEntity('cell', cellId)).map((stored) => stored.event);
  }

  /** Waits until the task stream holds an event `match` accepts, and resolves with the first. */
  waitForTaskEvent(taskId: string, what: string, match: (event: EventEnvelope) => boolean, { timeoutMs = 60_000, intervalMs = 50 } = {}): Promise<EventEnvelope> {
    return waitFor(async () => (await this.events(taskId)).find(match), { what, timeoutMs, intervalMs });
  }

  /** Waits until a durable of the commands stream has settled everything up to `seq` (acked or dead-lettered) and has nothing pending. */
  async waitSettled(seq: number, options: { durable?: string; what?: string; timeoutMs?: number; intervalMs?: number } = {}): Promise<void> {
    const { durable = this.config.durable, what = `the executor durable ${durable} to settle at ${seq}`, timeoutMs = 60_000, intervalMs = 50 } = options;
    await waitFor(
      async () => {
        const info = await this.jsm.consumers.info(this.config.streams.commands, durable);
        return info.ack_floor.stream_seq >= seq && info.num_pending === 0 && info.num_ack_pending === 0 ? true : undefined;
      },
      { what, timeoutMs, intervalMs },
    );
  }

  /** An artifact's bytes from the object store, by content hash (null when it is not there). */
  async objectBytes(sha256: string): Promise<Uint8Array | null> {
    const bucket = await new Objm(this.nc).open(this.config.artifacts.bucket);
    return bucket.getBlob(`sha256-${sha256}`);
  }

  /** Where a file of the task's workspace is on the host (under the first cells root unless told). */
  hostFile(taskId: string, relative: string, root = this.cellsRoot): string {
    return path.join(root, taskId, 'workspace', relative);
  }

  /** Stops the executors still running and the servers it listened on, removes the labelled cells and networks, the streams and bucket, and the temporary directories. */
  async close(): Promise<void> {
    await Promise.all([...this.#running].map((app) => app.close()));
    this.#running.clear();
    for (const server of this.#servers.splice(0)) await closeServer(server);
    await removeTestCells(this.run, this.#dirs.splice(0), this.docker);
    if (this.nc) {
      await this.client?.close();
      if (this.config) await deleteStreams(this.nc, ...testStreams(this.config));
      await this.nc.close();
    }
  }
}
