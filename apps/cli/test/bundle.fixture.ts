import type { ApprovalResolution, BundlePrincipal, EventEnvelope, InclusionProof, PrincipalRole, PublicEd25519Jwk, ReceiptBundle, SignedTreeHead, TrustAnchor } from '@writ/contracts';
import {
  bytesToHex,
  canonicalJson,
  generateEd25519Key,
  hexToBytes,
  inclusionProof,
  merkleLeafHash,
  merkleRoot,
  sha256Hex,
  signClaims,
  signJws,
  type Ed25519SigningKey,
} from '@writ/crypto';
import { GENESIS, sealEvent, type ChainLink } from '@writ/eventstore';
import { assembleBundle } from '../src/evidence/assemble-bundle.js';
import { approvalPacketHash, signServiceEnrollment, signedPrincipalRegistration } from '@writ/runtime';

/**
 * A real-shaped receipt bundle, built with real keys and the same hashing and
 * signing as the services (receipt-seal, grant-signer, the event store's
 * sealEvent): a task whose first attempt needed approval, was granted and ran
 * (two receipts: the approval resolution and the settled action, signed with
 * the receipt service's first key), then a key rotation (the first key
 * retired), then a second attempt denied by policy (receipted with the new
 * key). The tree head is signed with the new key over a log that holds other
 * tasks' receipts too.
 */

export const TASK_ID = 'task-bundle-1';
export const RECEIPT_PRINCIPAL = 'writ-receipt';
export const APPROVAL_PRINCIPAL = 'writ-approval';
/** The trust anchor's principal (writ init's first operator). */
export const OPERATOR_PRINCIPAL = 'operator';
export const LOG_ID = 'writ-receipts';
const RECEIPT_JWS_TYPE = 'writ-receipt+jws';
const TREE_HEAD_JWS_TYPE = 'writ-tree-head+jws';

export const TIMES = {
  registered: '2031-03-01T09:00:00.000Z',
  attempt1: '2031-03-01T10:00:00.000Z',
  granted: '2031-03-01T10:05:00.000Z',
  executed: '2031-03-01T10:06:00.000Z',
  receipted1: '2031-03-01T10:07:00.000Z',
  rotated: '2031-03-01T12:00:00.000Z',
  attempt2: '2031-03-01T13:00:00.000Z',
  receipted2: '2031-03-01T13:01:00.000Z',
  retired: '2031-03-02T12:00:00.000Z',
  head: '2031-03-02T13:00:00.000Z',
} as const;

export interface BundleKeys {
  readonly receiptOld: Ed25519SigningKey;
  readonly receiptNew: Ed25519SigningKey;
  readonly approval: Ed25519SigningKey;
  /** `director-1` (role director), who grants the approval. */
  readonly director: Ed25519SigningKey;
  /** `observer-1` (role observer): registered, never a director. */
  readonly observer: Ed25519SigningKey;
  /** `agent-1` (an agent holding the director role): the requester of the action. */
  readonly agent: Ed25519SigningKey;
  /** `operator`: the trust anchor's key, which signs every registration and the services' enrollments. */
  readonly operator: Ed25519SigningKey;
}

export async function bundleKeys(): Promise<BundleKeys> {
  return {
    receiptOld: await generateEd25519Key({ kid: 'writ-receipt-k1' }),
    receiptNew: await generateEd25519Key({ kid: 'writ-receipt-k2' }),
    approval: await generateEd25519Key({ kid: 'writ-approval-k1' }),
    director: await generateEd25519Key({ kid: 'director-1-k1' }),
    observer: await generateEd25519Key({ kid: 'observer-1-k1' }),
    agent: await generateEd25519Key({ kid: 'agent-1-k1' }),
    operator: await generateEd25519Key({ kid: 'operator-k1' }),
  };
}

export interface FixtureOptions {
  /** Principals appended with no authorization (as a bus credential alone can append them): they chain to no operator. */
  readonly unauthorized?: readonly string[];
  /** Who signs a principal's registration instead of the operator (its key must sign it). */
  readonly registrars?: Readonly<Record<string, { readonly principalId: string; readonly key: Ed25519SigningKey }>>;
  /** Leave the trust anchor out of the bundle (as bundles exported before it). */
  readonly noTrustAnchor?: boolean;
  /** `created_at` of the second receipt (default: after the rotation, signed by the new key). */
  readonly secondReceiptAt?: string;
  /** Sign the second receipt with this key instead of the new one. */
  readonly secondReceiptKey?: Ed25519SigningKey;
  /** Sign the grant with this key instead of the approval key. */
  readonly grantKey?: Ed25519SigningKey;
  /** Extra input refs of the settled receipt (e.g. one that resolves nowhere). */
  readonly extraInputRefs?: readonly string[];
  /** The settled receipt's attestation (default: the environment as recorded). */
  readonly attestation?: Record<string, unknown>;
  /** Sign the tree head with this key. */
  readonly headKey?: Ed25519SigningKey;
  /**
   * How `approval.granted` carries its resolution (default: director-1's signed grant over the
   * packet): `unsigned` records none; `by` names another resolver (observer-1, agent-1) who signs
   * with its own key; `fields` change what is signed.
   */
  readonly resolution?: { readonly unsigned?: boolean; readonly by?: 'director-1' | 'observer-1' | 'agent-1'; readonly fields?: Partial<ApprovalResolution> };
}

/** Appends drafts to a chain the way the event store does. */
class Chain {
  readonly events: EventEnvelope[] = [];
  #link: ChainLink = GENESIS;
  #n = 0;
  constructor(private readonly aggregateId: string) {}

  append(draft: { event_type: string; entity_type: EventEnvelope['entity_type']; entity_id: string; occurred_at: string; actor_id: string; payload: Record<string, unknown>; attempt_id?: string }): EventEnvelope {
    this.#n += 1;
    const event = sealEvent(
      {
        event_id: `evt-${this.aggregateId}-${this.#n}`,
        schema_version: 1,
        event_type: draft.event_type,
        entity_type: draft.entity_type,
        entity_id: draft.entity_id,
        step_id: 'step-1',
        ...(draft.attempt_id === undefined ? {} : { attempt_id: draft.attempt_id }),
        occurred_at: draft.occurred_at,
        actor_type: 'service',
        actor_id: draft.actor_id,
        payload: draft.payload,
        causation_id: null,
        correlation_id: this.aggregateId,
      },
      this.aggregateId,
      this.#link,
    );
    this.#link = { taskSeq: event.task_seq, hash: event.hash };
    this.events.push(event);
    return event;
  }

  /** The chain head a receipt built now binds (the receipt service's `event_chain_head`). */
  head(): { task_seq: number; event_hash: string } {
    const last = this.events.at(-1);
    if (last === undefined) throw new Error(`chain ${this.aggregateId} is empty: a receipt needs an event before it`);
    return { task_seq: last.task_seq, event_hash: last.hash };
  }
}

function principalEvents(principalId: string, steps: { type: string; at: string; payload: Record<string, unknown> }[]): BundlePrincipal {
  const chain = new Chain(principalId);
  for (const step of steps) chain.append({ event_type: step.type, entity_type: 'principal', entity_id: principalId, occurred_at: step.at, actor_id: principalId, payload: step.payload });
  return { principal_id: principalId, events: chain.events };
}

/** `<header>..<signature>`. */
function detached(jws: string): string {
  const [header, , signature] = jws.split('.');
  return `${header}..${signature}`;
}

async function sealReceipt(body: Record<string, unknown>, key: Ed25519SigningKey): Promise<{ receipt: Record<string, unknown>; jws: string }> {
  const canonical = canonicalJson(body);
  const jws = await signJws(canonical, key, { typ: RECEIPT_JWS_TYPE });
  return { receipt: { ...body, receipt_hash: sha256Hex(canonical), signature: detached(jws) }, jws };
}

const contentRef = (value: unknown) => `sha256:${sha256Hex(canonicalJson(value))}`;

export interface Fixture {
  readonly bundle: ReceiptBundle;
  readonly keys: BundleKeys;
  readonly events: readonly EventEnvelope[];
  readonly principals: readonly BundlePrincipal[];
  readonly proofs: ReadonlyMap<string, InclusionProof>;
  readonly treeHead: SignedTreeHead;
  /** The log's leaves (receipt hashes, hex) in order. */
  readonly leaves: readonly string[];
}

export async function buildFixture(keys: BundleKeys, options: FixtureOptions = {}): Promise<Fixture> {
  const operator = { principalId: OPERATOR_PRINCIPAL, key: keys.operator };
  // What the services and ingress append: each key registration with its operator's authorization (or none, when asked).
  const authorized = (id: string, jws: string) => (options.unauthorized?.includes(id) === true ? {} : { authorization: jws });
  const enrolled = async (id: string) => signServiceEnrollment(id, { ...operator, now: new Date(Date.parse(TIMES.registered) - 60_000) });
  const receiptEnrollment = await enrolled(RECEIPT_PRINCIPAL);
  const approvalEnrollment = await enrolled(APPROVAL_PRINCIPAL);
  const registered = async (id: string, type: 'user' | 'agent', roles: readonly PrincipalRole[], key: Ed25519SigningKey) => {
    const payload = await signedPrincipalRegistration(
      { principal_id: id, principal_type: type, display_name: id, roles: [...roles], keys: [key.publicJwk as PublicEd25519Jwk] },
      { ...(options.registrars?.[id] ?? operator), now: new Date(TIMES.registered) },
    );
    if (options.unauthorized?.includes(id) === true) delete (payload as { authorization?: string }).authorization;
    return principalEvents(id, [{ type: 'principal.registered', at: TIMES.registered, payload }]);
  };
  const principals = [
    principalEvents(RECEIPT_PRINCIPAL, [
      {
        type: 'principal.registered',
        at: TIMES.registered,
        payload: {
          principal_id: RECEIPT_PRINCIPAL,
          principal_type: 'service',
          display_name: 'Writ receipt service',
          roles: [],
          keys: [keys.receiptOld.publicJwk],
          registered_by: RECEIPT_PRINCIPAL,
          at: TIMES.registered,
          ...authorized(RECEIPT_PRINCIPAL, receiptEnrollment),
        },
      },
      {
        type: 'principal.key_added',
        at: TIMES.rotated,
        payload: {
          key: keys.receiptNew.publicJwk,
          added_by: 'director-1',
          at: TIMES.rotated,
          replaces: { kid: keys.receiptOld.kid, retire_after: TIMES.retired },
          ...authorized(RECEIPT_PRINCIPAL, receiptEnrollment),
        },
      },
      { type: 'principal.key_revoked', at: TIMES.retired, payload: { kid: keys.receiptOld.kid, reason: 'rotated', revoked_by: RECEIPT_PRINCIPAL, at: TIMES.retired } },
    ]),
    principalEvents(APPROVAL_PRINCIPAL, [
      {
        type: 'principal.registered',
        at: TIMES.registered,
        payload: {
          principal_id: APPROVAL_PRINCIPAL,
          principal_type: 'service',
          display_name: 'Writ approval service',
          roles: [],
          keys: [keys.approval.publicJwk],
          registered_by: APPROVAL_PRINCIPAL,
          at: TIMES.registered,
          ...authorized(APPROVAL_PRINCIPAL, approvalEnrollment),
        },
      },
    ]),
    await registered('director-1', 'user', ['director'], keys.director),
    await registered('observer-1', 'user', ['observer'], keys.observer),
    await registered('agent-1', 'agent', ['director'], keys.agent),
  ];

  const task = new Chain(TASK_ID);
  const request = {
    action_request_id: 'ar-1',
    task_id: TASK_ID,
    action_class: 'execute_command',
    target_resources: ['src'],
    params: { argv: ['make', 'release'], cwd: 'src' },
    expected_effects: ['a release build'],
    reversibility_hint: 'irreversible',
    reason: 'ship it',
    proposed_by: 'agent-1',
    proposed_at: TIMES.attempt1,
  };
  task.append({ event_type: 'task.created', entity_type: 'task', entity_id: TASK_ID, occurred_at: TIMES.attempt1, actor_id: 'writ-orchestrator', payload: { title: 'release', action_request: request } });
  task.append({ event_type: 'attempt.awaiting_policy', entity_type: 'attempt', entity_id: 'att-1', attempt_id: 'att-1', occurred_at: TIMES.attempt1, actor_id: 'writ-orchestrator', payload: { action_request: request, at: TIMES.attempt1 } });
  const policyResult = {
    policy_result_id: 'pr-1',
    task_id: TASK_ID,
    attempt_id: 'att-1',
    outcome: 'require_approval',
    action_summary: 'execute_command: make release',
    risk_summary: 'high',
    policy_profile_ref: 'policy:default',
    policy_version: 'v1',
    affected_resources: ['src'],
    reasoning_summary: 'releases need a director',
    revalidation_conditions: [],
  };
  const decision = { decision_id: 'dec-1', task_id: TASK_ID, summary: 'policy require_approval', decided_by: 'writ-policy', created_at: TIMES.attempt1 };
  task.append({ event_type: 'policy.evaluated', entity_type: 'policy', entity_id: 'pr-1', attempt_id: 'att-1', occurred_at: TIMES.attempt1, actor_id: 'writ-policy', payload: { policy_result: policyResult, decision } });
  const witness = { ref: '', fingerprints: { src: 'sha256:0f' }, observed_at: TIMES.attempt1 };
  const witnessRef = `sha256:${sha256Hex(canonicalJson({ task_id: TASK_ID, fingerprints: witness.fingerprints, observed_at: witness.observed_at }))}`;
  const stateWitness = { ...witness, ref: witnessRef };
  const packet = { action_summary: 'execute_command: make release', risk_summary: 'high', state_witness_ref: witnessRef, expires_at: TIMES.rotated };
  const packetHash = approvalPacketHash(packet, stateWitness);
  const packetRef = `artifact:${packetHash}`;
  const requested = task.append({
    event_type: 'approval.requested',
    entity_type: 'approval',
    entity_id: 'apr-1',
    attempt_id: 'att-1',
    occurred_at: TIMES.attempt1,
    actor_id: APPROVAL_PRINCIPAL,
    payload: {
      approval_id: 'apr-1',
      task_id: TASK_ID,
      attempt_id: 'att-1',
      approval_packet_ref: packetRef,
      policy_result_ref: 'policy_result:pr-1',
      requested_by: 'agent-1',
      expires_at: TIMES.rotated,
      state_witness: stateWitness,
      packet,
      at: TIMES.attempt1,
    },
  });
  // The director's signed resolution, recorded on the event as the approval service records it.
  const resolver = options.resolution?.by ?? 'director-1';
  const resolverKey = { 'director-1': keys.director, 'observer-1': keys.observer, 'agent-1': keys.agent }[resolver];
  const signed: ApprovalResolution = { approval_id: 'apr-1', decision: 'grant', packet_hash: packetHash, resolved_by: resolver, resolved_at: TIMES.granted, ...options.resolution?.fields };
  const resolutionJws = options.resolution?.unsigned === true ? {} : { resolution_jws: await signJws(canonicalJson(signed), resolverKey) };
  const resolution = { resolved_by: resolver, witness_validated: true, ...resolutionJws, at: TIMES.granted };
  const granted = task.append({ event_type: 'approval.granted', entity_type: 'approval', entity_id: 'apr-1', attempt_id: 'att-1', occurred_at: TIMES.granted, actor_id: APPROVAL_PRINCIPAL, payload: resolution });
  const iat = Math.floor(Date.parse(TIMES.granted) / 1000);
  const claims = {
    iss: APPROVAL_PRINCIPAL,
    sub: 'writ-executor-1',
    aud: 'writ-executor',
    jti: 'gnt-1',
    iat,
    exp: iat + 300,
    task_id: TASK_ID,
    step_id: 'step-1',
    attempt_id: 'att-1',
    action_class: 'execute_command',
    resource_scope: { paths: ['src'], hosts: [] },
    max_uses: 1,
    issued_by_principal_id: 'director-1',
    approval_ref: 'approval:apr-1',
    policy_result_ref: 'policy_result:pr-1',
  };
  const grantJws = await signClaims(claims, options.grantKey ?? keys.approval, {
    issuer: claims.iss,
    audience: claims.aud,
    subject: claims.sub,
    jwtId: claims.jti,
    issuedAt: new Date(claims.iat * 1000),
    expiresAt: new Date(claims.exp * 1000),
    typ: 'writ-grant+jwt',
  });
  task.append({ event_type: 'grant.issued', entity_type: 'grant', entity_id: 'gnt-1', attempt_id: 'att-1', occurred_at: TIMES.granted, actor_id: APPROVAL_PRINCIPAL, payload: { claims, jws: grantJws, at: TIMES.granted } });
  const environment = { image: 'writ/cell:1', image_id: 'sha256:abc', network_mode: 'none', readonly_rootfs: true, cap_drop: ['ALL'], user: '10001:10001', memory_bytes: 268435456, pids_limit: 128, mounts: [{ destination: '/workspace', read_only: false }] };
  const stdout = sha256Hex('release built');
  const stderr = sha256Hex('');
  const execution = task.append({
    event_type: 'execution.completed',
    entity_type: 'task',
    entity_id: TASK_ID,
    attempt_id: 'att-1',
    occurred_at: TIMES.executed,
    actor_id: 'writ-executor-1',
    payload: {
      grant_id: 'gnt-1',
      use_no: 1,
      executor_id: 'writ-executor-1',
      outcome: 'completed',
      exit_code: 0,
      timed_out: false,
      duration_ms: 812.5,
      stdout_sha256: stdout,
      stderr_sha256: stderr,
      changed_files: [{ path: 'src/dist/app', change: 'added', before_sha256: null, after_sha256: sha256Hex('app') }],
      artifacts: [{ artifact_id: 'art-1', class: 'evidence', kind: 'command.transcript', uri: `cas://sha256/${stdout}`, content_hash: stdout, media_type: 'text/plain', byte_size: 13, created_at: TIMES.executed, producer: 'writ-executor-1', retention_class: 'task', trust_tier: 'observed', sensitivity_class: 'internal' }],
      environment,
      at: TIMES.executed,
    },
  });
  task.append({ event_type: 'attempt.receipt_pending', entity_type: 'attempt', entity_id: 'att-1', attempt_id: 'att-1', occurred_at: TIMES.executed, actor_id: 'writ-orchestrator', payload: { result_code: 'succeeded', at: TIMES.executed } });

  const approvalReceipt = await sealReceipt(
    {
      receipt_id: 'rct-approval-1',
      task_id: TASK_ID,
      step_id: 'step-1',
      attempt_id: 'att-1',
      receipt_class: 'approval_resolution',
      action_request_ref: 'action_request:ar-1',
      input_refs: [packetRef, `event:${requested.event_id}`, witnessRef],
      environment_ref: null,
      policy_result_ref: 'policy_result:pr-1',
      approval_ref: 'approval:apr-1',
      capability_grant_ref: null,
      output_refs: [`event:${granted.event_id}`, contentRef(resolution)],
      result_code: 'succeeded',
      result_summary: 'succeeded: approval apr-1 granted by director-1; state witness revalidated',
      created_at: TIMES.granted,
      rollback_supported: false,
      replay_class: 'explain_only',
      verifiability: 'signed',
      signer_ref: keys.receiptOld.kid,
      prev_receipt_hash: null,
    },
    keys.receiptOld,
  );
  task.append({ event_type: 'receipt.issued', entity_type: 'receipt', entity_id: 'rct-approval-1', attempt_id: 'att-1', occurred_at: TIMES.granted, actor_id: RECEIPT_PRINCIPAL, payload: { ...approvalReceipt, cause: 'approval_resolved' } });
  const settled = await sealReceipt(
    {
      receipt_id: 'rct-settled-1',
      task_id: TASK_ID,
      step_id: 'step-1',
      attempt_id: 'att-1',
      receipt_class: 'command_execution',
      action_request_ref: 'action_request:ar-1',
      input_refs: [contentRef(request.params), ...(options.extraInputRefs ?? [])],
      environment_ref: contentRef(environment),
      policy_result_ref: 'policy_result:pr-1',
      approval_ref: 'approval:apr-1',
      capability_grant_ref: 'grant:gnt-1',
      output_refs: [`event:${execution.event_id}`, 'artifact:art-1', `sha256:${stdout}`, `sha256:${stderr}`],
      result_code: 'succeeded',
      result_summary: 'succeeded: execute_command: exited 0 after 813 ms; 1 file(s) changed',
      created_at: TIMES.receipted1,
      decision_ref: 'decision:dec-1',
      rollback_supported: false,
      replay_class: 'observe_only',
      verifiability: 'signed',
      signer_ref: keys.receiptOld.kid,
      prev_receipt_hash: approvalReceipt.receipt['receipt_hash'],
      event_chain_head: task.head(),
      attestation: options.attestation ?? environment,
      request_hash: sha256Hex(canonicalJson(request)),
      policy_result_hash: sha256Hex(canonicalJson(policyResult)),
      grant_hash: sha256Hex(grantJws),
      state_witness_ref: witnessRef,
      approval_resolution: {
        status: 'granted',
        resolved_by: 'director-1',
        resolution_ref: `event:${granted.event_id}`,
        resolution_hash: sha256Hex(canonicalJson(resolution)),
        packet_ref: packetRef,
        witness_validated: true,
      },
    },
    keys.receiptOld,
  );
  task.append({ event_type: 'receipt.issued', entity_type: 'receipt', entity_id: 'rct-settled-1', attempt_id: 'att-1', occurred_at: TIMES.receipted1, actor_id: RECEIPT_PRINCIPAL, payload: { ...settled, cause: 'settled' } });

  // The second attempt, after the rotation: denied by policy, receipted with the new key.
  const request2 = { ...request, action_request_id: 'ar-2', params: { argv: ['rm', '-rf', '/'] }, proposed_at: TIMES.attempt2 };
  task.append({ event_type: 'attempt.awaiting_policy', entity_type: 'attempt', entity_id: 'att-2', attempt_id: 'att-2', occurred_at: TIMES.attempt2, actor_id: 'writ-orchestrator', payload: { action_request: request2, at: TIMES.attempt2 } });
  const denied = { ...policyResult, policy_result_id: 'pr-2', attempt_id: 'att-2', outcome: 'deny', reasoning_summary: 'destructive' };
  task.append({ event_type: 'policy.evaluated', entity_type: 'policy', entity_id: 'pr-2', attempt_id: 'att-2', occurred_at: TIMES.attempt2, actor_id: 'writ-policy', payload: { policy_result: denied, decision: { ...decision, decision_id: 'dec-2' } } });
  const secondKey = options.secondReceiptKey ?? keys.receiptNew;
  const refused = await sealReceipt(
    {
      receipt_id: 'rct-refused-2',
      task_id: TASK_ID,
      step_id: 'step-1',
      attempt_id: 'att-2',
      receipt_class: 'command_execution',
      action_request_ref: 'action_request:ar-2',
      input_refs: [contentRef(request2.params)],
      environment_ref: null,
      policy_result_ref: 'policy_result:pr-2',
      approval_ref: null,
      capability_grant_ref: null,
      output_refs: [],
      result_code: 'refused',
      result_summary: 'refused: execute_command denied by policy: destructive',
      created_at: options.secondReceiptAt ?? TIMES.receipted2,
      decision_ref: 'decision:dec-2',
      rollback_supported: false,
      replay_class: 'explain_only',
      verifiability: 'signed',
      signer_ref: secondKey.kid,
      prev_receipt_hash: settled.receipt['receipt_hash'],
      event_chain_head: task.head(),
    },
    secondKey,
  );
  task.append({ event_type: 'receipt.issued', entity_type: 'receipt', entity_id: 'rct-refused-2', attempt_id: 'att-2', occurred_at: TIMES.receipted2, actor_id: RECEIPT_PRINCIPAL, payload: { ...refused, cause: 'policy_denied' } });
  // A later event, after the last receipt: not part of the bundle's segment.
  task.append({ event_type: 'task.completed', entity_type: 'task', entity_id: TASK_ID, occurred_at: TIMES.retired, actor_id: 'writ-orchestrator', payload: { at: TIMES.retired } });

  // The log: other tasks' receipts around this task's three.
  const ours = [approvalReceipt, settled, refused].map((sealed) => sealed.receipt);
  const leaves = [sha256Hex('other-0'), ours[0]?.['receipt_hash'] as string, sha256Hex('other-1'), ours[1]?.['receipt_hash'] as string, ours[2]?.['receipt_hash'] as string, sha256Hex('other-2')];
  const leafBytes = leaves.map(hexToBytes);
  const root = bytesToHex(merkleRoot(leafBytes));
  const headBody = { log_id: LOG_ID, tree_size: leaves.length, root_hash: root, timestamp: TIMES.head };
  const headKey = options.headKey ?? keys.receiptNew;
  const treeHead: SignedTreeHead = { ...headBody, signer_ref: headKey.kid, jws: await signJws(canonicalJson(headBody), headKey, { typ: TREE_HEAD_JWS_TYPE }) };
  const proofs = new Map<string, InclusionProof>();
  for (const receipt of ours) {
    const leafIndex = leaves.indexOf(receipt['receipt_hash'] as string);
    proofs.set(receipt['receipt_id'] as string, {
      log_id: LOG_ID,
      leaf_index: leafIndex,
      tree_size: leaves.length,
      leaf_hash: bytesToHex(merkleLeafHash(hexToBytes(leaves[leafIndex] as string))),
      audit_path: inclusionProof(leafIndex, leafBytes).map(bytesToHex),
    });
  }
  const trustAnchor: TrustAnchor = { principal_id: OPERATOR_PRINCIPAL, keys: [keys.operator.publicJwk as PublicEd25519Jwk] };
  const bundle = assembleBundle({ taskId: TASK_ID, events: task.events, principals, proofs, treeHead, ...(options.noTrustAnchor === true ? {} : { trustAnchor }) });
  return { bundle, keys, events: task.events, principals, proofs, treeHead, leaves };
}
