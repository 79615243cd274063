import type { ActionRequest, PolicyOutcome, RiskBand } from '@writ/contracts';
import { BUILTIN_POLICY_DOCUMENTS, versionPolicyProfile, type BuiltinPolicyProfileId, type PolicyProfileDocumentInput, type PolicyProfileInput } from '../src/policy/policy-profile.js';
import type { PolicyFacts } from '../src/policy/request-view.js';
import { command, request } from './samples.js';

/**
 * Policy cases as a table (OPA style): each row is one evaluation and what
 * must come out. `want.reasons` lists reason codes that must be present;
 * `want.absent` codes that must not. The runner prints the note on failure.
 */
export interface PolicyCase {
  readonly note: string;
  /** A built-in profile id, or a profile given inline. */
  readonly profile: BuiltinPolicyProfileId | PolicyProfileInput;
  readonly request: ActionRequest;
  readonly facts?: Partial<PolicyFacts>;
  readonly want: {
    readonly outcome: PolicyOutcome;
    readonly reasons?: readonly string[];
    readonly absent?: readonly string[];
    readonly risk_band?: RiskBand;
    readonly witness_required?: boolean;
    /** For downgrade: the action class of the rewritten request. */
    readonly downgraded_to?: string;
  };
}

export const FACTS: PolicyFacts = { files_owned: ['src/**', 'tests/**/*.test.ts'], workspace_root: '/work/main' };

const write = (path: string, extra: Partial<ActionRequest> = {}) => request({ target_resources: [path], params: { path, content: 'x' }, ...extra });
const read = (path: string) => request({ action_class: 'read_local', target_resources: [path], params: { path } });
const del = (path: string) => request({ action_class: 'delete_local', target_resources: [path], params: { path } });
const net = (cls: 'network_read' | 'network_write', url: string, method: string) =>
  request({ action_class: cls, target_resources: [url], params: { url, method: method as 'GET' } });
const other = (cls: ActionRequest['action_class'], target: string, extra: Partial<ActionRequest> = {}) => request({ action_class: cls, target_resources: [target], params: {}, ...extra });

/** A built-in document with some fields changed, versioned `test`. */
export const variant = (id: BuiltinPolicyProfileId, overrides: Partial<PolicyProfileDocumentInput>): PolicyProfileInput =>
  versionPolicyProfile({ ...BUILTIN_POLICY_DOCUMENTS[id], ...overrides }, 'test');

const handleCall = (handle: unknown, url = 'https://api.stripe.com/v1/charges') =>
  request({ action_class: 'credentialed_api_call', target_resources: [url], params: { url, method: 'POST', secret_handle: handle as string } });
const publish = (url = 'https://blog.example.com/posts') => request({ action_class: 'publication', target_resources: [url], params: { url, method: 'POST', body: '# Release notes', headers: { authorization: 'Bearer x' } } });

const custom = (overrides: Partial<PolicyProfileInput>): PolicyProfileInput => ({
  id: 'custom_profile',
  version: '7',
  description: 'A profile given inline by a case.',
  action_classes: { read_local: { outcome: 'allow' }, write_local: { outcome: 'allow' } },
  destructive_commands: 'require_approval',
  files_owned: 'enforce',
  sacred_paths: ['**/.env'],
  secret_paths: ['**/.env'],
  approval: { expires_in_seconds: 600 },
  ...overrides,
});

export const POLICY_CASES: readonly PolicyCase[] = [
  // local_edit_allowed: files_owned is the hard write boundary
  { note: 'write inside files_owned is allowed', profile: 'local_edit_allowed', request: write('src/a.ts'), want: { outcome: 'allow', risk_band: 'moderate', reasons: ['action_class_allowed'] } },
  { note: 'write to a test file matched by a ** glob', profile: 'local_edit_allowed', request: write('tests/unit/deep/x.test.ts'), want: { outcome: 'allow' } },
  { note: 'write to a non-test file beside owned tests is denied', profile: 'local_edit_allowed', request: write('tests/unit/helper.ts'), want: { outcome: 'deny', reasons: ['write_outside_files_owned'] } },
  { note: 'write outside files_owned is denied', profile: 'local_edit_allowed', request: write('lib/a.ts'), want: { outcome: 'deny', reasons: ['write_outside_files_owned'], risk_band: 'high' } },
  { note: 'a sibling that shares the prefix is outside', profile: 'local_edit_allowed', request: write('src2/a.ts'), want: { outcome: 'deny', reasons: ['write_outside_files_owned'] } },
  { note: '.. back out of an owned dir is outside', profile: 'local_edit_allowed', request: write('src/../lib/a.ts'), want: { outcome: 'deny', reasons: ['write_outside_files_owned'] } },
  { note: '.. escape of the workspace is refused', profile: 'local_edit_allowed', request: write('src/../../etc/passwd'), want: { outcome: 'deny', reasons: ['path_invalid'], risk_band: 'critical' } },
  { note: 'symlink-ish name that climbs out is refused', profile: 'local_edit_allowed', request: write('src/link/../../../root/.bashrc'), want: { outcome: 'deny', reasons: ['path_invalid'] } },
  { note: 'absolute path outside the workspace is refused', profile: 'local_edit_allowed', request: write('/etc/passwd'), want: { outcome: 'deny', reasons: ['path_invalid'] } },
  { note: 'absolute path inside the workspace root is read as relative', profile: 'local_edit_allowed', request: write('/work/main/src/a.ts'), want: { outcome: 'allow' } },
  { note: 'absolute path that only shares the root prefix is refused', profile: 'local_edit_allowed', request: write('/work/mainframe/src/a.ts'), want: { outcome: 'deny', reasons: ['path_invalid'] } },
  { note: 'absolute path climbing out of the root is refused', profile: 'local_edit_allowed', request: write('/work/main/src/../../../etc/passwd'), want: { outcome: 'deny', reasons: ['path_invalid'] } },
  { note: 'home-relative path is refused', profile: 'local_edit_allowed', request: write('~/.bashrc'), want: { outcome: 'deny', reasons: ['path_invalid'] } },
  { note: 'backslash disguise is refused', profile: 'local_edit_allowed', request: write('src\\..\\..\\etc\\passwd'), want: { outcome: 'deny', reasons: ['path_invalid'] } },
  { note: 'a target resource outside files_owned is denied even when params.path is inside', profile: 'local_edit_allowed', request: write('src/a.ts', { target_resources: ['src/a.ts', 'lib/b.ts'] }), want: { outcome: 'deny', reasons: ['write_outside_files_owned'] } },
  { note: 'a URL as a local file target is refused', profile: 'local_edit_allowed', request: write('src/a.ts', { target_resources: ['src/a.ts', 'file:///etc/passwd'] }), want: { outcome: 'deny', reasons: ['resource_not_a_path'] } },
  { note: '.env inside files_owned is secret (never written)', profile: 'local_edit_allowed', request: write('src/.env'), want: { outcome: 'deny', reasons: ['secret_path'], risk_band: 'critical' } },
  { note: '.git inside files_owned is sacred', profile: 'local_edit_allowed', request: write('src/.git/hooks/pre-commit'), want: { outcome: 'deny', reasons: ['sacred_path'] } },
  { note: 'reading outside files_owned is allowed (read is always permitted)', profile: 'local_edit_allowed', request: read('lib/anything.ts'), want: { outcome: 'allow', risk_band: 'low' } },
  { note: 'reading .env is denied (secrets stay out of model context)', profile: 'local_edit_allowed', request: read('config/.env.production'), want: { outcome: 'deny', reasons: ['secret_path'] } },
  { note: 'reading an SSH key is denied', profile: 'local_edit_allowed', request: read('/work/main/.ssh/id_ed25519'), want: { outcome: 'deny', reasons: ['secret_path'] } },
  { note: 'reading outside the workspace is refused', profile: 'local_edit_allowed', request: read('../other-project/src/a.ts'), want: { outcome: 'deny', reasons: ['path_invalid'] } },
  { note: 'delete inside files_owned is allowed', profile: 'local_edit_allowed', request: del('src/old.ts'), want: { outcome: 'allow' } },
  { note: 'delete outside files_owned is denied', profile: 'local_edit_allowed', request: del('lib/old.ts'), want: { outcome: 'deny', reasons: ['write_outside_files_owned'] } },
  { note: 'delete of the workspace root is denied', profile: 'local_edit_allowed', request: del('.'), want: { outcome: 'deny', reasons: ['write_outside_files_owned'], risk_band: 'critical' } },

  // local_edit_allowed: commands
  { note: 'a plain command is allowed', profile: 'local_edit_allowed', request: command(['npm', 'test']), want: { outcome: 'allow', reasons: ['action_class_allowed'], absent: ['destructive_command'] } },
  { note: 'rm -rf inside files_owned needs approval, with a witness', profile: 'local_edit_allowed', request: command(['rm', '-rf', 'src/build']), want: { outcome: 'require_approval', reasons: ['destructive_command'], risk_band: 'high', witness_required: true } },
  { note: 'rm -fr with /bin/rm needs approval', profile: 'local_edit_allowed', request: command(['/bin/rm', '-fr', 'src/build']), want: { outcome: 'require_approval', reasons: ['destructive_command'] } },
  { note: 'rm -rf / is denied (it writes outside files_owned)', profile: 'local_edit_allowed', request: command(['rm', '-rf', '/']), want: { outcome: 'deny', reasons: ['destructive_command', 'path_invalid'], risk_band: 'critical' } },
  { note: 'rm -rf / disguised as /usr/bin/env rm -r -f / is denied', profile: 'local_edit_allowed', request: command(['/usr/bin/env', 'rm', '-r', '-f', '/']), want: { outcome: 'deny', reasons: ['destructive_command'] } },
  { note: 'git push --force needs approval', profile: 'local_edit_allowed', request: command(['git', 'push', '--force']), want: { outcome: 'require_approval', reasons: ['destructive_command'] } },
  { note: 'git -c x=y push --force needs approval', profile: 'local_edit_allowed', request: command(['git', '-c', 'x=y', 'push', '--force']), want: { outcome: 'require_approval', reasons: ['destructive_command'] } },
  { note: 'git reset --hard needs approval', profile: 'local_edit_allowed', request: command(['git', 'reset', '--hard']), want: { outcome: 'require_approval' } },
  { note: 'DROP TABLE inside sh -c / psql -c needs approval', profile: 'local_edit_allowed', request: command(['sh', '-c', "psql -c 'DROP TABLE users'"]), want: { outcome: 'require_approval', reasons: ['destructive_command'], risk_band: 'critical' } },
  { note: 'kill -9 needs approval', profile: 'local_edit_allowed', request: command(['kill', '-9', '4242']), want: { outcome: 'require_approval' } },
  { note: 'an unsplittable sh -c string is treated as destructive', profile: 'local_edit_allowed', request: command(['sh', '-c', 'rm -rf "/']), want: { outcome: 'require_approval', reasons: ['destructive_command'] } },
  { note: 'a command writing outside files_owned is denied', profile: 'local_edit_allowed', request: command(['touch', 'lib/x']), want: { outcome: 'deny', reasons: ['command_writes_outside_files_owned'] } },
  { note: 'a command writing inside files_owned is allowed', profile: 'local_edit_allowed', request: command(['touch', 'src/x']), want: { outcome: 'allow' } },
  { note: 'a redirection escaping the workspace is refused', profile: 'local_edit_allowed', request: command(['sh', '-c', 'echo hi > ../x']), want: { outcome: 'deny', reasons: ['path_invalid'] } },
  { note: 'after cd, targets cannot be placed and are denied', profile: 'local_edit_allowed', request: command(['sh', '-c', 'cd src && touch x']), want: { outcome: 'deny', reasons: ['command_writes_outside_files_owned'] } },
  { note: 'targets resolve against params.cwd', profile: 'local_edit_allowed', request: command(['rm', '-rf', 'build'], { params: { argv: ['rm', '-rf', 'build'], cwd: 'src' } }), want: { outcome: 'require_approval', absent: ['command_writes_outside_files_owned'] } },
  { note: 'a cwd outside the workspace is refused', profile: 'local_edit_allowed', request: command(['ls'], { params: { argv: ['ls'], cwd: '../..' } }), want: { outcome: 'deny', reasons: ['path_invalid'] } },
  { note: 'network reads are denied', profile: 'local_edit_allowed', request: net('network_read', 'https://example.com/', 'GET'), want: { outcome: 'deny', reasons: ['action_class_denied'] } },
  { note: 'network writes are denied', profile: 'local_edit_allowed', request: net('network_write', 'https://api.example.com/x', 'POST'), want: { outcome: 'deny', reasons: ['action_class_denied'], risk_band: 'high' } },
  { note: 'credentialed calls are denied', profile: 'local_edit_allowed', request: other('credentialed_api_call', 'https://api.stripe.com/v1/charges'), want: { outcome: 'deny' } },
  { note: 'payment is not in the profile: deny by default', profile: 'local_edit_allowed', request: other('payment', 'https://pay.example.com/'), want: { outcome: 'deny', reasons: ['action_class_not_permitted'], risk_band: 'critical' } },
  { note: 'vcs_mutation is not in the profile: deny by default', profile: 'local_edit_allowed', request: other('vcs_mutation', 'repo:app@refs/heads/main'), want: { outcome: 'deny', reasons: ['action_class_not_permitted'] } },

  // destructive_denied
  { note: 'destructive_denied: rm -rf in files_owned is denied outright', profile: 'destructive_denied', request: command(['rm', '-rf', 'src/build']), want: { outcome: 'deny', reasons: ['destructive_command'] } },
  { note: 'destructive_denied: git push -f is denied', profile: 'destructive_denied', request: command(['git', 'push', '-f', 'origin', 'main']), want: { outcome: 'deny' } },
  { note: 'destructive_denied: TRUNCATE through bash -c is denied', profile: 'destructive_denied', request: command(['bash', '-c', 'echo "TRUNCATE users" | psql']), want: { outcome: 'deny' } },
  { note: 'destructive_denied: npm test is allowed', profile: 'destructive_denied', request: command(['npm', 'test']), want: { outcome: 'allow' } },
  { note: 'destructive_denied: writes in files_owned are allowed', profile: 'destructive_denied', request: write('src/a.ts'), want: { outcome: 'allow' } },

  // readonly_analysis
  { note: 'readonly: read is allowed', profile: 'readonly_analysis', request: read('src/a.ts'), want: { outcome: 'allow' } },
  { note: 'readonly: network read is not permitted', profile: 'readonly_analysis', request: net('network_read', 'https://example.com/', 'GET'), want: { outcome: 'deny', reasons: ['action_class_not_permitted', 'egress_host_not_allowed'] } },
  { note: 'readonly: write is downgraded to a read of the same file', profile: 'readonly_analysis', request: write('src/a.ts'), facts: { files_owned: [] }, want: { outcome: 'downgrade', downgraded_to: 'read_local', reasons: ['action_class_downgraded'] } },
  { note: 'readonly: delete is downgraded to a read', profile: 'readonly_analysis', request: del('src/a.ts'), want: { outcome: 'downgrade', downgraded_to: 'read_local' } },
  { note: 'readonly: network write is not permitted', profile: 'readonly_analysis', request: net('network_write', 'https://api.example.com/x', 'POST'), want: { outcome: 'deny', reasons: ['action_class_not_permitted'] } },
  { note: 'readonly: a write to .env cannot even be downgraded (reading it is denied)', profile: 'readonly_analysis', request: write('.env'), want: { outcome: 'deny', reasons: ['downgrade_not_allowed', 'secret_path'] } },
  { note: 'readonly: a write escaping the workspace is denied', profile: 'readonly_analysis', request: write('../x'), want: { outcome: 'deny', reasons: ['path_invalid'] } },
  { note: 'readonly: commands are not permitted', profile: 'readonly_analysis', request: command(['npm', 'test']), want: { outcome: 'deny', reasons: ['action_class_not_permitted'] } },
  { note: 'readonly: rm -rf / is denied', profile: 'readonly_analysis', request: command(['rm', '-rf', '/']), want: { outcome: 'deny' } },

  // inline profiles
  {
    note: 'files_owned: require_approval turns an out-of-scope write into a scope-expansion approval',
    profile: custom({ files_owned: 'require_approval' }),
    request: write('lib/a.ts'),
    want: { outcome: 'require_approval', reasons: ['write_outside_files_owned'], witness_required: true },
  },
  {
    note: 'approval_at_or_above: an irreversible write needs approval',
    profile: custom({ action_classes: { write_local: { outcome: 'allow', approval_at_or_above: 'high' } } }),
    request: write('src/a.ts', { reversibility_hint: 'irreversible' }),
    want: { outcome: 'require_approval', reasons: ['risk_requires_approval'], risk_band: 'high' },
  },
  {
    note: 'deny_at_or_above: critical risk is denied',
    profile: custom({ action_classes: { execute_command: { outcome: 'allow', deny_at_or_above: 'critical' } } }),
    request: command(['sh', '-c', 'psql -c "DROP DATABASE prod"']),
    want: { outcome: 'deny', reasons: ['risk_denied'] },
  },
  {
    note: 'witness_waived_for: approval without a witness',
    profile: custom({ files_owned: 'require_approval', witness_waived_for: ['write_local'] }),
    request: write('lib/a.ts'),
    want: { outcome: 'require_approval', witness_required: false },
  },
  {
    note: 'extra sensitive paths raise risk without changing the outcome',
    profile: 'local_edit_allowed',
    request: write('src/pricing/table.ts'),
    facts: { sensitive_paths: ['**/pricing/**'] },
    want: { outcome: 'allow', risk_band: 'critical' },
  },

  // Sacred Scopes (seed 003): never written inside files_owned unless profile AND task name the exception
  { note: 'sacred: package.json inside files_owned is denied', profile: 'local_edit_allowed', request: write('src/package.json'), want: { outcome: 'deny', reasons: ['sacred_path'], risk_band: 'critical' } },
  { note: 'sacred: a lock file is denied', profile: 'local_edit_allowed', request: write('src/pnpm-lock.yaml'), want: { outcome: 'deny', reasons: ['sacred_path'] } },
  { note: 'sacred: go.sum is denied', profile: 'local_edit_allowed', request: write('src/go.sum'), want: { outcome: 'deny', reasons: ['sacred_path'] } },
  { note: 'sacred: requirements-dev.txt is denied', profile: 'local_edit_allowed', request: write('src/requirements-dev.txt'), want: { outcome: 'deny', reasons: ['sacred_path'] } },
  { note: 'sacred: a migration is denied', profile: 'local_edit_allowed', request: write('src/db/migrations/0001_init.sql'), want: { outcome: 'deny', reasons: ['sacred_path'] } },
  { note: 'sacred: auth code is denied', profile: 'local_edit_allowed', request: write('src/auth/session.ts'), want: { outcome: 'deny', reasons: ['sacred_path'] } },
  { note: 'sacred: an OAuth callback is denied', profile: 'local_edit_allowed', request: write('src/routes/oauth-callback.ts'), want: { outcome: 'deny', reasons: ['sacred_path'] } },
  { note: 'sacred: billing code is denied', profile: 'local_edit_allowed', request: write('src/billing/invoice.ts'), want: { outcome: 'deny', reasons: ['sacred_path'] } },
  { note: 'sacred: .gitmodules is denied', profile: 'local_edit_allowed', request: write('src/.gitmodules'), want: { outcome: 'deny', reasons: ['sacred_path'] } },
  { note: 'sacred: .envrc is denied', profile: 'local_edit_allowed', request: write('src/.envrc'), want: { outcome: 'deny', reasons: ['sacred_path'] } },
  { note: 'sacred: reading package.json is allowed (only writes are sacred)', profile: 'local_edit_allowed', request: read('package.json'), want: { outcome: 'allow', risk_band: 'high' } },
  { note: 'sacred: deleting a migration is denied', profile: 'local_edit_allowed', request: del('src/migrations/0001.sql'), want: { outcome: 'deny', reasons: ['sacred_path'] } },
  { note: 'sacred: a command writing package.json is denied', profile: 'local_edit_allowed', request: command(['sh', '-c', 'echo {} > src/package.json']), want: { outcome: 'deny', reasons: ['sacred_path'] } },
  { note: 'sacred: a pattern target that may expand to package.json is denied', profile: 'local_edit_allowed', request: command(['sh', '-c', 'rm -f src/?ackage.json']), want: { outcome: 'deny', reasons: ['sacred_path'] } },
  { note: 'secret: src/* may expand to src/.env, so it is denied', profile: 'local_edit_allowed', request: command(['sh', '-c', 'rm -f src/*']), want: { outcome: 'deny', reasons: ['secret_path'] } },
  { note: 'sacred: a pattern target that cannot expand to a sacred path is allowed', profile: 'local_edit_allowed', request: command(['sh', '-c', 'rm -f src/build/x?.o']), want: { outcome: 'allow', risk_band: 'high' } },
  {
    note: 'sacred: both exceptions and inside files_owned → allowed, with sacred_path_excepted',
    profile: variant('local_edit_allowed', { sacred_exceptions: ['**/package.json'] }),
    request: write('src/package.json'),
    facts: { sacred_exceptions: ['src/package.json'] },
    want: { outcome: 'allow', reasons: ['sacred_path_excepted'], absent: ['sacred_path'], risk_band: 'critical' },
  },
  {
    note: 'sacred: only the profile names the exception → denied',
    profile: variant('local_edit_allowed', { sacred_exceptions: ['**/package.json'] }),
    request: write('src/package.json'),
    want: { outcome: 'deny', reasons: ['sacred_path'], absent: ['sacred_path_excepted'] },
  },
  {
    note: 'sacred: only the task names the exception → denied',
    profile: 'local_edit_allowed',
    request: write('src/package.json'),
    facts: { sacred_exceptions: ['src/package.json'] },
    want: { outcome: 'deny', reasons: ['sacred_path'], absent: ['sacred_path_excepted'] },
  },
  {
    note: 'sacred: both exceptions but outside files_owned → denied',
    profile: variant('local_edit_allowed', { sacred_exceptions: ['**/package.json'] }),
    request: write('package.json'),
    facts: { sacred_exceptions: ['package.json'] },
    want: { outcome: 'deny', reasons: ['sacred_path'] },
  },
  {
    note: 'sacred: both exceptions but files_owned in require_approval mode → still denied (never a scope expansion)',
    profile: variant('local_edit_allowed', { sacred_exceptions: ['**/package.json'], files_owned: 'require_approval' }),
    request: write('package.json'),
    facts: { sacred_exceptions: ['package.json'] },
    want: { outcome: 'deny', reasons: ['sacred_path'] },
  },
  {
    note: 'sacred: exceptions that name another sacred path do not cover this one',
    profile: variant('local_edit_allowed', { sacred_exceptions: ['**/package.json'] }),
    request: write('src/package-lock.json'),
    facts: { sacred_exceptions: ['src/package-lock.json'] },
    want: { outcome: 'deny', reasons: ['sacred_path'] },
  },
  {
    note: 'secret: exceptions never unlock a secret path',
    profile: variant('local_edit_allowed', { sacred_exceptions: ['**/.env'] }),
    request: write('src/.env'),
    facts: { sacred_exceptions: ['src/.env'] },
    want: { outcome: 'deny', reasons: ['secret_path'] },
  },

  // destructive operations of seed 003
  { note: 'kill of a pid the task did not spawn needs approval', profile: 'local_edit_allowed', request: command(['kill', '4242']), want: { outcome: 'require_approval', reasons: ['destructive_command'] } },
  { note: 'kill of its own background child is allowed', profile: 'local_edit_allowed', request: command(['sh', '-c', 'sleep 30 & kill $!']), want: { outcome: 'allow' } },
  { note: 'disabling audit is critical and needs approval', profile: 'local_edit_allowed', request: command(['auditctl', '-e', '0']), want: { outcome: 'require_approval', reasons: ['destructive_command'], risk_band: 'critical' } },
  { note: 'clearing shell history is denied under destructive_denied', profile: 'destructive_denied', request: command(['bash', '-c', 'history -c']), want: { outcome: 'deny', reasons: ['destructive_command'] } },
  { note: 'git branch -d needs approval', profile: 'local_edit_allowed', request: command(['git', 'branch', '-d', 'old']), want: { outcome: 'require_approval', reasons: ['destructive_command'] } },
  { note: 'UPDATE without WHERE needs approval', profile: 'local_edit_allowed', request: command(['psql', '-c', 'UPDATE accounts SET balance = 0']), want: { outcome: 'require_approval', risk_band: 'critical' } },
  { note: 'git checkout -- of a file outside files_owned is denied', profile: 'local_edit_allowed', request: command(['git', 'checkout', '--', 'lib/x.ts']), want: { outcome: 'deny', reasons: ['command_writes_outside_files_owned', 'destructive_command'] } },
  { note: 'brace expansion cannot be placed (src/{a,../../x} escapes)', profile: 'local_edit_allowed', request: command(['bash', '-c', 'touch src/{a,../../lib/x}']), want: { outcome: 'deny', reasons: ['command_writes_outside_files_owned'], risk_band: 'high' } },
  { note: 'a vcs_mutation carrying git push --force needs approval under repo_mutation_gated', profile: 'repo_mutation_gated', request: other('vcs_mutation', 'repo:app@refs/heads/main', { params: { argv: ['git', 'push', '--force'] } }), want: { outcome: 'require_approval', reasons: ['destructive_command', 'action_class_requires_approval'], witness_required: true } },
  { note: 'a vcs_mutation carrying git push --force is denied under a profile that denies destructive commands', profile: variant('repo_mutation_gated', { destructive_commands: 'deny' }), request: other('vcs_mutation', 'repo:app@refs/heads/main', { params: { argv: ['git', 'push', '--force'] } }), want: { outcome: 'deny', reasons: ['destructive_command'] } },

  // capability ceilings: egress
  { note: 'egress: network_read_allowed reads any host', profile: 'network_read_allowed', request: net('network_read', 'https://example.com/', 'GET'), want: { outcome: 'allow', risk_band: 'low' } },
  { note: 'egress: the task narrows to its hosts', profile: 'network_read_allowed', request: net('network_read', 'https://example.com/', 'GET'), facts: { egress_hosts: ['api.example.com'] }, want: { outcome: 'deny', reasons: ['egress_host_not_allowed'] } },
  { note: 'egress: a narrowed host is reachable', profile: 'network_read_allowed', request: net('network_read', 'https://API.example.com/v1', 'GET'), facts: { egress_hosts: ['api.example.com'] }, want: { outcome: 'allow' } },
  { note: 'egress: *.example.com covers subdomains', profile: variant('network_read_allowed', { ceilings: { egress_hosts: ['*.example.com'] } }), request: net('network_read', 'https://a.b.example.com/', 'GET'), want: { outcome: 'allow' } },
  { note: 'egress: *.example.com does not cover the bare host', profile: variant('network_read_allowed', { ceilings: { egress_hosts: ['*.example.com'] } }), request: net('network_read', 'https://example.com/', 'GET'), want: { outcome: 'deny', reasons: ['egress_host_not_allowed'] } },
  { note: 'egress: a suffix is not a subdomain (evilexample.com)', profile: variant('network_read_allowed', { ceilings: { egress_hosts: ['*.example.com'] } }), request: net('network_read', 'https://evilexample.com/', 'GET'), want: { outcome: 'deny', reasons: ['egress_host_not_allowed'] } },
  { note: 'egress: userinfo does not disguise the host', profile: 'network_read_allowed', request: net('network_read', 'https://api.example.com@evil.test/', 'GET'), facts: { egress_hosts: ['api.example.com'] }, want: { outcome: 'deny', reasons: ['egress_host_not_allowed'] } },
  { note: 'egress: an explicit port needs a pattern with that port', profile: 'network_read_allowed', request: net('network_read', 'https://api.example.com:8443/', 'GET'), facts: { egress_hosts: ['api.example.com'] }, want: { outcome: 'deny', reasons: ['egress_host_not_allowed'] } },
  { note: 'egress: the facts cannot widen the profile', profile: 'local_edit_allowed', request: net('network_read', 'https://example.com/', 'GET'), facts: { egress_hosts: ['*'] }, want: { outcome: 'deny', reasons: ['egress_host_not_allowed'] } },
  { note: 'egress: a URL with no usable host is refused', profile: 'network_read_allowed', request: other('network_read', 'ftp://files.example.com/x', { params: { url: 'https://example.com/' } }), want: { outcome: 'deny', reasons: ['egress_host_not_allowed'] } },
  { note: 'egress: a network write under network_read_allowed is downgraded to a GET', profile: 'network_read_allowed', request: net('network_write', 'https://api.example.com/x', 'POST'), want: { outcome: 'downgrade', downgraded_to: 'network_read' } },
  { note: 'egress: the downgraded GET is still held to the egress list', profile: 'network_read_allowed', request: net('network_write', 'https://api.example.com/x', 'POST'), facts: { egress_hosts: ['example.org'] }, want: { outcome: 'deny', reasons: ['downgrade_not_allowed', 'egress_host_not_allowed'] } },

  // capability ceilings: secret handles and wall clock
  { note: 'handles: a handle the profile does not list is denied', profile: 'external_publish_gated', request: handleCall('stripe_key'), want: { outcome: 'deny', reasons: ['secret_handle_not_allowed'], risk_band: 'high' } },
  { note: 'handles: a listed handle goes to approval', profile: variant('external_publish_gated', { ceilings: { egress_hosts: ['api.stripe.com'], secret_handles: ['stripe_key'] } }), request: handleCall('stripe_key'), want: { outcome: 'require_approval', absent: ['secret_handle_not_allowed'], witness_required: true } },
  { note: 'handles: the task narrows the listed handles', profile: variant('external_publish_gated', { ceilings: { egress_hosts: ['api.stripe.com'], secret_handles: ['stripe_key'] } }), request: handleCall('stripe_key'), facts: { secret_handles: [] }, want: { outcome: 'deny', reasons: ['secret_handle_not_allowed'] } },
  { note: 'handles: a malformed handle is denied', profile: variant('external_publish_gated', { ceilings: { egress_hosts: ['*'], secret_handles: ['stripe_key'] } }), request: handleCall(['stripe_key', 7]), want: { outcome: 'deny', reasons: ['secret_handle_not_allowed'] } },
  { note: 'wall clock: a timeout above the ceiling is denied', profile: 'local_edit_allowed', request: command(['npm', 'test'], { params: { argv: ['npm', 'test'], timeout_ms: 900_001 } }), want: { outcome: 'deny', reasons: ['wall_clock_exceeds_ceiling'] } },
  { note: 'wall clock: a timeout at the ceiling is allowed', profile: 'local_edit_allowed', request: command(['npm', 'test'], { params: { argv: ['npm', 'test'], timeout_ms: 900_000 } }), want: { outcome: 'allow' } },
  { note: 'wall clock: the task narrows the ceiling', profile: 'local_edit_allowed', request: command(['npm', 'test'], { params: { argv: ['npm', 'test'], timeout_ms: 60_000 } }), facts: { max_wall_clock_ms: 30_000 }, want: { outcome: 'deny', reasons: ['wall_clock_exceeds_ceiling'] } },

  // publication
  { note: 'publish → draft: a publication becomes a local draft when files_owned covers drafts/', profile: 'local_edit_allowed', request: publish(), facts: { files_owned: ['src/**', 'drafts/**'] }, want: { outcome: 'downgrade', downgraded_to: 'write_local', reasons: ['action_class_downgraded'] } },
  { note: 'publish → draft: no draft outside files_owned', profile: 'local_edit_allowed', request: publish(), want: { outcome: 'deny', reasons: ['downgrade_not_allowed', 'write_outside_files_owned'] } },
  { note: 'publish: external_publish_gated sends a publication to approval', profile: 'external_publish_gated', request: publish(), want: { outcome: 'require_approval', reasons: ['action_class_requires_approval'], witness_required: true } },
  { note: 'publish: the egress list holds for an approved publication too', profile: 'external_publish_gated', request: publish(), facts: { egress_hosts: ['docs.example.com'] }, want: { outcome: 'deny', reasons: ['egress_host_not_allowed'] } },
  { note: 'publish: readonly_analysis does not permit it', profile: 'readonly_analysis', request: publish(), want: { outcome: 'deny', reasons: ['action_class_not_permitted'] } },
];
