import {
  parseCapabilityGrantClaims,
  type ActionRequest,
  type CapabilityGrantClaims,
  type GrantConstraints,
  type IssueGrant,
  type PolicyCapabilityScope,
  type RepoScope,
  type ResourceScope,
} from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import { egressAllowed } from '@writ/kernel';
import { derivedId } from './event-drafts.js';

/**
 * The grant id of an attempt's authorization: `gnt-` + hash of the attempt,
 * the policy result and the approval. A redelivered issue-grant derives the
 * same id (one grant); a re-authorization after drift cites a new policy
 * result and so gets a new grant; a renewal (the grant before it expired
 * unused) is a grant of its own, `renewal` in the hash.
 */
export function grantIdFor(command: Pick<IssueGrant, 'attempt_id' | 'policy_result_id' | 'approval_id' | 'renewal'>): string {
  const renewal = command.renewal === undefined ? '' : `:renewal:${command.renewal}`;
  return derivedId('gnt', `${command.attempt_id}:${command.policy_result_id}:${command.approval_id ?? 'direct'}${renewal}`);
}

/** SHA-256 of the RFC 8785 canonical params: the grant is good for exactly these params. */
export function paramsSha256(params: ActionRequest['params']): string {
  return sha256Hex(canonicalJson(params));
}

const HOST_PATTERN = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*(?::\d{1,5})?$/;

/** `host` or `host:port` (explicit port only) of an http(s) URL; undefined for what a grant cannot name (IPv6 literals). */
export function urlHost(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  const host = parsed.port === '' ? parsed.hostname.toLowerCase() : `${parsed.hostname.toLowerCase()}:${parsed.port}`;
  return HOST_PATTERN.test(host) ? host : undefined;
}

const URL_RESOURCE = /^https?:\/\//i;
const REPO_RESOURCE = /^repo:(.+)@([^@]+)$/;
/** `memory:<scope>` and other `<scheme>:` names are not filesystem paths. */
const OTHER_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/**
 * What the grant may touch (Hermit 16.6), least privilege: the request's
 * target resources and `params.path` as paths (relative to the cell home),
 * the hosts of its URLs (`target_resources` and `params.url`) as the egress
 * allowlist, and `repo:<name>@<ref>` resources as repo/ref constraints.
 * Nothing else: no host means no network.
 */
export function resourceScopeOf(request: ActionRequest): ResourceScope {
  const paths = new Set<string>();
  const hosts = new Set<string>();
  const repos = new Map<string, Set<string>>();
  const addHost = (url: string) => {
    const host = urlHost(url);
    if (host !== undefined) hosts.add(host);
  };
  for (const resource of request.target_resources) {
    const repo = REPO_RESOURCE.exec(resource);
    if (URL_RESOURCE.test(resource)) addHost(resource);
    else if (repo !== null) repos.set(repo[1] as string, (repos.get(repo[1] as string) ?? new Set()).add(repo[2] as string));
    else if (!OTHER_SCHEME.test(resource)) paths.add(resource);
  }
  if (request.params.path !== undefined) paths.add(request.params.path);
  if (request.params.url !== undefined) addHost(request.params.url);
  const repoScopes: RepoScope[] = [...repos].map(([repo, refs]) => ({ repo, refs: [...refs] }));
  return {
    paths: [...paths],
    hosts: [...hosts],
    ...(repoScopes.length > 0 || request.action_class === 'vcs_mutation' ? { repos: repoScopes } : {}),
  };
}

/** The secret handles a request names (`params.secret_handle`, `params.secret_handles`), as the policy kernel reads them. */
export function requestedSecretHandles(params: ActionRequest['params']): string[] {
  const names: string[] = [];
  if (typeof params['secret_handle'] === 'string') names.push(params['secret_handle']);
  const many: unknown = params['secret_handles'];
  if (Array.isArray(many)) for (const name of many) if (typeof name === 'string') names.push(name);
  return [...new Set(names)];
}

/**
 * The request's needs narrowed by policy's capability scope (least privilege,
 * issue 4): egress = the request's concrete hosts that the scope's patterns
 * allow (`*` is a policy pattern, never put in a grant); secret handles = those
 * the request names that the scope lists; wall clock = the scope's ceiling, or
 * the request's shorter `params.timeout_ms`. Without a scope (an evaluation
 * recorded before scopes existed) the grant names no secret handle and no wall
 * clock, and keeps the request's hosts, as before.
 */
export function scopedCapabilities(request: ActionRequest, scope: PolicyCapabilityScope | undefined): { hosts: string[]; constraints: GrantConstraints } {
  const hosts = resourceScopeOf(request).hosts;
  if (scope === undefined) return { hosts, constraints: {} };
  const asked = request.params.timeout_ms;
  const handles = requestedSecretHandles(request.params).filter((handle) => scope.secret_handles.includes(handle));
  return {
    hosts: hosts.filter((host) => egressAllowed(scope.egress_hosts, host)),
    constraints: {
      ...(handles.length > 0 ? { secret_handles: handles } : {}),
      timeout_ms: typeof asked === 'number' ? Math.min(asked, scope.max_wall_clock_ms) : scope.max_wall_clock_ms,
    },
  };
}

export interface GrantClaimsInput {
  readonly command: IssueGrant;
  readonly grantId: string;
  /** The approval service principal (iss). */
  readonly issuer: string;
  readonly audience: string;
  /** The authority behind the grant: the approver, or the policy engine for a direct allow. */
  readonly issuedBy: string;
  readonly nowSeconds: number;
  readonly ttlSeconds: number;
  /** `capability_scope` of the policy evaluation the grant rests on (policy.evaluated). */
  readonly scope?: PolicyCapabilityScope;
}

/** The CapabilityGrant claims for one attempt: one use, bound to its task, attempt, class, scope (narrowed by policy's capability scope) and params. */
export function buildGrantClaims(input: GrantClaimsInput): CapabilityGrantClaims {
  const { command } = input;
  const request = command.action_request;
  const capabilities = scopedCapabilities(request, input.scope);
  return parseCapabilityGrantClaims({
    iss: input.issuer,
    sub: command.issued_to,
    aud: input.audience,
    jti: input.grantId,
    iat: input.nowSeconds,
    exp: input.nowSeconds + input.ttlSeconds,
    task_id: command.task_id,
    step_id: command.step_id,
    attempt_id: command.attempt_id,
    action_class: request.action_class,
    resource_scope: { ...resourceScopeOf(request), hosts: capabilities.hosts },
    max_uses: 1,
    issued_by_principal_id: input.issuedBy,
    ...(command.approval_id === null ? {} : { approval_ref: `approval:${command.approval_id}` }),
    policy_result_ref: `policy_result:${command.policy_result_id}`,
    constraints: { params_sha256: paramsSha256(request.params), ...capabilities.constraints },
  });
}
