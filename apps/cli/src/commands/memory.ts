import { randomUUID } from 'node:crypto';
import { Id, KnowledgeEvidenceRef, MemoryList, MemoryPromotionParams, MemorySource, MemoryStatus, Text, parseContract } from '@writ/contracts';
import { MemoryRowSchema, type MemoryRow } from '@writ/contracts/projection-rows';
import type { CliIo, Connection } from '../cli-io.js';
import { CliError } from '../cli-errors.js';
import { readJsonFile } from '../files.js';
import { cell } from '../format.js';
import type { WritApi } from '../http-api.js';
import { submitActionRequest, type SubmitResult } from './action-submit.js';

/** Who proposes a memory_write, and how it is sent (as `writ action submit`). */
export interface MemoryWriteOptions {
  /** Path of the proposer's PRIVATE JWK. */
  readonly key: string;
  readonly principal: string;
  /** The ActionRequest's id (default a fresh `ar-mem-<uuid>`): the agent follows it with `writ action <id>`. */
  readonly actionRequestId?: string;
  /** POST `<url>/v1/actions` instead of publishing to NATS. */
  readonly http?: string;
  readonly json?: boolean;
}

export interface MemoryPromoteOptions extends MemoryWriteOptions {
  readonly memoryId?: string;
  readonly claim?: string;
  readonly scope?: string;
  /** `kind:id` each (`receipt:rcpt-1`, `artifact:art-2`, `observation:obs-3`). */
  readonly evidence?: readonly string[];
  readonly trustTier?: string;
  readonly reason?: string;
  /** `belief:<id>` or `artifact:<id>`. */
  readonly source?: string;
  /** manual | on_evidence_revoked | at_expiry (with `expiresAt`). */
  readonly invalidation?: string;
  readonly expiresAt?: string;
  readonly retention?: string;
  readonly supersedes?: string;
}

/** `kind:id` → `{ kind, id }` (the first colon splits). */
function kindAndId(value: string, what: string): { kind: string; id: string } {
  const colon = value.indexOf(':');
  if (colon <= 0) throw new CliError('CLI_USAGE', `${what} is kind:id (e.g. receipt:rcpt-1), not ${value}`);
  return { kind: value.slice(0, colon), id: value.slice(colon + 1) };
}

const defined = (entries: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(entries).filter(([, value]) => value !== undefined));

/** The memory_write ActionRequest of `memory` in `taskId` (the proposer, time and signature are added when it is sent). */
function memoryWriteRequest(taskId: string, memory: Record<string, unknown>, target: string, reason: string, actionRequestId: string | undefined): Record<string, unknown> {
  return {
    action_request_id: parseContract('--action-request-id', Id, actionRequestId ?? `ar-mem-${randomUUID()}`),
    task_id: parseContract('task id', Id, taskId),
    step: { kind: 'memory', title: `${String(memory['op'])} memory ${String(memory['memory_id'])}` },
    action_class: 'memory_write',
    target_resources: [`memory:${target}`],
    params: { memory },
    expected_effects: [memory['op'] === 'invalidate' ? `memory ${String(memory['memory_id'])} marked invalidated (kept, never deleted)` : `memory ${String(memory['memory_id'])} promoted, or degraded to a working state candidate when unsupported`],
    reversibility_hint: 'reversible',
    reason,
  };
}

/**
 * `writ memory promote <task_id> [promotion.json] [--claim ...]`: a memory
 * promotion (Hermit 15.5) proposed as an ordinary ActionRequest of class
 * `memory_write` in the agent's task, signed and sent as `writ action submit`
 * sends one: policy decides (and approval where the profile says), the executor
 * performs it under its grant, and it is receipted. The promotion is the file's
 * (MemoryPromotionParams without `op`) with the flags on top; what it lacks
 * (evidence, trust tier, reason, ...) makes it degrade to a working state
 * candidate, not fail. Follow it with `writ action <action_request_id>`.
 */
export async function memoryPromote(taskId: string, file: string | undefined, options: MemoryPromoteOptions, conn: Connection, io: CliIo): Promise<SubmitResult> {
  const fromFile = file === undefined ? {} : await readJsonFile(io.cwd, file, 'promotion.json');
  if (typeof fromFile !== 'object' || fromFile === null || Array.isArray(fromFile)) throw new CliError('CLI_FILE_UNREADABLE', `${file ?? 'promotion.json'} must hold an object`);
  const source = options.source === undefined ? undefined : parseContract('--source', MemorySource, kindAndId(options.source, '--source'));
  const evidence = options.evidence === undefined || options.evidence.length === 0 ? undefined : options.evidence.map((ref) => parseContract('--evidence', KnowledgeEvidenceRef, kindAndId(ref, '--evidence')));
  const invalidation = options.invalidation === undefined ? undefined : defined({ mode: options.invalidation, expires_at: options.expiresAt });
  const memory = parseContract('memory promotion', MemoryPromotionParams, {
    memory_id: `mem-${randomUUID()}`,
    ...(fromFile as Record<string, unknown>),
    ...defined({
      memory_id: options.memoryId,
      claim: options.claim,
      scope: options.scope,
      evidence_refs: evidence,
      trust_tier: options.trustTier,
      promotion_reason: options.reason,
      source,
      invalidation_policy: invalidation,
      retention_class: options.retention,
      supersedes: options.supersedes,
    }),
    op: 'promote',
  });
  const request = memoryWriteRequest(taskId, memory, memory.scope ?? memory.memory_id, memory.promotion_reason ?? `promote memory ${memory.memory_id}`, options.actionRequestId);
  return submitActionRequest(request, options.principal, options, conn, io);
}

/**
 * `writ memory invalidate <memory_id> --task <task_id> --reason <text>`: the
 * invalidation, a `memory_write` action like the promotion (it changes durable
 * memory, so policy decides it and it is receipted); the record is kept,
 * marked invalidated, never deleted.
 */
export async function memoryInvalidate(memoryIdArg: string, options: MemoryWriteOptions & { readonly task: string; readonly reason: string; readonly supersededBy?: string }, conn: Connection, io: CliIo): Promise<SubmitResult> {
  const memoryId = parseContract('memory id', Id, memoryIdArg);
  const memory = defined({ op: 'invalidate', memory_id: memoryId, reason: parseContract('--reason', Text, options.reason), superseded_by: options.supersededBy });
  return submitActionRequest(memoryWriteRequest(options.task, memory, memoryId, options.reason, options.actionRequestId), options.principal, options, conn, io);
}

/** `writ memory list [--status ...] [--scope ...] [--task ...]`: durable memory records from the projection (GET /v1/memory), newest first. */
export async function memoryList(options: { readonly status?: string; readonly scope?: string; readonly task?: string; readonly json?: boolean }, api: WritApi, io: CliIo): Promise<MemoryList> {
  const status = options.status === undefined ? undefined : parseContract('--status', MemoryStatus, options.status);
  const list = await api.get('/v1/memory', MemoryList, { status, scope: options.scope, task_id: options.task });
  if (options.json === true) {
    io.stdout(JSON.stringify(list));
    return list;
  }
  if (list.memory.length === 0) io.stdout('no memory record');
  for (const row of list.memory) io.stdout(`${cell(row.memory_id)} ${row.status} ${row.trust_tier} [${cell(row.scope, 40)}] ${row.claim_withheld ? '(secret: withheld)' : cell(row.claim, 120)}`);
  return list;
}

/** `writ memory show <memory_id>`: one record with its evidence, promotion reason and policy / approval / receipt refs (GET /v1/memory/<id>). */
export async function memoryShow(memoryIdArg: string, options: { readonly json?: boolean }, api: WritApi, io: CliIo): Promise<MemoryRow> {
  const memoryId = parseContract('memory id', Id, memoryIdArg);
  const row = await api.get(`/v1/memory/${memoryId}`, MemoryRowSchema);
  if (options.json === true) {
    io.stdout(JSON.stringify(row));
    return row;
  }
  io.stdout(`memory ${cell(row.memory_id)}: ${row.status}, ${row.trust_tier}, scope ${cell(row.scope, 60)}, retention ${cell(row.retention_class)}, promoted by ${cell(row.promoted_by)} in task ${cell(row.task_id)} at ${cell(row.created_at)}`);
  io.stdout(`  claim: ${row.claim_withheld ? '(secret: withheld)' : cell(row.claim, 400)}`);
  io.stdout(`  reason: ${cell(row.promotion_reason, 400)}`);
  io.stdout(`  evidence: ${row.evidence_refs.map((ref) => `${ref.kind}:${ref.id}`).join(', ')}; source ${cell(row.source_kind)}:${cell(row.source_id)}`);
  io.stdout(`  policy ${cell(row.policy_result_ref)}, approval ${cell(row.approval_ref)}, receipt ${cell(row.receipt_ref)}`);
  if (row.status !== 'active') io.stdout(`  ${row.status} at ${cell(row.invalidated_at)} by ${cell(row.invalidated_by)}: ${cell(row.invalidation_reason, 400)} (receipt ${cell(row.invalidation_receipt_ref)})`);
  return row;
}
