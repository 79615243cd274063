// `writ verify` of a receipt bundle, offline, against the raw cryptography the
// same bundle needs, in the same run. Not a test: it asserts nothing.
//
// It imports the BUILT CLI and libraries (apps/cli/dist, libs/*/dist), so build first:
//   NX_NO_CLOUD=true npx nx run @writ/cli:build
// then run it with the workspace's Node 24:
//   npx node scripts/bench/verify.bench.mjs [--receipts 10] [--leaves 1000] [--iterations 200] [--warmup 20] [--rounds 4]
// Every option can also come from the environment (BENCH_RECEIPTS, BENCH_LEAVES, ...).
//
// The bundle is built here as the services would produce it (a task of
// --receipts attempts, each: request, policy result, signed grant, execution,
// signed receipt; a transparency log of --leaves leaves), then:
//   verify   verifyBundleText(file bytes): every check of docs/verification.md
//   raw      what the same bundle costs in bare cryptography: one Ed25519
//            verification (node:crypto) per signature it holds (each receipt,
//            each grant, the tree head) and one SHA-256 over the file
// Rounds alternate the two, so drift and noise on the machine hit both alike.
// Needs nothing running: no NATS, no services.

import { createPublicKey, createHash, verify as ed25519Verify } from 'node:crypto';
import os from 'node:os';
import { assembleBundle, serializeBundle, verifyBundleText } from '@writ/cli';
import { bytesToHex, canonicalJson, generateEd25519Key, hexToBytes, inclusionProof, merkleLeafHash, merkleRoot, sha256Hex, signClaims, signJws } from '@writ/crypto';
import { GENESIS, sealEvent } from '@writ/eventstore';
import { signServiceEnrollment } from '@writ/runtime';
import { benchArgs, integerOption, quantile } from './bench-stats.mjs';

const args = benchArgs(import.meta.url, { receipts: { type: 'string' }, leaves: { type: 'string' }, iterations: { type: 'string' }, warmup: { type: 'string' }, rounds: { type: 'string' } });
const RECEIPTS = integerOption(args, 'receipts', 10);
const LEAVES = Math.max(integerOption(args, 'leaves', 1000), RECEIPTS);
const ITERATIONS = integerOption(args, 'iterations', 200);
const WARMUP = integerOption(args, 'warmup', 20, 0);
const ROUNDS = integerOption(args, 'rounds', 4);

const TASK = 'task-bench';
const T0 = Date.parse('2031-01-01T00:00:00.000Z');
const iso = (offsetSeconds) => new Date(T0 + offsetSeconds * 1000).toISOString();

class Chain {
  events = [];
  #link = GENESIS;
  constructor(id) {
    this.id = id;
  }
  append(type, entityType, entityId, actor, at, payload, attemptId) {
    const event = sealEvent(
      {
        event_id: `evt-${this.id}-${this.events.length + 1}`,
        schema_version: 1,
        event_type: type,
        entity_type: entityType,
        entity_id: entityId,
        step_id: 'step-1',
        ...(attemptId === undefined ? {} : { attempt_id: attemptId }),
        occurred_at: at,
        actor_type: 'service',
        actor_id: actor,
        payload,
        causation_id: null,
        correlation_id: this.id,
      },
      this.id,
      this.#link,
    );
    this.#link = { taskSeq: event.task_seq, hash: event.hash };
    this.events.push(event);
    return event;
  }
}

/** A service principal registered by itself under the operator's enrollment (as writ init enrolls it). */
async function principal(id, key, operatorKey) {
  const authorization = await signServiceEnrollment(id, { principalId: 'operator', key: operatorKey, now: new Date(T0 - 60_000) });
  const chain = new Chain(id);
  chain.append('principal.registered', 'principal', id, id, iso(0), { principal_id: id, principal_type: 'service', display_name: id, roles: [], keys: [key.publicJwk], registered_by: id, at: iso(0), authorization });
  return { principal_id: id, events: chain.events };
}

async function buildBundle() {
  const receiptKey = await generateEd25519Key({ kid: 'writ-receipt-k1' });
  const approvalKey = await generateEd25519Key({ kid: 'writ-approval-k1' });
  const task = new Chain(TASK);
  const receipts = [];
  let prev = null;
  for (let n = 1; n <= RECEIPTS; n++) {
    const attempt = `att-${n}`;
    const t = n * 60;
    const request = { action_request_id: `ar-${n}`, task_id: TASK, action_class: 'execute_command', target_resources: ['src'], params: { argv: ['make', `step-${n}`], cwd: 'src' }, expected_effects: ['a build'], reversibility_hint: 'reversible', reason: 'build', proposed_by: 'agent-1', proposed_at: iso(t) };
    task.append('attempt.awaiting_policy', 'attempt', attempt, 'writ-orchestrator', iso(t), { action_request: request, at: iso(t) }, attempt);
    const policyResult = { policy_result_id: `pr-${n}`, task_id: TASK, attempt_id: attempt, outcome: 'allow', reasoning_summary: 'allowed' };
    task.append('policy.evaluated', 'policy', `pr-${n}`, 'writ-policy', iso(t), { policy_result: policyResult, decision: { decision_id: `dec-${n}` } }, attempt);
    const iat = Math.floor((T0 + t * 1000) / 1000);
    const claims = { iss: 'writ-approval', sub: 'writ-executor-1', aud: 'writ-executor', jti: `gnt-${n}`, iat, exp: iat + 300, task_id: TASK, step_id: 'step-1', attempt_id: attempt, action_class: 'execute_command', resource_scope: { paths: ['src'], hosts: [] }, max_uses: 1, issued_by_principal_id: 'writ-policy' };
    const grantJws = await signClaims(claims, approvalKey, { issuer: claims.iss, audience: claims.aud, subject: claims.sub, jwtId: claims.jti, issuedAt: new Date(iat * 1000), expiresAt: new Date(claims.exp * 1000), typ: 'writ-grant+jwt' });
    task.append('grant.issued', 'grant', claims.jti, 'writ-approval', iso(t + 1), { claims, jws: grantJws, at: iso(t + 1) }, attempt);
    const environment = { image: 'writ/cell:1', image_id: 'sha256:abc', network_mode: 'none', readonly_rootfs: true, cap_drop: ['ALL'], user: '10001:10001', memory_bytes: 268435456, pids_limit: 128, mounts: [{ destination: '/workspace', read_only: false }] };
    const stdout = sha256Hex(`out-${n}`);
    const execution = task.append(
      'execution.completed',
      'task',
      TASK,
      'writ-executor-1',
      iso(t + 2),
      { grant_id: claims.jti, use_no: 1, executor_id: 'writ-executor-1', outcome: 'completed', exit_code: 0, timed_out: false, duration_ms: 12, stdout_sha256: stdout, stderr_sha256: sha256Hex(''), changed_files: [], artifacts: [], environment, at: iso(t + 2) },
      attempt,
    );
    const body = {
      receipt_id: `rct-${n}`,
      task_id: TASK,
      step_id: 'step-1',
      attempt_id: attempt,
      receipt_class: 'command_execution',
      action_request_ref: `action_request:${request.action_request_id}`,
      input_refs: [`sha256:${sha256Hex(canonicalJson(request.params))}`],
      environment_ref: `sha256:${sha256Hex(canonicalJson(environment))}`,
      policy_result_ref: `policy_result:pr-${n}`,
      approval_ref: null,
      capability_grant_ref: `grant:${claims.jti}`,
      output_refs: [`event:${execution.event_id}`, `sha256:${stdout}`],
      result_code: 'succeeded',
      result_summary: 'succeeded: execute_command: exited 0',
      created_at: iso(t + 3),
      decision_ref: `decision:dec-${n}`,
      rollback_supported: false,
      replay_class: 'observe_only',
      verifiability: 'signed',
      signer_ref: receiptKey.kid,
      prev_receipt_hash: prev,
      request_hash: sha256Hex(canonicalJson(request)),
      policy_result_hash: sha256Hex(canonicalJson(policyResult)),
      grant_hash: sha256Hex(grantJws),
    };
    const canonical = canonicalJson(body);
    const jws = await signJws(canonical, receiptKey, { typ: 'writ-receipt+jws' });
    const [header, , signature] = jws.split('.');
    const receipt = { ...body, receipt_hash: sha256Hex(canonical), signature: `${header}..${signature}` };
    prev = receipt.receipt_hash;
    task.append('receipt.issued', 'receipt', receipt.receipt_id, 'writ-receipt', iso(t + 3), { receipt, jws, cause: 'settled' }, attempt);
    receipts.push(receipt);
  }
  // The log: this task's receipts spread among other tasks' leaves.
  const leaves = Array.from({ length: LEAVES }, (_, i) => sha256Hex(`other-${i}`));
  const stride = Math.floor(LEAVES / RECEIPTS);
  receipts.forEach((receipt, i) => (leaves[i * stride] = receipt.receipt_hash));
  const leafBytes = leaves.map(hexToBytes);
  const head = { log_id: 'writ-receipts', tree_size: LEAVES, root_hash: bytesToHex(merkleRoot(leafBytes)), timestamp: iso(RECEIPTS * 60 + 600) };
  const treeHead = { ...head, signer_ref: receiptKey.kid, jws: await signJws(canonicalJson(head), receiptKey, { typ: 'writ-tree-head+jws' }) };
  const proofs = new Map(
    receipts.map((receipt, i) => [
      receipt.receipt_id,
      { log_id: 'writ-receipts', leaf_index: i * stride, tree_size: LEAVES, leaf_hash: bytesToHex(merkleLeafHash(leafBytes[i * stride])), audit_path: inclusionProof(i * stride, leafBytes).map(bytesToHex) },
    ]),
  );
  const operatorKey = await generateEd25519Key({ kid: 'operator-k1' });
  const trustAnchor = { principal_id: 'operator', keys: [operatorKey.publicJwk] };
  const principals = [await principal('writ-receipt', receiptKey, operatorKey), await principal('writ-approval', approvalKey, operatorKey)];
  const bundle = assembleBundle({ taskId: TASK, events: task.events, principals, proofs, treeHead, trustAnchor });
  return { text: serializeBundle(bundle), bundle, receiptKey, approvalKey };
}

/** The bare cryptography of one bundle: an Ed25519 verification per JWS it holds and a SHA-256 of the file. */
function rawPlan(built) {
  const keys = { [built.receiptKey.kid]: createPublicKey({ key: built.receiptKey.publicJwk, format: 'jwk' }), [built.approvalKey.kid]: createPublicKey({ key: built.approvalKey.publicJwk, format: 'jwk' }) };
  const signed = [];
  const add = (jws) => {
    const [header, payload, signature] = jws.split('.');
    const kid = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')).kid;
    signed.push({ data: Buffer.from(`${header}.${payload}`), signature: Buffer.from(signature, 'base64url'), key: keys[kid] });
  };
  for (const bundled of built.bundle.receipts) add(bundled.jws);
  for (const event of built.bundle.events) if (event.event_type === 'grant.issued') add(event.payload.jws);
  add(built.bundle.tree_head.jws);
  const bytes = Buffer.from(built.text);
  return () => {
    createHash('sha256').update(bytes).digest();
    for (const entry of signed) if (!ed25519Verify(null, entry.data, entry.key, entry.signature)) throw new Error('raw verification failed');
    return signed.length;
  };
}

async function time(fn, n) {
  const samples = [];
  for (let i = 0; i < n; i++) {
    const start = process.hrtime.bigint();
    await fn();
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return samples;
}

const built = await buildBundle();
const bytes = new TextEncoder().encode(built.text);
const raw = rawPlan(built);
const check = await verifyBundleText(bytes);
if (!check.ok) throw new Error(`the generated bundle does not verify: ${check.checks.filter((c) => c.status === 'fail').map((c) => c.check).join(', ')}`);
const signatures = raw();

console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}, node ${process.version}`);
console.log(`bundle: ${RECEIPTS} receipts, ${built.bundle.events.length} events, log of ${LEAVES} leaves, ${bytes.length} bytes, ${check.checks.length} checks, ${signatures} signatures`);

await time(() => verifyBundleText(bytes), WARMUP);
await time(raw, WARMUP * 10);
const verifySamples = [];
const rawSamples = [];
for (let round = 0; round < ROUNDS; round++) {
  const per = Math.ceil(ITERATIONS / ROUNDS);
  if (round % 2 === 0) {
    verifySamples.push(...(await time(() => verifyBundleText(bytes), per)));
    rawSamples.push(...(await time(raw, per)));
  } else {
    rawSamples.push(...(await time(raw, per)));
    verifySamples.push(...(await time(() => verifyBundleText(bytes), per)));
  }
}

const summary = (samples) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = samples.reduce((sum, s) => sum + s, 0) / samples.length;
  return { p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), mean, perSecond: 1000 / mean };
};
const v = summary(verifySamples);
const r = summary(rawSamples);
const row = (name, s) => `${name.padEnd(8)} p50 ${s.p50.toFixed(3).padStart(9)} ms   p95 ${s.p95.toFixed(3).padStart(9)} ms   ${s.perSecond.toFixed(1).padStart(9)} bundles/s`;
console.log(row('verify', v));
console.log(row('raw', r));
console.log(`ratio    verify / raw: p50 ${(v.p50 / r.p50).toFixed(2)}×, mean ${(v.mean / r.mean).toFixed(2)}×`);
