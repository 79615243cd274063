import { ActionClass, ExecutionMode, LIMITS, Name, PolicyOutcome, RiskBand, Text, toContractIssues } from '@writ/contracts';
import { z } from 'zod';
import { compileGlob, GlobPattern, type CompiledGlob } from '../shared/glob.js';
import { PolicyError } from './policy.errors.js';


/** What a `downgrade` rewrites a request into (Hermit 11.4). */
export const DowngradeTarget = z.strictObject({
  action_class: ActionClass,
  restricted_mode: ExecutionMode.optional(),
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
 * The rewrites the kernel can perform for a downgrade: a mutation to a
 * read of the same target, a network write to a read, or the same class in a
 * restricted execution mode.
 */
export const SUPPORTED_DOWNGRADES: Readonly<Partial<Record<ActionClass, readonly ActionClass[]>>> = Object.freeze({
  write_local: ['read_local'],
  delete_local: ['read_local'],
  network_write: ['network_read'],
});

export function isSupportedDowngrade(from: ActionClass, to: DowngradeTarget): boolean {
  if (from === to.action_class) return to.restricted_mode !== undefined;
  return SUPPORTED_DOWNGRADES[from]?.includes(to.action_class) ?? false;
}

/**
 * A policy profile (Hermit 16.3) as data. Deny by default: an action class
 * the profile does not list is denied. `files_owned` (from the task) is the
 * hard write boundary; `sacred_paths` are never written even inside it;
 * `secret_paths` are never read or written (secrets stay out of model
 * context, Hermit 6.3).
 */
export const PolicyProfile = z
  .strictObject({
    id: Name,
    version: z.string().min(1).max(128).describe('Bumped on every change; recorded in every policy result.'),
    description: Text,
    action_classes: z.partialRecord(ActionClass, ActionClassRule).describe('Per action class rule; absent classes are denied.'),
    destructive_commands: z.enum(['require_approval', 'deny']).describe('What a destructive execute_command gets.'),
    files_owned: z.enum(['enforce', 'require_approval']).describe('Writes outside files_owned: denied, or allowed only with approval (scope expansion).'),
    sacred_paths: z.array(GlobPattern).max(LIMITS.listItems),
    secret_paths: z.array(GlobPattern).max(LIMITS.listItems),
    approval: z.strictObject({ expires_in_seconds: z.int().min(60).max(604_800) }),
    witness_waived_for: z.array(ActionClass).max(12).optional().describe('Classes whose delayed execution needs no state witness (Hermit 16.8 "unless policy explicitly waives it").'),
  })
  .superRefine((profile, ctx) => {
    for (const [actionClass, rule] of Object.entries(profile.action_classes) as [ActionClass, ActionClassRule | undefined][]) {
      if (rule?.downgrade_to !== undefined && !isSupportedDowngrade(actionClass, rule.downgrade_to)) {
        ctx.addIssue({
          code: 'custom',
          path: ['action_classes', actionClass, 'downgrade_to'],
          message: `cannot downgrade ${actionClass} to ${rule.downgrade_to.action_class}${rule.downgrade_to.restricted_mode === undefined ? ' without a restricted_mode' : ''}`,
        });
      }
    }
  })
  .meta({ title: 'PolicyProfile', description: 'Execution constraints for a task (Hermit 16.3), as data.' });
export type PolicyProfile = z.infer<typeof PolicyProfile>;

/** A validated profile with its globs compiled: prepare once, evaluate many. */
export interface PreparedPolicyProfile {
  readonly profile: PolicyProfile;
  readonly sacred: readonly CompiledGlob[];
  readonly secret: readonly CompiledGlob[];
}

/** Compiled profiles, cached only for frozen profiles (a mutable object could change after it was compiled). */
const prepared = new WeakMap<object, PreparedPolicyProfile>();

/** Validates `input` as a PolicyProfile, throwing POLICY_PROFILE_INVALID with every offending path. */
export function parsePolicyProfile(input: unknown): PolicyProfile {
  const parsed = PolicyProfile.safeParse(input);
  if (!parsed.success) {
    const issues = toContractIssues(parsed.error);
    throw new PolicyError('POLICY_PROFILE_INVALID', `policy profile is invalid: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`, {
      cause: parsed.error,
      details: { issues },
    });
  }
  return parsed.data;
}

function compileAll(patterns: readonly string[]): CompiledGlob[] {
  return patterns.map((pattern) => compileGlob(pattern)).filter((glob): glob is CompiledGlob => glob !== undefined);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/**
 * Validates and compiles a profile: prepare once, evaluate many (OPA). The
 * result is immutable. `evaluatePolicy` accepts a raw profile too; it then
 * re-validates on every call unless the profile object is frozen (the
 * built-ins are), in which case the compiled form is cached.
 */
export function preparePolicyProfile(profile: PolicyProfile | PreparedPolicyProfile): PreparedPolicyProfile {
  if ('profile' in profile && 'sacred' in profile) return profile;
  const cached = prepared.get(profile);
  if (cached !== undefined) return cached;
  const valid = deepFreeze(parsePolicyProfile(profile));
  const result: PreparedPolicyProfile = Object.freeze({ profile: valid, sacred: Object.freeze(compileAll(valid.sacred_paths)), secret: Object.freeze(compileAll(valid.secret_paths)) });
  if (Object.isFrozen(profile)) prepared.set(profile, result);
  return result;
}

/** Paths whose content is secret: never read into model context, never written (OmegaOS Sacred Scopes, secrets policy). */
export const DEFAULT_SECRET_PATHS: readonly string[] = Object.freeze([
  '**/.env',
  '**/.env.*',
  '**/.ssh/**',
  '**/.aws/**',
  '**/.gnupg/**',
  '**/*.pem',
  '**/*.key',
  '**/id_rsa*',
  '**/id_ed25519*',
  '**/credentials.json',
  '**/.netrc',
  '**/.npmrc',
  '**/secrets/**',
]);

/** Paths never written by an agent, even inside files_owned (OmegaOS Sacred Scopes). */
export const DEFAULT_SACRED_PATHS: readonly string[] = Object.freeze([...DEFAULT_SECRET_PATHS, '**/.git', '**/.git/**', '**/.gitconfig']);

const common = {
  files_owned: 'enforce',
  sacred_paths: [...DEFAULT_SACRED_PATHS],
  secret_paths: [...DEFAULT_SECRET_PATHS],
  approval: { expires_in_seconds: 3_600 },
} as const;

/** Built-in profiles (Hermit 16.3 examples), deeply frozen. */
export const BUILTIN_POLICY_PROFILES = deepFreeze({
  readonly_analysis: parsePolicyProfile({
    id: 'readonly_analysis',
    version: '1',
    description: 'Read local files and the network; writes are downgraded to reads of the same target; everything else is denied.',
    action_classes: {
      read_local: { outcome: 'allow' },
      network_read: { outcome: 'allow' },
      write_local: { outcome: 'downgrade', downgrade_to: { action_class: 'read_local', restricted_mode: 'readonly' } },
      delete_local: { outcome: 'downgrade', downgrade_to: { action_class: 'read_local', restricted_mode: 'readonly' } },
      network_write: { outcome: 'downgrade', downgrade_to: { action_class: 'network_read', restricted_mode: 'readonly' } },
    },
    destructive_commands: 'deny',
    ...common,
  }),
  local_edit_allowed: parsePolicyProfile({
    id: 'local_edit_allowed',
    version: '1',
    description: 'Read anywhere in the workspace, write and delete inside files_owned, run commands; destructive commands need approval; network and credentials are denied.',
    action_classes: {
      read_local: { outcome: 'allow' },
      write_local: { outcome: 'allow' },
      delete_local: { outcome: 'allow' },
      execute_command: { outcome: 'allow' },
      network_read: { outcome: 'deny' },
      network_write: { outcome: 'deny' },
      credentialed_api_call: { outcome: 'deny' },
    },
    destructive_commands: 'require_approval',
    ...common,
  }),
  destructive_denied: parsePolicyProfile({
    id: 'destructive_denied',
    version: '1',
    description: 'As local_edit_allowed, but destructive commands are denied outright instead of going to approval.',
    action_classes: {
      read_local: { outcome: 'allow' },
      write_local: { outcome: 'allow' },
      delete_local: { outcome: 'allow' },
      execute_command: { outcome: 'allow' },
      network_read: { outcome: 'deny' },
      network_write: { outcome: 'deny' },
      credentialed_api_call: { outcome: 'deny' },
    },
    destructive_commands: 'deny',
    ...common,
  }),
} satisfies Record<string, PolicyProfile>);

export type BuiltinPolicyProfileId = keyof typeof BUILTIN_POLICY_PROFILES;

/** A built-in profile by id, or POLICY_PROFILE_UNKNOWN. */
export function builtinPolicyProfile(id: string): PolicyProfile {
  if (!Object.hasOwn(BUILTIN_POLICY_PROFILES, id)) {
    throw new PolicyError('POLICY_PROFILE_UNKNOWN', `no built-in policy profile ${JSON.stringify(id)}`, { details: { id, known: Object.keys(BUILTIN_POLICY_PROFILES) } });
  }
  return BUILTIN_POLICY_PROFILES[id as BuiltinPolicyProfileId];
}
