import {
  Belief,
  ContextPack,
  ContextPackBudget,
  Id,
  JsonValue,
  LIMITS,
  LongText,
  MemoryRecord,
  Name,
  Ref,
  Sha256Hex,
  Text,
  Timestamp,
  WorkingStateEntry,
  isSecretReference,
  toContractIssues,
  type ContextItem,
  type ContextOmission,
  type ContextOmissionReason,
  type ContextSection,
  type ContextSource,
} from '@writ/contracts';
import { z } from 'zod';
import { isBeliefActive } from './belief.decider.js';
import { utf8Length } from './json-size.js';
import { KnowledgeError } from './knowledge.errors.js';
import { TRUST_TIER_RANK, trustGate } from './trust-tier.gates.js';

/**
 * What the compiler needs from cryptography, passed in by the caller
 * (`canonicalJson` and `sha256Hex` of @writ/crypto have exactly these
 * shapes), so the kernel stays free of `node:crypto` and of a second RFC
 * 8785 implementation that could drift from the one receipts use.
 */
export interface ContextPackCodec {
  /** RFC 8785 canonical JSON. */
  readonly canonicalJson: (value: unknown) => string;
  /** Lowercase hex SHA-256 of the UTF-8 bytes of `text`. */
  readonly sha256Hex: (text: string) => string;
}

/** How large a pack may be and whether secrets may be named (by reference only): the policy profile's `knowledge.context_pack` (ContextPackBudget). */
export const ContextProfile = ContextPackBudget;
export type ContextProfile = ContextPackBudget;

const Contract = z.strictObject({ ref: Ref, content: JsonValue });
const list = <S extends z.ZodType>(item: S) => z.array(item).max(LIMITS.jsonItems).optional();

/** The inputs of one compilation: everything the pack may hold, and the instant expiry is judged at. */
export const ContextCompileInput = z.strictObject({
  task_id: Id,
  attempt_id: Id,
  as_of: Timestamp,
  task_contract: Contract,
  step_contract: Contract.optional(),
  policy_constraints: list(Contract),
  decisions: list(z.strictObject({ decision_id: Id, summary: Text })),
  working_state: list(WorkingStateEntry),
  beliefs: list(Belief),
  memory: list(MemoryRecord),
  artifacts: list(z.strictObject({ artifact_id: Id, kind: Name, content_hash: Sha256Hex, sensitivity_class: Name, summary: Text.optional() })),
  ingress_deltas: list(z.strictObject({ ingress_id: Id, at: Timestamp, text: LongText })),
  focus: z.strictObject({ task_id: Id, summary: Text }).optional(),
  session: list(z.strictObject({ ref: Ref, seq: z.int().min(0), content: JsonValue })),
  profile: ContextProfile,
});
export type ContextCompileInput = z.input<typeof ContextCompileInput>;

/** A compiled pack: the document, its canonical bytes, and where it is stored by content. */
export interface CompiledContextPack {
  readonly pack: ContextPack;
  /** RFC 8785 canonical JSON of `pack`: equal inputs, equal bytes. */
  readonly bytes: string;
  readonly byte_size: number;
  readonly content_hash: `sha256:${string}`;
  readonly uri: `cas://sha256/${string}`;
}

/** One input in precedence order, before the budget: content, or why it cannot be in the pack. */
interface Candidate {
  readonly section: ContextSection;
  readonly source: ContextSource;
  readonly content: JsonValue;
  readonly secret: boolean;
  /** What names a secret candidate in a pack that allows references: its own `secret_ref` when it holds one. */
  readonly secretRef?: string;
  readonly refusal?: ContextOmissionReason;
}

/** The `secret_ref` a secret-marked value holds (the kernel records secrets only so), or undefined. */
const secretRefOf = (value: JsonValue | undefined): string | undefined => (isSecretReference(value) ? value.secret_ref : undefined);

/** Sections that must fit: without the contracts and the policy constraints a pack is not a pack. */
const MANDATORY: readonly ContextSection[] = ['task_contract', 'step_contract', 'policy_constraints'];

/** Code-unit order, never locale order: the same bytes on every machine. */
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function sorted<T>(items: readonly T[] | undefined, ...keys: ((item: T) => string | number)[]): T[] {
  return [...(items ?? [])].sort((a, b) => {
    for (const key of keys) {
      const x = key(a);
      const y = key(b);
      const order = typeof x === 'number' && typeof y === 'number' ? x - y : byText(String(x), String(y));
      if (order !== 0) return order;
    }
    return 0;
  });
}

/** Drops undefined members, so the JSON value is the same whether a field was absent or undefined. */
function json(value: Record<string, unknown>): JsonValue {
  return JSON.parse(JSON.stringify(value)) as JsonValue;
}

function beliefRefusal(belief: Belief, asOfMs: number): ContextOmissionReason | undefined {
  if (belief.status === 'expired' || (belief.status === 'active' && !isBeliefActive(belief, asOfMs))) return 'BELIEF_EXPIRED';
  if (belief.status !== 'active') return 'BELIEF_NOT_ACTIVE';
  if (!trustGate(belief.trust_tier, 'influence_planning')) return 'TRUST_TIER_BARRED_FROM_PLANNING';
  return undefined;
}

function memoryRefusal(memory: MemoryRecord, asOfMs: number): ContextOmissionReason | undefined {
  const policy = memory.invalidation_policy;
  const expiresMs = policy.mode === 'at_expiry' && policy.expires_at !== undefined ? Date.parse(policy.expires_at) : undefined;
  if (memory.status === 'expired' || (memory.status === 'active' && expiresMs !== undefined && asOfMs >= expiresMs)) return 'MEMORY_EXPIRED';
  if (memory.status !== 'active') return 'MEMORY_NOT_ACTIVE';
  if (!trustGate(memory.trust_tier, 'influence_planning')) return 'TRUST_TIER_BARRED_FROM_PLANNING';
  return undefined;
}

const tierOrder = (tier: keyof typeof TRUST_TIER_RANK) => -TRUST_TIER_RANK[tier];
const evidenceOf = (refs: readonly { kind: string; id: string }[]) => refs.map((ref) => `${ref.kind}:${ref.id}`);

/** Every input as a candidate, in the precedence of Hermit 15.7 and a fixed order inside each section. */
function candidates(input: z.output<typeof ContextCompileInput>): Candidate[] {
  const asOfMs = Date.parse(input.as_of);
  const out: Candidate[] = [];
  const add = (section: ContextSection, kind: ContextSource['kind'], id: string, content: JsonValue, secret = false, refusal?: ContextOmissionReason, secretRef?: string) =>
    out.push({ section, source: { kind, id }, content, secret, ...(refusal === undefined ? {} : { refusal }), ...(secret && secretRef !== undefined ? { secretRef } : {}) });

  add('task_contract', 'task_contract', input.task_contract.ref, input.task_contract.content);
  if (input.step_contract !== undefined) add('step_contract', 'step_contract', input.step_contract.ref, input.step_contract.content);
  for (const policy of sorted(input.policy_constraints, (p) => p.ref)) add('policy_constraints', 'policy', policy.ref, policy.content);
  for (const decision of sorted(input.decisions, (d) => d.decision_id)) add('decisions', 'decision', decision.decision_id, json({ summary: decision.summary }));
  for (const entry of sorted(input.working_state, (e) => e.key)) {
    add('working_state', 'working_state_entry', entry.key, json({ kind: entry.kind, value: entry.value, refs: entry.refs }), entry.sensitivity === 'secret', undefined, secretRefOf(entry.value));
  }
  // Beliefs and memory: the most trusted first, then the most confident, then by id.
  for (const belief of sorted(input.beliefs, (b) => tierOrder(b.trust_tier), (b) => -b.confidence, (b) => b.belief_id)) {
    const content = json({ claim: belief.claim, scope: belief.scope, confidence: belief.confidence, trust_tier: belief.trust_tier, evidence: evidenceOf(belief.evidence_refs), contradicts: belief.contradicts });
    add('beliefs', 'belief', belief.belief_id, content, belief.sensitivity === 'secret', beliefRefusal(belief, asOfMs), secretRefOf(belief.structured_assertion));
  }
  for (const memory of sorted(input.memory, (m) => tierOrder(m.trust_tier), (m) => m.memory_id)) {
    const content = json({ claim: memory.claim, scope: memory.scope, trust_tier: memory.trust_tier, evidence: evidenceOf(memory.evidence_refs) });
    add('memory', 'memory', memory.memory_id, content, memory.sensitivity === 'secret', memoryRefusal(memory, asOfMs), secretRefOf(memory.structured_assertion));
  }
  for (const artifact of sorted(input.artifacts, (a) => a.artifact_id)) {
    add('artifacts', 'artifact', artifact.artifact_id, json({ kind: artifact.kind, content_hash: artifact.content_hash, summary: artifact.summary }), artifact.sensitivity_class === 'secret');
  }
  for (const delta of sorted(input.ingress_deltas, (d) => Date.parse(d.at), (d) => d.ingress_id)) add('ingress_and_focus', 'ingress', delta.ingress_id, json({ at: delta.at, text: delta.text }));
  if (input.focus !== undefined) add('ingress_and_focus', 'focus', input.focus.task_id, json({ summary: input.focus.summary }));
  const sessionRefusal = input.profile.include_session === true ? undefined : 'SESSION_NOT_REQUESTED';
  for (const turn of sorted(input.session, (s) => s.seq, (s) => s.ref)) add('session', 'session', turn.ref, turn.content, false, sessionRefusal);
  return out;
}

function duplicateSource(list: readonly Candidate[]): ContextSource | undefined {
  const seen = new Set<string>();
  for (const { source } of list) {
    const key = `${source.kind}\u0000${source.id}`;
    if (seen.has(key)) return source;
    seen.add(key);
  }
  return undefined;
}

/**
 * Compiles the context pack of one attempt (Hermit 15.6, 15.7): a pure,
 * deterministic function of its inputs. Items come in precedence order,
 * each naming its source; what does not fit the budget, is not active, is
 * barred by its trust tier, or is secret is listed in `omitted` with the
 * reason. A secret's value never enters the pack: it is left out, or named
 * by reference when the profile allows it (by the `secret_ref` it holds,
 * which the kernel makes the only thing a secret entry can hold).
 */
export function compileContextPack(rawInput: ContextCompileInput, codec: ContextPackCodec): CompiledContextPack {
  const parsed = ContextCompileInput.safeParse(rawInput);
  if (!parsed.success) {
    throw new KnowledgeError('KNOWLEDGE_CONTEXT_INPUT_INVALID', 'the context compiler inputs are invalid', { cause: parsed.error, details: { issues: toContractIssues(parsed.error) } });
  }
  const input = parsed.data;
  const all = candidates(input);
  const duplicate = duplicateSource(all);
  if (duplicate !== undefined) {
    throw new KnowledgeError('KNOWLEDGE_CONTEXT_INPUT_INVALID', `the source ${duplicate.kind} ${duplicate.id} is given twice: an item must trace to one source`, { details: { source: duplicate } });
  }
  const { profile } = input;
  const items: ContextItem[] = [];
  const omitted: ContextOmission[] = [];
  let usedBytes = 0;
  for (const candidate of all) {
    const { section, source } = candidate;
    if (candidate.refusal !== undefined) {
      omitted.push({ section, source, reason: candidate.refusal });
      continue;
    }
    if (candidate.secret && !profile.allow_secret_references) {
      omitted.push({ section, source, reason: 'SECRET_EXCLUDED' });
      continue;
    }
    // A secret is named by the reference it holds (`vault:db/password`), or, holding none (an artifact, a claim-only belief), by its source.
    const item: ContextItem = candidate.secret
      ? { section, source, secret_ref: candidate.secretRef ?? `secret:${source.kind}:${source.id}` }
      : { section, source, content: candidate.content };
    const size = utf8Length(codec.canonicalJson(item));
    if (items.length + 1 > profile.max_items || usedBytes + size > profile.max_bytes) {
      if (MANDATORY.includes(section)) {
        throw new KnowledgeError('KNOWLEDGE_CONTEXT_BUDGET_TOO_SMALL', `the ${section} ${source.id} does not fit the pack budget (${profile.max_items} items, ${profile.max_bytes} bytes): raise the profile's budget or shorten the contract`, {
          details: { section, max_items: profile.max_items, max_bytes: profile.max_bytes },
        });
      }
      omitted.push({ section, source, reason: 'BUDGET_EXCEEDED' });
      continue;
    }
    items.push(item);
    usedBytes += size;
  }
  const pack = ContextPack.parse({
    kind: 'context.pack',
    version: 1,
    task_id: input.task_id,
    attempt_id: input.attempt_id,
    as_of: input.as_of,
    secrets: profile.allow_secret_references ? 'by_reference' : 'excluded',
    budget: { max_items: profile.max_items, max_bytes: profile.max_bytes, used_items: items.length, used_bytes: usedBytes },
    items,
    omitted,
  });
  const bytes = codec.canonicalJson(pack);
  const hex = codec.sha256Hex(bytes);
  return { pack, bytes, byte_size: utf8Length(bytes), content_hash: `sha256:${hex}`, uri: `cas://sha256/${hex}` };
}
