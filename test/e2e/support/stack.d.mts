// Types of stack.mjs (plain ESM JavaScript, so the benchmark runs it without a compiler).
import type { JetStreamClient, JetStreamManager, PubAck } from '@nats-io/jetstream';
import type { MsgHdrs, NatsConnection } from '@nats-io/transport-node';
import type { EventEnvelope } from '@writ/contracts';
import type { Ed25519PublicJwk, Ed25519SigningKey } from '@writ/crypto';
import type { EventStore } from '@writ/eventstore';

export declare const REPO_ROOT: string;
export declare const SERVICES: readonly ServiceName[];
export declare const TERMINAL_ACTION_STATUSES: readonly string[];

export type ServiceName = 'projection' | 'ingress' | 'orchestrator' | 'policy' | 'approval' | 'executor' | 'receipt';

export interface StackOptions {
  /** Subject root; default `uniqueName(prefix)`. */
  readonly root?: string;
  /** Prefix of the generated root; default `e2e`. */
  readonly prefix?: string;
  /** Environment for every service, on top of the stack's own. */
  readonly env?: Readonly<Record<string, string>>;
  /** Environment per service, on top of everything else. */
  readonly serviceEnv?: Readonly<Partial<Record<ServiceName, Readonly<Record<string, string>>>>>;
  /** Which services to start; default all seven. */
  readonly services?: readonly ServiceName[];
  /** Where the per-service logs go; default `var/log/e2e/<root>/`. */
  readonly logDir?: string;
  /** Byte bound of every stream and the artifact bucket; default 64 MiB. */
  readonly maxBytes?: number;
  /** Postgres URL (database writ_test by default). */
  readonly pgUrl?: string;
  /** How long each service may take to answer /readyz 200; default 90 s. */
  readonly readyTimeoutMs?: number;
  /** Where the one-line start-up report goes; default stderr. */
  readonly log?: (line: string) => void;
  /**
   * Processes per service (one number for all, or per service); default 1. Instances share the
   * service's credential, keys and durables; several executors are several hosts (executor id
   * `<id>-<i>`, host id `host-<i>`, cells root `<cellsRoot>/host-<i>`).
   */
  readonly instances?: number | Readonly<Partial<Record<ServiceName, number>>>;
  /**
   * A JetStream cluster of this many nodes (odd, at least 3) for this stack alone, made from the
   * deployment's NATS config (scripts/nats-cluster/cluster.mjs, as root each node in its own
   * network namespace; ports from 4460/8460/6460 up), every stream with min(nodes, 3) replicas;
   * default 1: the deployment's server at WRIT_NATS_URL.
   */
  readonly natsNodes?: number;
  /**
   * Every service in ONE process (apps/serve, as `writ serve --all` and `scripts/writ-up.sh
   * --single-process` run them), each with its own credential, port and `serviceEnv`; one log,
   * `<logDir>/serve.log`, and one pid for all. stopService / killService / startService refuse.
   */
  readonly singleProcess?: boolean;
  /** Node flags for every service process (`node <nodeArgs> main.js`): V8 options NODE_OPTIONS refuses, e.g. `--optimize-for-size`. */
  readonly nodeArgs?: readonly string[];
}

export interface StartedService {
  readonly name: ServiceName;
  /** `executor`, or `executor-2` when the service runs several instances: the key of stopService, logTail... */
  readonly id: string;
  /** 1-based. */
  readonly instance: number;
  readonly port: number;
  readonly url: string;
  readonly pid: number;
  readonly logFile: string;
}

export interface Principal {
  readonly id: string;
  readonly kid: string;
  readonly key: Ed25519SigningKey;
  readonly publicJwk: Ed25519PublicJwk;
  /** The bus credential `writ principal add` issued (registered principals only; an agent's can publish its own ingress subject only). */
  readonly credsFile?: string;
}

export interface HttpAnswer {
  readonly status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON body of any shape; tests narrow it with matchers
  readonly body: any;
}

export interface StoredMessage {
  readonly seq: number;
  readonly data: Uint8Array;
  json<T = Record<string, unknown>>(): T;
  readonly headers: MsgHdrs | undefined;
}

export type ActionRequestDocument = Record<string, unknown> & { action_request_id: string };

export declare function startStack(options?: StackOptions): Promise<Stack>;
export declare function freePorts(count: number): Promise<number[]>;
export declare function residentBytes(pid: number): number | null;
export declare function jwsPayload<T = Record<string, unknown>>(jws: string): T;

export declare class Stack {
  readonly root: string;
  readonly streams: { readonly events: string; readonly ingress: string; readonly commands: string; readonly dlq: string };
  readonly bucket: string;
  readonly cellsRoot: string;
  /** The services' key directory, shared by every instance: `<principal>.seal.jwk.json`, `approval/`, `receipt/` (keyring.json and `<kid>.jwk.json`). */
  readonly keysDir: string;
  readonly logDir: string;
  readonly pgSchema: string;
  /** The projection's own Postgres role (`<schema>_projection`, scram-sha-256, its password in a 0600 file under the stack's directory). */
  readonly pgRole: string;
  readonly env: Readonly<Record<string, string>>;
  /** Each service's first instance. */
  readonly services: Readonly<Record<ServiceName, StartedService>>;
  /** Every instance of each service. */
  readonly instances: Readonly<Record<ServiceName, readonly StartedService[]>>;
  /** The servers the stack runs on, comma-separated (every node of its cluster). */
  readonly natsUrl: string;
  /** Each executor host's cells root. */
  readonly cellsRoots: readonly string[];
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly store: EventStore;
  readonly apiUrl: string;

  subject(suffix: string): string;
  /** scripts/nats-cluster/cluster.mjs on this stack's own cluster (`['status']`, `['kill', '2']`...); its stderr. */
  cluster(args: readonly string[]): Promise<string>;
  /** Stops one service (SIGTERM, SIGKILL after graceMs): what it would consume waits in its streams. */
  stopService(name: ServiceName | string, options?: { graceMs?: number }): Promise<void>;
  /** Starts a stopped service (or instance id) again on its port and waits until it is ready. */
  startService(name: ServiceName | string): Promise<void>;
  /** SIGKILL, as a crash: nothing drains or is acknowledged; resolves once the process is gone (startService brings it back). */
  killService(name: ServiceName | string): Promise<void>;
  logTail(name: ServiceName | string, lines?: number): string;
  printLogTails(lines?: number, write?: (text: string) => void): void;
  /** By instance id. */
  residentMemory(): Record<string, number | null>;

  registerPrincipal(options?: { id?: string; type?: string; roles?: readonly string[]; extractable?: boolean }): Promise<Principal>;
  cli(args: readonly string[]): Promise<string>;
  actionRequest(principal: Principal, overrides?: Record<string, unknown>): ActionRequestDocument;
  /** A request `local_edit_allowed` denies (a network write): it ends `denied` with a receipt, and nothing runs. */
  deniedActionRequest(principal: Principal, overrides?: Record<string, unknown>): ActionRequestDocument;
  sign(principal: Principal, request: unknown, options?: { key?: Ed25519SigningKey }): Promise<string>;
  submit(principal: Principal, request: ActionRequestDocument | undefined, options?: { key?: string; body?: string; subjectPrincipal?: string }): Promise<PubAck>;
  publishCommand(suffix: string, command: unknown, msgId?: string): Promise<PubAck>;
  resolutionJws(director: Principal, taskId: string, approvalId: string, decision: 'grant' | 'deny', fields?: Record<string, unknown>): Promise<string>;
  resolveApproval(director: Principal, taskId: string, approvalId: string, decision: 'grant' | 'deny', fields?: Record<string, unknown>): Promise<HttpAnswer>;

  /** `Bearer <token>` for this stack's API, signed by `principal` or, by default, the operator. */
  bearer(principal?: Principal): Promise<string>;
  /** The API as the operator, or as `init.as`, or with `init.headers.authorization` as given ('' sends none). */
  http(route: string, init?: RequestInit & { as?: Principal; headers?: Record<string, string> }): Promise<HttpAnswer>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the action row as JSON
  waitForAction(actionRequestId: string, options?: { statuses?: readonly string[]; until?: (row: any) => boolean; timeoutMs?: number }): Promise<any>;
  taskEvents(taskId: string): Promise<EventEnvelope[]>;
  /** The approval service's active signing key (what a party that stole it holds; red-team scenarios). */
  approvalKey(): Promise<Ed25519SigningKey>;
  /** A service's sealing key (`<principal>.seal.jwk.json` in the stack's key directory). */
  sealKey(principalId: string): Promise<Ed25519SigningKey>;
  entityEvents(entityType: string, entityId: string): Promise<EventEnvelope[]>;
  waitForTaskEvent(taskId: string, match: (event: EventEnvelope) => boolean, options?: { what?: string; timeoutMs?: number }): Promise<EventEnvelope>;
  waitForRoute(route: string, until: (status: number, body: Record<string, unknown>) => boolean, options?: { as?: Principal; timeoutMs?: number }): Promise<HttpAnswer>;
  eventSubjects(filter?: string): Promise<Record<string, number>>;
  streamMessages(stream: string, subject: string): Promise<StoredMessage[]>;
  waitConsumerSettled(stream: string, durable: string, seq: number, options?: { timeoutMs?: number }): Promise<true>;
  /** A query on the stack's database as the stack's own administrator. */
  pgQuery<R extends Record<string, unknown> = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<{ rows: R[] }>;
  workspaceFile(taskId: string, relative?: string): string;

  stop(options?: { keepLogs?: boolean; graceMs?: number }): Promise<string[]>;
}
