import { ActionClass, type ActionRequest, type PolicyOutcome } from '@writ/contracts';
import { BUILTIN_POLICY_DOCUMENTS, BUILTIN_POLICY_PROFILES, versionPolicyProfile, type BuiltinPolicyProfileId, type PolicyProfile } from '../src/policy/policy-profile.js';
import type { PolicyFacts } from '../src/policy/request-view.js';
import { request } from './samples.js';

/**
 * The cross product every built-in profile × every action class × every
 * scope case, for a table-driven suite (OPA style: note, input, want). The
 * expectations live in `MATRIX_EXPECTATIONS` as one row per profile and
 * class, so a change in any profile fails the rows it moves.
 */
export const SCOPE_CASES = [
  'inside',
  'outside',
  'sacred',
  'sacred_both',
  'sacred_profile_only',
  'sacred_task_only',
  'sacred_both_outside',
  'secret',
  'egress_allowed',
  'egress_denied',
  'destructive',
] as const;
export type ScopeCase = (typeof SCOPE_CASES)[number];

export const PROFILE_IDS = Object.keys(BUILTIN_POLICY_PROFILES) as BuiltinPolicyProfileId[];
export const ACTION_CLASSES = ActionClass.options;

/** `drafts/**` so that a publication downgraded to a draft has somewhere to go. */
const FILES_OWNED = ['src/**', 'drafts/**'];
const ALLOWED_URL = 'https://api.example.com/v1/items';
const DENIED_URL = 'https://evil.example.net/collect';
const DESTRUCTIVE_ARGV = ['git', 'push', '--force', 'origin', 'main'];
const HASH_BEFORE = 'b'.repeat(64);
const HASH_AFTER = 'a'.repeat(64);
const HASH_RECEIPT = 'c'.repeat(64);

interface Resource {
  readonly path?: string;
  readonly url?: string;
}

const SCOPE_RESOURCE: Readonly<Record<ScopeCase, Resource>> = {
  inside: { path: 'src/a.ts' },
  outside: { path: 'lib/a.ts' },
  sacred: { path: 'src/package.json' },
  sacred_both: { path: 'src/package.json' },
  sacred_profile_only: { path: 'src/package.json' },
  sacred_task_only: { path: 'src/package.json' },
  sacred_both_outside: { path: 'package.json' },
  secret: { path: 'src/.env' },
  egress_allowed: { url: ALLOWED_URL },
  egress_denied: { url: DENIED_URL },
  destructive: { path: 'src/a.ts' },
};

/** One request per class naming the scope case's resource the way that class names resources. */
export function matrixRequest(cls: ActionClass, scope: ScopeCase): ActionRequest {
  const { path, url } = SCOPE_RESOURCE[scope];
  const argv: { argv?: string[] } = scope === 'destructive' ? { argv: DESTRUCTIVE_ARGV } : {};
  const base = { action_class: cls, action_request_id: `ar-${cls.replace(/_/g, '-')}-${scope.replace(/_/g, '-')}` } as const;
  switch (cls) {
    case 'read_local':
    case 'write_local':
    case 'delete_local': {
      const local = path ?? 'src/a.ts';
      const content: { content?: string } = cls === 'write_local' ? { content: 'x' } : {};
      return request({ ...base, target_resources: url === undefined ? [local] : [local, url], params: { path: local, ...content, ...argv } });
    }
    case 'execute_command':
      if (scope === 'destructive') return request({ ...base, target_resources: ['.'], params: { argv: DESTRUCTIVE_ARGV } });
      return url === undefined
        ? request({ ...base, target_resources: ['.'], params: { argv: ['touch', path ?? 'src/a.ts'] } })
        : request({ ...base, target_resources: [url], params: { argv: ['curl', '-sS', url] } });
    case 'vcs_mutation':
      return request({ ...base, target_resources: ['repo:app@refs/heads/main', ...(path === undefined ? [] : [path]), ...(url === undefined ? [] : [url])], params: { ...argv } });
    case 'network_read':
    case 'network_write':
    case 'credentialed_api_call':
    case 'publication':
    case 'payment': {
      const target = url ?? ALLOWED_URL;
      const method = cls === 'network_read' ? 'GET' : 'POST';
      return request({ ...base, target_resources: path === undefined ? [target] : [target, path], params: { url: target, method, ...argv } });
    }
    case 'memory_write':
      return request({ ...base, target_resources: ['memory:notes', ...(path === undefined ? [] : [path]), ...(url === undefined ? [] : [url])], params: { ...argv } });
    case 'rollback': {
      // A receipt's rollback: one step writing the pre-image of the case's path back (none for a URL: nothing local to undo).
      const steps = path === undefined ? [] : [{ action_class: 'write_local', path, expected_sha256: HASH_AFTER, restore_artifact_ref: 'artifact:art-before', restore_sha256: HASH_BEFORE }];
      return request({ ...base, target_resources: [...(path === undefined ? [] : [path]), ...(url === undefined ? [] : [url])], params: { receipt_id: 'rct-matrix', receipt_hash: HASH_RECEIPT, steps, ...argv } });
    }
  }
}

const profileWithException = new Map<BuiltinPolicyProfileId, PolicyProfile>();

/** The profile for a case: the built-in, or the built-in with `**\/package.json` as a profile exception. */
export function matrixProfile(id: BuiltinPolicyProfileId, scope: ScopeCase): PolicyProfile {
  if (scope !== 'sacred_both' && scope !== 'sacred_profile_only' && scope !== 'sacred_both_outside') return BUILTIN_POLICY_PROFILES[id];
  let profile = profileWithException.get(id);
  if (profile === undefined) {
    profile = versionPolicyProfile({ ...BUILTIN_POLICY_DOCUMENTS[id], sacred_exceptions: ['**/package.json'] }, `test:${id}+package.json`);
    profileWithException.set(id, profile);
  }
  return profile;
}

export function matrixFacts(scope: ScopeCase): PolicyFacts {
  const facts: PolicyFacts = { files_owned: FILES_OWNED, workspace_root: '/work/main' };
  switch (scope) {
    case 'sacred_both':
    case 'sacred_task_only':
      return { ...facts, sacred_exceptions: ['src/package.json'] };
    case 'sacred_both_outside':
      return { ...facts, sacred_exceptions: ['package.json'] };
    case 'egress_allowed':
    case 'egress_denied':
      return { ...facts, egress_hosts: ['api.example.com'] };
    default:
      return facts;
  }
}

export const OUTCOME_LETTER: Readonly<Record<PolicyOutcome, string>> = { allow: 'A', require_approval: 'R', deny: 'D', downgrade: 'G' };
