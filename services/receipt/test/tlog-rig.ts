import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { BusClient } from '@writ/bus';
import {
  IssueReceipt,
  PolicyEvaluated,
  ReceiptIssued,
  SignedTreeHead,
  TREE_HEAD_JWS_TYPE,
  TransparencyLogEntryAppended,
  parseReceipt,
  type ActionRequest,
  type EventEnvelope,
  type PrincipalKeyAdded,
  type PrincipalRegistered,
  type TransparencyLogReceiptRefused,
} from '@writ/contracts';
import { KeySet, canonicalJson, generateEd25519Key, importEd25519PublicJwk, sha256Hex, signJws, verifyJws, type Ed25519SigningKey } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { ServiceKeyring } from '@writ/runtime';
import { createLogger } from '@writ/telemetry';
import { NATS_URL, connectTestNats, deleteStreams, uniqueName, waitFor } from '@writ/testing';
import type { ReceiptOutcome } from '../src/application/tlog-keeper.js';
import { createReceiptApp, type ReceiptApp } from '../src/bootstrap.js';
import { loadReceiptConfig, type ReceiptConfig } from '../src/config.js';

/**
 * The real receipt service in this process against the real NATS, on a
 * test-unique subject root and streams (deleted by `stop`). Tests seed task
 * streams with what upstream services would have appended, ask for receipts
 * with the real command, and read the transparency log's own stream.
 */

const MiB = 1024 ** 2;
const quiet = createLogger('receipt-tlog-test', { level: 'silent' });

export interface SeededAttempt {
  readonly taskId: string;
  readonly stepId: string;
  readonly attemptId: string;
}

/** One receipt the sequencer handled, and how. */
export interface Sequenced {
  readonly receiptId: string;
  readonly outcome: ReceiptOutcome;
}

/** How `appendReceiptDirectly` signs: with the receipt service's own active key (as the service would), or as a forger. */
export type DirectSigner =
  | { readonly kind: 'service' }
  | { readonly kind: 'throwaway' }
  | { readonly kind: 'garbage' }
  | { readonly kind: 'key'; readonly key: Ed25519SigningKey };

export class TlogRig {
  readonly root = uniqueName('t');
  readonly streams = { events: uniqueName('EVT'), ingress: uniqueName('ING'), commands: uniqueName('CMD'), dlq: uniqueName('DLQ') };
  nc!: NatsConnection;
  store!: EventStore;
  bus!: BusClient;
  #keyDir = '';
  readonly #apps = new Set<ReceiptApp>();

  async start(): Promise<void> {
    this.nc = await connectTestNats('receipt-tlog-int');
    this.#keyDir = await mkdtemp(join(tmpdir(), 'writ-receipt-tlog-'));
    this.store = await EventStore.open(this.nc, { stream: this.streams.events, subjectPrefix: `${this.root}.evt`, maxBytes: 64 * MiB });
    this.bus = new BusClient(this.nc);
  }

  async stop(): Promise<void> {
    for (const app of this.#apps) await app.close().catch(() => undefined);
    await this.bus?.close();
    if (this.nc !== undefined) {
      await deleteStreams(this.nc, this.streams.events, this.streams.ingress, this.streams.commands, this.streams.dlq);
      await this.nc.close();
    }
    await rm(this.#keyDir, { recursive: true, force: true });
  }

  /** The service's config on this rig's streams: one key directory for every instance (replicas share the service key); `env` adds or overrides variables. */
  config(logId: string, treeHeadIntervalMs = 200, env: Readonly<Record<string, string>> = {}): ReceiptConfig {
    return loadReceiptConfig({
      WRIT_NATS_URL: NATS_URL,
      WRIT_HTTP_PORT: '0',
      WRIT_HTTP_HOST: '127.0.0.1',
      WRIT_SUBJECT_ROOT: this.root,
      WRIT_EVENTS_STREAM: this.streams.events,
      WRIT_INGRESS_STREAM: this.streams.ingress,
      WRIT_COMMANDS_STREAM: this.streams.commands,
      WRIT_DLQ_STREAM: this.streams.dlq,
      WRIT_EVENTS_MAX_BYTES: String(64 * MiB),
      WRIT_BUS_MAX_BYTES: String(64 * MiB),
      WRIT_RECEIPT_KEY_FILE: join(this.#keyDir, 'receipt.jwk.json'),
      WRIT_TLOG_ID: logId,
      WRIT_TLOG_STH_INTERVAL_MS: String(treeHeadIntervalMs),
      ...env,
    });
  }

  /**
   * Starts an instance (closed by `stop` unless closed before); `sequenced` collects what its
   * sequencer did with each receipt; `clock` is the service's (receipts, heads, key rotation and
   * retirement); `env` adds or overrides variables.
   */
  async startService(
    logId: string,
    options: { treeHeadIntervalMs?: number; sequenced?: Sequenced[]; clock?: () => Date; env?: Readonly<Record<string, string>> } = {},
  ): Promise<ReceiptApp> {
    const app = await createReceiptApp(this.config(logId, options.treeHeadIntervalMs, options.env), {
      logger: quiet,
      pullExpiresMs: 1_000,
      onSequenced: (receiptId, outcome) => options.sequenced?.push({ receiptId, outcome }),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    });
    this.#apps.add(app);
    return app;
  }

  async closeService(app: ReceiptApp): Promise<void> {
    await app.close();
    this.#apps.delete(app);
  }

  get subjects(): { issue: string; treeHead: string; inclusionProof: string; consistencyProof: string; rotateKey: string } {
    const q = `${this.root}.qry.receipt`;
    return {
      issue: `${this.root}.cmd.receipt.issue`,
      treeHead: `${q}.tree-head`,
      inclusionProof: `${q}.inclusion-proof`,
      consistencyProof: `${q}.consistency-proof`,
      rotateKey: `${q}.rotate-key`,
    };
  }

  /** A task whose attempt policy denied: the smallest history a receipt is issued for. */
  async seedDeniedAttempt(taskId = uniqueName('task')): Promise<SeededAttempt> {
    const attempt = { taskId, stepId: uniqueName('step'), attemptId: uniqueName('att') };
    const request: ActionRequest = {
      action_request_id: uniqueName('ar'),
      task_id: taskId,
      action_class: 'execute_command',
      target_resources: ['src'],
      params: { argv: ['make', 'deploy'], cwd: 'src' },
      expected_effects: ['a deployment'],
      reversibility_hint: 'irreversible',
      reason: 'deploy',
      proposed_by: 'agent-1',
      proposed_at: new Date().toISOString(),
    };
    const policyResultId = uniqueName('pr');
    const now = new Date().toISOString();
    const policy = PolicyEvaluated.parse({
      policy_result: {
        policy_result_id: policyResultId,
        task_id: taskId,
        step_id: attempt.stepId,
        attempt_id: attempt.attemptId,
        action_request_id: request.action_request_id,
        outcome: 'deny',
        action_class: 'execute_command',
        risk_band: 'high',
        action_summary: 'execute_command: make deploy',
        risk_summary: 'deploys',
        policy_profile_ref: 'policy:local_edit_allowed',
        policy_version: 'v1',
        affected_resources: ['src'],
        reasoning_summary: 'make is not on the allowlist',
        matched_rules: ['commands'],
        witness_required: false,
        revalidation_conditions: [],
        evaluated_at: now,
        evaluated_by: 'writ-policy',
      },
      decision: {
        decision_id: uniqueName('dec'),
        task_id: taskId,
        step_id: attempt.stepId,
        attempt_id: attempt.attemptId,
        decision_type: 'execution',
        summary: 'policy deny',
        rationale: 'profile rules',
        evidence_refs: [],
        risk_level: 'high',
        decided_by: 'writ-policy',
        reversible: true,
        created_at: now,
      },
    });
    const head = await this.store.head(taskId);
    await this.store.append(
      taskId,
      [
        this.#draft(attempt, 'attempt.awaiting_policy', { type: 'attempt', id: attempt.attemptId }, { action_request: request, at: now }),
        this.#draft(attempt, 'policy.evaluated', { type: 'policy', id: policyResultId }, policy),
      ],
      head.taskSeq,
    );
    return attempt;
  }

  /** Asks the receipt service (whichever instance takes it) for the attempt's denial receipt. */
  async issue(attempt: SeededAttempt): Promise<void> {
    const command = IssueReceipt.parse({ task_id: attempt.taskId, step_id: attempt.stepId, attempt_id: attempt.attemptId, cause: 'policy_denied' });
    await this.bus.publish(this.subjects.issue, command, { msgId: `${attempt.attemptId}:receipt` });
  }

  /** The task's receipt.issued events, once there are `count`. */
  async receiptsOf(taskId: string, count = 1): Promise<{ event: EventEnvelope; streamSeq: number; issued: ReceiptIssued }[]> {
    return waitFor(
      async () => {
        const found = (await this.store.read(taskId))
          .filter(({ event }) => event.event_type === 'receipt.issued')
          .map(({ event, streamSeq }) => ({ event, streamSeq, issued: ReceiptIssued.parse(event.payload) }));
        return found.length >= count ? found : undefined;
      },
      { what: `${count} receipt(s) on ${taskId}`, timeoutMs: 30_000 },
    );
  }

  /** The receipt service's active signing key, as its key directory (shared by every instance of the rig) holds it. */
  async serviceKey(): Promise<Ed25519SigningKey> {
    const { keyring } = await ServiceKeyring.open({ dir: join(this.#keyDir, 'receipt'), newKid: () => 'never-generated' });
    return keyring.active;
  }

  /**
   * Appends a `receipt.issued` straight to a task stream, around the receipt
   * service: as if it had crashed right after appending it (`signer: service`,
   * the default: signed with its own key), or as a forger would (a throwaway
   * key, or a garbage signature; the body always hashes to its receipt_hash).
   */
  async appendReceiptDirectly(
    taskId = uniqueName('task'),
    options: { signer?: DirectSigner; createdAt?: string; receiptId?: string } = {},
  ): Promise<{ receiptId: string; receiptHash: string; taskId: string; eventId: string; streamSeq: number }> {
    const signer = options.signer ?? { kind: 'service' };
    const key = signer.kind === 'service' ? await this.serviceKey() : signer.kind === 'key' ? signer.key : await generateEd25519Key({ kid: uniqueName('k') });
    const body = {
      receipt_id: options.receiptId ?? uniqueName('rct'),
      task_id: taskId,
      step_id: uniqueName('step'),
      attempt_id: uniqueName('att'),
      receipt_class: 'command_execution' as const,
      action_request_ref: `action_request:${uniqueName('ar')}`,
      input_refs: [],
      environment_ref: null,
      policy_result_ref: null,
      approval_ref: null,
      capability_grant_ref: null,
      output_refs: [],
      result_code: 'refused' as const,
      result_summary: 'refused: appended by the test around the receipt service',
      created_at: options.createdAt ?? new Date().toISOString(),
      verifiability: 'signed' as const,
      signer_ref: signer.kind === 'garbage' ? (await this.serviceKey()).kid : key.kid,
      prev_receipt_hash: null,
    };
    const canonical = canonicalJson(body);
    let jws = await signJws(canonical, key, { typ: 'writ-receipt+jws' });
    const [header, payload, signature] = jws.split('.');
    if (signer.kind === 'garbage') jws = `${header}.${payload}.${Buffer.from('not a signature at all, just bytes of garbage'.repeat(2)).toString('base64url')}`;
    const receipt = parseReceipt({ ...body, receipt_hash: sha256Hex(canonical), signature: `${header}..${jws.split('.')[2] ?? signature}` });
    const head = await this.store.head(taskId);
    const attempt = { taskId, stepId: body.step_id, attemptId: body.attempt_id };
    const result = await this.store.append(taskId, [this.#draft(attempt, 'receipt.issued', { type: 'receipt', id: body.receipt_id }, { receipt, jws, cause: 'refused' })], head.taskSeq);
    const [stored] = result.events;
    return { receiptId: body.receipt_id, receiptHash: receipt.receipt_hash ?? '', taskId, eventId: stored?.eventId ?? '', streamSeq: stored?.streamSeq ?? 0 };
  }

  /** The log's refusals (`tlog.receipt_refused`), as stored. */
  async refusals(logId: string): Promise<TransparencyLogReceiptRefused[]> {
    return (await this.tlogEvents(logId)).filter((event) => event.event_type === 'tlog.receipt_refused').map((event) => event.payload as TransparencyLogReceiptRefused);
  }

  /** The log's events, as stored. */
  async tlogEvents(logId: string): Promise<EventEnvelope[]> {
    return (await this.store.readEntity('transparency_log', logId)).map(({ event }) => event);
  }

  async entries(logId: string): Promise<TransparencyLogEntryAppended[]> {
    return (await this.tlogEvents(logId)).filter((event) => event.event_type === 'tlog.entry_appended').map((event) => TransparencyLogEntryAppended.parse(event.payload));
  }

  async heads(logId: string): Promise<SignedTreeHead[]> {
    return (await this.tlogEvents(logId)).filter((event) => event.event_type === 'tlog.tree_head_signed').map((event) => SignedTreeHead.parse(event.payload));
  }

  /** Waits until the log holds at least `count` leaves; returns its entries. */
  async entriesAtLeast(logId: string, count: number): Promise<TransparencyLogEntryAppended[]> {
    return waitFor(
      async () => {
        const entries = await this.entries(logId);
        return entries.length >= count ? entries : undefined;
      },
      { what: `${count} leaves in ${logId}`, timeoutMs: 30_000, intervalMs: 50 },
    );
  }

  /** The receipt principal's keys as the log publishes them: the trust material of every verifier. */
  async receiptKeys(principalId: string): Promise<KeySet> {
    const jwks = [];
    for (const { event } of await this.store.readEntity('principal', principalId)) {
      if (event.event_type === 'principal.registered') jwks.push(...(event.payload as PrincipalRegistered).keys);
      if (event.event_type === 'principal.key_added') jwks.push((event.payload as PrincipalKeyAdded).key);
    }
    return KeySet.of(await Promise.all(jwks.map((jwk) => importEd25519PublicJwk(jwk))));
  }

  /** Verifies a signed tree head's JWS against the receipt principal's keys; returns the signed payload. */
  async verifyHead(head: SignedTreeHead, principalId: string): Promise<string> {
    const verified = await verifyJws(head.jws, await this.receiptKeys(principalId), { typ: TREE_HEAD_JWS_TYPE });
    if (verified.kid !== head.signer_ref) throw new Error(`head signed by ${verified.kid}, not its signer_ref ${head.signer_ref}`);
    return new TextDecoder().decode(verified.payload);
  }

  #draft(attempt: SeededAttempt, eventType: string, entity: { type: EventEnvelope['entity_type']; id: string }, payload: object) {
    return {
      event_id: uniqueName('evt'),
      schema_version: 1,
      event_type: eventType,
      entity_type: entity.type,
      entity_id: entity.id,
      step_id: attempt.stepId,
      attempt_id: attempt.attemptId,
      occurred_at: new Date().toISOString(),
      actor_type: 'service' as const,
      actor_id: 'test',
      payload: payload as Record<string, unknown>,
      causation_id: null,
      correlation_id: attempt.taskId,
    };
  }
}
