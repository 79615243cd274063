import { z } from 'zod';
import { ActionClass } from './action-class.js';
import { parseContract, safeParseContract, type ParseResult } from './contract-error.js';
import { ExecutionMode } from './execution-mode.js';
import { Id, Name, Ref, Sha256Hex } from './ids.js';
import { LIMITS } from './limits.js';
import { field, isPresent, withRules } from './rules.js';
import { FilePath } from './text.js';

/** JWT NumericDate (RFC 7519): whole seconds since the Unix epoch, up to 9999-12-31. */
export const NumericDate = z.int().min(0).max(253_402_300_799);
export type NumericDate = z.infer<typeof NumericDate>;

/** `host`, `*.host` or either with `:port`; matched exactly (case-insensitively), never as a substring. */
const HostPattern = z
  .string()
  .min(1)
  .max(253 + 6)
  .regex(/^(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::\d{1,5})?$/, 'must be "host", "*.host" or either with ":port"');

/** One repository and the refs the grant may touch. */
export const RepoScope = z.strictObject({
  repo: z.string().min(1).max(LIMITS.url).describe('Repository URL or name as the executor knows it.'),
  refs: z.array(z.string().min(1).max(LIMITS.ref)).min(1).max(LIMITS.shortListItems).describe('Ref patterns, e.g. "refs/heads/writ/*".'),
});
export type RepoScope = z.infer<typeof RepoScope>;

/** What the grant may touch (Hermit 16.6). Empty lists grant nothing of that kind. */
export const ResourceScope = z.strictObject({
  paths: z.array(FilePath).max(LIMITS.listItems).describe('Filesystem path patterns, relative to the cell home.'),
  hosts: z.array(HostPattern).max(LIMITS.targetResources).describe('Network egress allowlist; empty means no network.'),
  repos: z.array(RepoScope).max(LIMITS.shortListItems).optional().describe('Repository and ref constraints for vcs_mutation.'),
});
export type ResourceScope = z.infer<typeof ResourceScope>;

/** Further limits on how the grant may be used. */
export const GrantConstraints = z.strictObject({
  execution_mode: ExecutionMode.optional().describe('The cell runs in this mode.'),
  secret_handles: z
    .array(Name)
    .max(LIMITS.shortListItems)
    .optional()
    .describe('Secret handles the executor may resolve at execution time; values never appear in the grant.'),
  params_sha256: Sha256Hex.optional().describe('SHA-256 of the RFC 8785 canonical params the grant was minted for; other params are refused.'),
  timeout_ms: z.int().min(1).max(86_400_000).optional().describe('Wall-clock limit of one use.'),
  max_output_bytes: z.int().min(0).max(1_073_741_824).optional().describe('Cap on captured output per use.'),
});
export type GrantConstraints = z.infer<typeof GrantConstraints>;

/**
 * The payload of a capability grant (Hermit 8.12, 16.6): an EdDSA-signed JWS
 * whose registered JWT claims carry the grant's identity and lifetime, and
 * whose Writ claims bind it to one task, attempt, action class and scope.
 *
 * Mapping to the 8.12 field names: `jti` = grant_id, `sub` =
 * issued_to_principal_id, `iat` = issued_at, `exp` = expires_at. Revocation
 * and consumption (`revoked_at`, `consumed_at`) are events, not claims.
 */
export const CapabilityGrantClaims = withRules(
  z.strictObject({
    iss: Id.describe('Issuer: principal_id of the service that minted and signed the grant (its key is in the JWKS).'),
    sub: Id.describe('issued_to_principal_id: the executor principal allowed to use the grant.'),
    aud: Name.describe('Audience: the executor pool that must accept it, e.g. "writ-executor".'),
    jti: Id.describe('grant_id: unique; each use is claimed in the log against it.'),
    iat: NumericDate.describe('issued_at, in seconds since the epoch.'),
    nbf: NumericDate.optional().describe('Not valid before this instant, in seconds since the epoch.'),
    exp: NumericDate.describe('expires_at, in seconds since the epoch; an expired grant is invalid even if approved.'),
    task_id: Id.describe('The task the grant is bound to.'),
    step_id: Id.describe('The step the grant is bound to.'),
    attempt_id: Id.describe('The attempt the grant is bound to; any other attempt is refused.'),
    action_class: ActionClass.describe('The one action class authorized.'),
    resource_scope: ResourceScope,
    max_uses: z.int().min(1).max(1_000).describe('How many times the grant may be consumed.'),
    issued_by_principal_id: Id.describe('The authority behind the grant: the approver, or the policy engine for a direct allow.'),
    approval_ref: Ref.optional().describe('The granted Approval, when one was required.'),
    policy_result_ref: Ref.optional().describe('The PolicyResult that allowed or required approval.'),
    constraints: GrantConstraints.optional(),
  }),
  (claims, report) => {
    const { iat, nbf, exp } = claims;
    if (typeof iat === 'number' && typeof exp === 'number' && exp <= iat) report(['exp'], 'must be after iat');
    if (typeof nbf === 'number') {
      if (typeof iat === 'number' && nbf < iat) report(['nbf'], 'must not be before iat');
      if (typeof exp === 'number' && nbf >= exp) report(['nbf'], 'must be before exp');
    }
    if (claims.action_class === 'vcs_mutation' && !isPresent(field(claims.resource_scope, 'repos'))) {
      report(['resource_scope', 'repos'], 'is required for vcs_mutation');
    }
  },
).meta({ title: 'CapabilityGrantClaims', description: 'JWT claims of a capability grant (Hermit 8.12, 16.6).' });
export type CapabilityGrantClaims = z.infer<typeof CapabilityGrantClaims>;

/** Parses grant claims, throwing a `ContractError` (CONTRACT_INVALID) listing every offending path. */
export function parseCapabilityGrantClaims(input: unknown): CapabilityGrantClaims {
  return parseContract('CapabilityGrantClaims', CapabilityGrantClaims, input);
}

/** Parses grant claims without throwing. */
export function safeParseCapabilityGrantClaims(input: unknown): ParseResult<CapabilityGrantClaims> {
  return safeParseContract('CapabilityGrantClaims', CapabilityGrantClaims, input);
}
