import { ActionClass, ContextPackBudget, DEFAULT_KNOWLEDGE_LIMITS, ExecutionMode, LIMITS, Name, PolicyOutcome, RiskBand, Text, WorkingStateLimits, type KnowledgeLimits } from '@writ/contracts';
import { z } from 'zod';
import { compileGlob, GlobPattern, type CompiledGlob } from '../shared/glob.js';
import { EgressHostPattern } from './egress.js';
import { PolicyError } from './policy.errors.js';
import { DEFAULT_SACRED_PATHS, DEFAULT_SECRET_PATHS } from './sacred-scopes.js';

export { DEFAULT_SACRED_PATHS, DEFAULT_SECRET_PATHS } from './sacred-scopes.js';

/** Where a publication downgraded to a draft writes it, unless the rule says otherwise. */
export const DEFAULT_DRAFT_DIR = 'drafts';

/** Fifteen minutes: the wall-clock ceiling of one action when a profile sets none. */
export const DEFAULT_MAX_WALL_CLOCK_MS = 900_000;

/** A directory relative to the workspace, without wildcards. */
const DraftDir = GlobPattern.refine((dir) => !/[*?]/.test(dir), { message: 'must be a directory path without wildcards' });

/** What a `downgrade` rewrites a request into (Hermit 11.4). */
export const DowngradeTarget = z.strictObject({
  action_class: ActionClass,
  restricted_mode: ExecutionMode.optional(),
  draft_dir: DraftDir.optional().describe(`publication → write_local only: the directory (inside files_owned) the draft is written to; "${DEFAULT_DRAFT_DIR}" when absent.`),
});
export type DowngradeTarget = z.infer<typeof DowngradeTarget>;

/** How a profile treats one action class. */
export const ActionClassRule = z
  .strictObject({
    outcome: PolicyOutcome.describe('The default outcome for this class when no other rule is stricter.'),
    downgrade_to: DowngradeTarget.optional().describe('Required when outcome is downgrade.'),
    approval_at_or_above: RiskBand.optional().describe('An otherwise allowed request at this risk band or above requires approval.'),
    deny_at_or_above: RiskBand.optional().describe('A request at this risk band or above is denied.'),
  })
  .superRefine((rule, ctx) => {
    if (rule.outcome === 'downgrade' && rule.downgrade_to === undefined) ctx.addIssue({ code: 'custom', path: ['downgrade_to'], message: 'is required when outcome is downgrade' });
    if (rule.outcome !== 'downgrade' && rule.downgrade_to !== undefined) ctx.addIssue({ code: 'custom', path: ['downgrade_to'], message: 'must be absent unless outcome is downgrade' });
  });
export type ActionClassRule = z.infer<typeof ActionClassRule>;

/**
 * The rewrites the kernel can perform for a downgrade (Hermit 11.4): a
 * mutation to a read of the same target, a network write to a read, a
 * publication to a local draft, or the same class in a restricted mode.
 */
export const SUPPORTED_DOWNGRADES: Readonly<Partial<Record<ActionClass, readonly ActionClass[]>>> = Object.freeze({
  write_local: ['read_local'],
  delete_local: ['read_local'],
  network_write: ['network_read'],
  publication: ['write_local'],
});

export function isSupportedDowngrade(from: ActionClass, to: DowngradeTarget): boolean {
  if (to.draft_dir !== undefined && !(from === 'publication' && to.action_class === 'write_local')) return false;
  if (from === to.action_class) return to.restricted_mode !== undefined;
  return SUPPORTED_DOWNGRADES[from]?.includes(to.action_class) ?? false;
}

/**
 * Capability ceilings (Hermit 16.6): the most any request under the profile
 * may reach. The task's facts may narrow them, never widen them.
 */
export const CapabilityCeilings = z.strictObject({
  egress_hosts: z
    .array(EgressHostPattern)
    .max(LIMITS.targetResources)
    .default([])
    .describe('Hosts any URL of a request must match: "host", "*.host" (subdomains), either with ":port", or "*" for any host. Empty: no network.'),
  secret_handles: z.array(Name).max(LIMITS.shortListItems).default([]).describe('Secret handles a request may name (params.secret_handle / params.secret_handles). Empty: none.'),
  max_wall_clock_ms: z.int().min(1).max(86_400_000).default(DEFAULT_MAX_WALL_CLOCK_MS).describe('Largest params.timeout_ms a request may ask for, and the wall-clock limit a grant encodes.'),
});
export type CapabilityCeilings = z.infer<typeof CapabilityCeilings>;

const WS = WorkingStateLimits.shape;
const PACK = ContextPackBudget.shape;
const DEFAULTS = DEFAULT_KNOWLEDGE_LIMITS;

/**
 * The knowledge layer's bounds under this profile (issue 17; Hermit 6.3.2, 15.6):
 * each field within the kernel's ceilings, the defaults where left out. The
 * policy service records them with every verdict; the orchestrator opens a
 * task's working state and compiles its packs with them.
 */
export const KnowledgeProfileSection = z
  .strictObject({
    working_state: z
      .strictObject({
        max_entries: WS.max_entries.default(DEFAULTS.working_state.max_entries),
        max_entry_bytes: WS.max_entry_bytes.default(DEFAULTS.working_state.max_entry_bytes),
        max_total_bytes: WS.max_total_bytes.default(DEFAULTS.working_state.max_total_bytes),
      })
      .prefault({})
      .describe('Working state size limits (entries; UTF-8 bytes of one entry\'s JSON; of all entries): a revision past one is refused KNOWLEDGE_WORKING_STATE_TOO_LARGE.'),
    context_pack: z
      .strictObject({
        max_items: PACK.max_items.default(DEFAULTS.context_pack.max_items),
        max_bytes: PACK.max_bytes.default(DEFAULTS.context_pack.max_bytes),
        allow_secret_references: PACK.allow_secret_references.default(DEFAULTS.context_pack.allow_secret_references),
        include_session: PACK.include_session,
      })
      .prefault({})
      .describe('Context pack budget: what does not fit is listed in the pack\'s omitted (BUDGET_EXCEEDED); secrets named by reference only when allow_secret_references.'),
  })
  .describe('Knowledge bounds; absent: the defaults of DEFAULT_KNOWLEDGE_LIMITS.');
export type KnowledgeProfileSection = z.output<typeof KnowledgeProfileSection>;

const documentShape = {
  id: Name.regex(/^[^.]+$/, 'must be one NATS subject token (no dots): it names the profile in the log (<events>.policy.<id>) and the bucket'),
  description: Text.describe('What the profile allows, in plain words.'),
  action_classes: z.partialRecord(ActionClass, ActionClassRule).describe('Per action class rule; absent classes are denied.'),
  destructive_commands: z.enum(['require_approval', 'deny']).describe('What a destructive command (execute_command, or a vcs_mutation carrying argv) gets.'),
  files_owned: z.enum(['enforce', 'require_approval']).default('enforce').describe('Writes outside files_owned: denied, or allowed only with approval (scope expansion).'),
  sacred_paths: z
    .array(GlobPattern)
    .max(LIMITS.listItems)
    .default(() => [...DEFAULT_SACRED_PATHS])
    .describe('Sacred Scopes: never written unless both sacred_exceptions name the path. The seed 003 list when absent; a list given replaces it.'),
  sacred_exceptions: z
    .array(GlobPattern)
    .max(LIMITS.listItems)
    .default([])
    .describe("Sacred paths this profile lets a task write, and only when the task's own sacred_exceptions name them too."),
  secret_paths: z
    .array(GlobPattern)
    .max(LIMITS.listItems)
    .default(() => [...DEFAULT_SECRET_PATHS])
    .describe('Never read nor written. The default secret list when absent; a list given replaces it.'),
  ceilings: CapabilityCeilings.prefault({}),
  approval: z.strictObject({ expires_in_seconds: z.int().min(60).max(604_800).default(3_600) }).prefault({}),
  witness_waived_for: z.array(ActionClass).max(12).optional().describe('Classes whose delayed execution needs no state witness (Hermit 16.8 "unless policy explicitly waives it").'),
  // Optional without a default, so a profile that does not name it keeps the version it had before the section existed.
  knowledge: KnowledgeProfileSection.optional(),
};

const VERSION_IS_DERIVED = 'is not part of a policy document: the version is derived from the content (sha256 of the canonical document) when the profile is applied';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Rules across fields. They run even when fields already failed (so one parse
 * lists every problem) and therefore check types themselves.
 */
function documentRules(input: unknown, ctx: z.RefinementCtx): void {
  if (!isObject(input)) return;
  knowledgeRules(input.knowledge, ctx);
  if (!isObject(input.action_classes)) return;
  for (const [name, rule] of Object.entries(input.action_classes)) {
    const from = ActionClass.safeParse(name);
    if (!from.success || !isObject(rule)) continue;
    const target = DowngradeTarget.safeParse(rule.downgrade_to);
    if (!target.success) continue;
    if (!isSupportedDowngrade(from.data, target.data)) {
      const to = target.data;
      const why =
        to.draft_dir !== undefined && !(from.data === 'publication' && to.action_class === 'write_local')
          ? 'draft_dir is only for publication → write_local'
          : `cannot downgrade ${from.data} to ${to.action_class}${from.data === to.action_class && to.restricted_mode === undefined ? ' without a restricted_mode' : ''}`;
      ctx.addIssue({ code: 'custom', path: ['action_classes', name, 'downgrade_to'], message: why });
    }
  }
}

/** One entry allowed more bytes than the whole working state (given, or by default) could never be stored: refused as a contradiction. */
function knowledgeRules(knowledge: unknown, ctx: z.RefinementCtx): void {
  if (!isObject(knowledge) || !isObject(knowledge.working_state)) return;
  const entry = knowledge.working_state.max_entry_bytes ?? DEFAULTS.working_state.max_entry_bytes;
  const total = knowledge.working_state.max_total_bytes ?? DEFAULTS.working_state.max_total_bytes;
  if (typeof entry === 'number' && typeof total === 'number' && entry > total) {
    ctx.addIssue({ code: 'custom', path: ['knowledge', 'working_state', 'max_entry_bytes'], message: `${entry} must not exceed max_total_bytes (${total}): set both` });
  }
}

/** The knowledge limits of a profile, the defaults where it names none: what its verdicts record. */
export function knowledgeLimitsOf(profile: Pick<PolicyProfile, 'knowledge'>): KnowledgeLimits {
  const section = profile.knowledge;
  if (section === undefined) return DEFAULTS;
  const { include_session, ...pack } = section.context_pack;
  return { working_state: { ...section.working_state }, context_pack: { ...pack, ...(include_session === undefined ? {} : { include_session }) } };
}

const ALWAYS = { when: () => true } as const;

/**
 * A policy profile (Hermit 16.3) as its author writes it, in YAML or JSON.
 * Deny by default: an action class the profile does not list is denied.
 * `files_owned` (from the task) is the hard write boundary; `sacred_paths`
 * are never written even inside it unless both exceptions name them;
 * `secret_paths` are never read or written (secrets stay out of model
 * context, Hermit 6.3). It has no `version`: the version is derived from the
 * content when the profile is applied.
 */
export const PolicyProfileDocument = z
  .strictObject(documentShape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys' && issue.keys.includes('version') ? { message: `unknown keys ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}; "version" ${VERSION_IS_DERIVED}` } : undefined,
  })
  .superRefine(documentRules, ALWAYS)
  .meta({ title: 'PolicyProfileDocument', description: 'A policy profile as written by its author (Hermit 16.3); its version is derived from its content.' });
export type PolicyProfileDocument = z.output<typeof PolicyProfileDocument>;
/** A document as written: fields with defaults may be left out. */
export type PolicyProfileDocumentInput = z.input<typeof PolicyProfileDocument>;

/** A policy document with its version: what `evaluatePolicy` takes, and what every policy result records. */
export const PolicyProfile = z
  .strictObject({
    ...documentShape,
    version: z.string().min(1).max(128).describe('Derived from the content (sha256:<hex> in the policy service); recorded in every policy result.'),
  })
  .superRefine(documentRules, ALWAYS)
  .meta({ title: 'PolicyProfile', description: 'Execution constraints for a task (Hermit 16.3), as data, with the version of its content.' });
export type PolicyProfile = z.output<typeof PolicyProfile>;
export type PolicyProfileInput = z.input<typeof PolicyProfile>;

/** One problem of a rejected document: a dotted path (`""` for the root) and what is wrong there. */
export interface PolicyDocumentIssue {
  readonly path: string;
  readonly message: string;
}

/** Every issue, one per offending path (an unknown-keys issue is split per key, so each key is its own path). */
function issuesOf(error: z.ZodError): PolicyDocumentIssue[] {
  const out: PolicyDocumentIssue[] = [];
  for (const issue of error.issues) {
    const base = issue.path.map((segment) => String(segment));
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ path: [...base, key].join('.'), message: key === 'version' && base.length === 0 ? VERSION_IS_DERIVED : 'is not a known key' });
    } else {
      out.push({ path: base.join('.'), message: issue.message });
    }
  }
  return out;
}

function invalid(what: string, error: z.ZodError): PolicyError {
  const issues = issuesOf(error);
  return new PolicyError('POLICY_PROFILE_INVALID', `${what} is invalid (${issues.length} problem${issues.length === 1 ? '' : 's'}): ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`, {
    cause: error,
    details: { issues },
  });
}

/** Validates a policy document, throwing POLICY_PROFILE_INVALID whose `details.issues` lists every problem. Defaults are filled in. */
export function parsePolicyDocument(input: unknown): PolicyProfileDocument {
  const parsed = PolicyProfileDocument.safeParse(input);
  if (!parsed.success) throw invalid('policy document', parsed.error);
  return parsed.data;
}

/** Validates `input` as a versioned PolicyProfile, throwing POLICY_PROFILE_INVALID with every problem. */
export function parsePolicyProfile(input: unknown): PolicyProfile {
  const parsed = PolicyProfile.safeParse(input);
  if (!parsed.success) throw invalid('policy profile', parsed.error);
  return parsed.data;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/**
 * A document and its version as one immutable PolicyProfile. The kernel
 * cannot hash (no crypto here): the policy service passes `sha256:<hex>` of
 * the canonical JSON of `parsePolicyDocument(input)`, so equal content (after
 * defaults) has an equal version.
 */
export function versionPolicyProfile(document: PolicyProfileDocument | PolicyProfileDocumentInput, version: string): PolicyProfile {
  const valid = parsePolicyDocument(document);
  return deepFreeze(parsePolicyProfile({ ...valid, version }));
}

/** A validated profile with its globs compiled: prepare once, evaluate many. */
export interface PreparedPolicyProfile {
  readonly profile: PolicyProfile;
  readonly sacred: readonly CompiledGlob[];
  readonly secret: readonly CompiledGlob[];
  readonly sacredExceptions: readonly CompiledGlob[];
}

/** Compiled profiles, cached only for frozen profiles (a mutable object could change after it was compiled). */
const prepared = new WeakMap<object, PreparedPolicyProfile>();

function compileAll(patterns: readonly string[]): CompiledGlob[] {
  return patterns.map((pattern) => compileGlob(pattern)).filter((glob): glob is CompiledGlob => glob !== undefined);
}

/**
 * Validates and compiles a profile: prepare once, evaluate many (OPA). The
 * result is immutable. `evaluatePolicy` accepts a raw profile too; it then
 * re-validates on every call unless the profile object is frozen (the
 * built-ins and `versionPolicyProfile` results are), in which case the
 * compiled form is cached.
 */
export function preparePolicyProfile(profile: PolicyProfileInput | PreparedPolicyProfile): PreparedPolicyProfile {
  if ('profile' in profile && 'sacred' in profile) return profile;
  const cached = prepared.get(profile);
  if (cached !== undefined) return cached;
  const valid = deepFreeze(parsePolicyProfile(profile));
  const result: PreparedPolicyProfile = Object.freeze({
    profile: valid,
    sacred: Object.freeze(compileAll(valid.sacred_paths)),
    secret: Object.freeze(compileAll(valid.secret_paths)),
    sacredExceptions: Object.freeze(compileAll(valid.sacred_exceptions)),
  });
  if (Object.isFrozen(profile)) prepared.set(profile, result);
  return result;
}

// ---------------------------------------------------------------------------
// The built-ins (Hermit 16.3)

/**
 * Every profile that edits files lets a receipt's rollback run, and only with a
 * director's approval: a rollback writes back or removes files on the word of
 * an earlier receipt, its steps judged like write_local / delete_local paths
 * (files_owned, Sacred Scopes, secrets). readonly_analysis, which writes
 * nothing, denies it.
 */
const LOCAL_EDIT = {
  read_local: { outcome: 'allow' },
  write_local: { outcome: 'allow' },
  delete_local: { outcome: 'allow' },
  execute_command: { outcome: 'allow' },
  rollback: { outcome: 'require_approval' },
  publication: { outcome: 'downgrade', downgrade_to: { action_class: 'write_local', restricted_mode: 'external_effects_disabled', draft_dir: DEFAULT_DRAFT_DIR } },
} as const;

const NETWORK_READ = {
  ...LOCAL_EDIT,
  network_read: { outcome: 'allow' },
  network_write: { outcome: 'downgrade', downgrade_to: { action_class: 'network_read', restricted_mode: 'readonly' } },
  credentialed_api_call: { outcome: 'deny' },
} as const;

const RAW_BUILTINS = {
  readonly_analysis: {
    id: 'readonly_analysis',
    description:
      'Read files in the workspace (never secrets). A write or delete is downgraded to a read of the same path in readonly mode. Commands, network, credentials, VCS mutation, publication, payment, memory writes and rollback are denied.',
    action_classes: {
      read_local: { outcome: 'allow' },
      write_local: { outcome: 'downgrade', downgrade_to: { action_class: 'read_local', restricted_mode: 'readonly' } },
      delete_local: { outcome: 'downgrade', downgrade_to: { action_class: 'read_local', restricted_mode: 'readonly' } },
    },
    destructive_commands: 'deny',
  },
  local_edit_allowed: {
    id: 'local_edit_allowed',
    description: `Read the workspace; write and delete inside files_owned; run commands, destructive ones only with approval. A publication becomes a local draft under ${DEFAULT_DRAFT_DIR}/ (when files_owned covers it). A receipt's rollback only with approval. No network, credentials, VCS mutation, payment or memory writes.`,
    action_classes: { ...LOCAL_EDIT, network_read: { outcome: 'deny' }, network_write: { outcome: 'deny' }, credentialed_api_call: { outcome: 'deny' } },
    destructive_commands: 'require_approval',
  },
  network_read_allowed: {
    id: 'network_read_allowed',
    description:
      "As local_edit_allowed, plus HTTP reads (GET, HEAD, OPTIONS) of any host, narrowed by the task's egress list when it has one; a network write is downgraded to a GET of the same URL. A receipt's rollback only with approval. No credentials, VCS mutation, payment or memory writes.",
    action_classes: NETWORK_READ,
    destructive_commands: 'require_approval',
    ceilings: { egress_hosts: ['*'] },
  },
  repo_mutation_gated: {
    id: 'repo_mutation_gated',
    description: 'As network_read_allowed, plus VCS mutations (commit, push, branch, tag), each only with approval of a director; destructive ones (force push, hard reset, branch deletion) need approval too.',
    action_classes: { ...NETWORK_READ, vcs_mutation: { outcome: 'require_approval' } },
    destructive_commands: 'require_approval',
    ceilings: { egress_hosts: ['*'] },
  },
  external_publish_gated: {
    id: 'external_publish_gated',
    description:
      'As repo_mutation_gated, plus publication, network writes and credentialed API calls, each only with approval of a director (publication is gated, not drafted). It lists no secret handle: a call naming one is denied until a copy of this profile lists it.',
    action_classes: {
      ...NETWORK_READ,
      vcs_mutation: { outcome: 'require_approval' },
      publication: { outcome: 'require_approval' },
      network_write: { outcome: 'require_approval' },
      credentialed_api_call: { outcome: 'require_approval' },
    },
    destructive_commands: 'require_approval',
    ceilings: { egress_hosts: ['*'] },
  },
  destructive_denied: {
    id: 'destructive_denied',
    description: 'As local_edit_allowed, but destructive commands are denied outright instead of going to approval.',
    action_classes: { ...LOCAL_EDIT, network_read: { outcome: 'deny' }, network_write: { outcome: 'deny' }, credentialed_api_call: { outcome: 'deny' } },
    destructive_commands: 'deny',
  },
} as const satisfies Record<string, PolicyProfileDocumentInput>;

export type BuiltinPolicyProfileId = keyof typeof RAW_BUILTINS;

/**
 * The six built-in profiles of Hermit 16.3 as documents (parsed, defaults
 * filled in, deeply frozen). The policy service versions them by content
 * like any other document.
 */
export const BUILTIN_POLICY_DOCUMENTS: Readonly<Record<BuiltinPolicyProfileId, PolicyProfileDocument>> = deepFreeze(
  Object.fromEntries(Object.entries(RAW_BUILTINS).map(([id, raw]) => [id, parsePolicyDocument(raw)])) as Record<BuiltinPolicyProfileId, PolicyProfileDocument>,
);

/**
 * The built-ins versioned `builtin:<id>`: a convenience for tests, fixtures
 * and tools that have no profile store. Services evaluate with the versions
 * the policy profile store derives from content.
 */
export const BUILTIN_POLICY_PROFILES: Readonly<Record<BuiltinPolicyProfileId, PolicyProfile>> = deepFreeze(
  Object.fromEntries(Object.entries(BUILTIN_POLICY_DOCUMENTS).map(([id, document]) => [id, versionPolicyProfile(document, `builtin:${id}`)])) as Record<BuiltinPolicyProfileId, PolicyProfile>,
);

/** A built-in profile by id (versioned `builtin:<id>`), or POLICY_PROFILE_UNKNOWN. See BUILTIN_POLICY_PROFILES. */
export function builtinPolicyProfile(id: string): PolicyProfile {
  if (!Object.hasOwn(BUILTIN_POLICY_PROFILES, id)) {
    throw new PolicyError('POLICY_PROFILE_UNKNOWN', `no built-in policy profile ${JSON.stringify(id)}`, { details: { id, known: Object.keys(BUILTIN_POLICY_PROFILES) } });
  }
  return BUILTIN_POLICY_PROFILES[id as BuiltinPolicyProfileId];
}
