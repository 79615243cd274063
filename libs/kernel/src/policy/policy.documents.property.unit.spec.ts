import { posix } from 'node:path';
import { ActionClass, type ActionRequest, type PolicyOutcome } from '@writ/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { request } from '../../test/samples.js';
import { evaluatePolicy, type PolicyEvaluation } from './evaluate-policy.js';
import { versionPolicyProfile, type PolicyProfileDocumentInput } from './policy-profile.js';
import type { PolicyFacts } from './request-view.js';

/*
 * Properties over random valid documents and random requests, checked
 * against oracles written independently of the kernel: node's
 * posix.normalize for paths and a regular-expression reading of globs.
 */

const ROOT = '/work/main';
const CLASSES = ActionClass.options;

// ---------------------------------------------------------------------------
// oracles

/** Workspace-relative normalized path, or null when the spelling leaves the workspace. */
function normalizeOracle(raw: string): string | null {
  if (raw === '' || raw.startsWith('~') || raw.includes('\\')) return null;
  if (raw.startsWith('/')) {
    const absolute = posix.normalize(raw).replace(/\/+$/, '');
    if (absolute === ROOT) return '.';
    return absolute.startsWith(`${ROOT}/`) ? absolute.slice(ROOT.length + 1) : null;
  }
  const relative = posix.normalize(raw).replace(/\/+$/, '');
  if (relative === '..' || relative.startsWith('../')) return null;
  return relative === '' ? '.' : relative;
}

/** A glob as a regular expression over a normalized path: `**` any run of whole segments, `*` / `?` inside one. */
function globOracle(pattern: string): RegExp {
  const segments = pattern.split('/').filter((s) => s !== '' && s !== '.');
  let out = '';
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (segment === '**') {
      out += last ? (i === 0 ? '.*' : '(?:/.*)?') : i === 0 ? '(?:.*/)?' : '(?:/.*)?/';
      return;
    }
    const body = segment.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]');
    out += i === 0 || segments[i - 1] === '**' ? body : `/${body}`;
  });
  return new RegExp(`^${out.replace(/\/\//g, '/')}$`);
}

const matchesAny = (globs: readonly string[], path: string) => globs.some((glob) => globOracle(glob).test(path));

/** Paths a request writes, as the oracle reads it (null: a path whose spelling leaves the workspace). */
function writesOf(req: ActionRequest): (string | null)[] {
  const cls = req.action_class;
  if (cls === 'read_local' || cls === 'network_read') return [];
  if (cls === 'execute_command') {
    const argv = req.params.argv ?? [];
    if (argv[0] === 'touch' || argv[0] === 'rm') return argv.slice(argv[1] === '-rf' ? 2 : 1).map(normalizeOracle);
    if (argv[0] === 'sh') return [normalizeOracle((argv[2] ?? '').replace(/^echo x > /, ''))];
    return [];
  }
  const paths = new Set<string>(req.target_resources.filter((r) => !/^[a-z]+:/.test(r)));
  if (typeof req.params.path === 'string') paths.add(req.params.path);
  const steps: unknown = req.params['steps'];
  if (Array.isArray(steps)) for (const step of steps as { path?: unknown }[]) if (typeof step.path === 'string') paths.add(step.path);
  return [...paths].map(normalizeOracle);
}

interface Case {
  readonly document: PolicyProfileDocumentInput;
  readonly facts: PolicyFacts;
  readonly req: ActionRequest;
}

/** Why a written path may not be allowed, or null when the oracle lets it be written. */
function forbiddenWrite(path: string | null, c: Case): string | null {
  if (path === null) return 'escapes the workspace';
  const doc = c.document;
  if (matchesAny(doc.secret_paths ?? [], path)) return 'secret';
  const owned = matchesAny(c.facts.files_owned, path);
  if (matchesAny(doc.sacred_paths ?? [], path)) {
    const excepted = matchesAny(doc.sacred_exceptions ?? [], path) && matchesAny(c.facts.sacred_exceptions ?? [], path);
    return excepted && owned ? null : 'sacred without both exceptions inside files_owned';
  }
  return owned ? null : 'outside files_owned';
}

// ---------------------------------------------------------------------------
// arbitraries

const SACRED_VOCABULARY = ['**/package.json', '**/migrations/**', 'src/secret/**', '**/.git/**', 'src/app/**', '**/*.lock', 'drafts/**'];
const SECRET_VOCABULARY = ['**/.env', '**/*.pem'];
const OWNED_VOCABULARY = ['src/**', 'src/app/**', 'tests/**', 'lib/*.ts', 'drafts/**', 'package.json', '**'];
const EXCEPTION_VOCABULARY = [...SACRED_VOCABULARY, 'src/**', '**', 'src/package.json'];

function ruleFor(cls: ActionClass): fc.Arbitrary<Record<string, unknown>> {
  const downgrades: Record<string, unknown>[] = [{ action_class: cls, restricted_mode: 'readonly' }];
  if (cls === 'write_local' || cls === 'delete_local') downgrades.push({ action_class: 'read_local', restricted_mode: 'readonly' });
  if (cls === 'network_write') downgrades.push({ action_class: 'network_read' });
  if (cls === 'publication') downgrades.push({ action_class: 'write_local', draft_dir: 'drafts' }, { action_class: 'write_local', draft_dir: 'lib' }, { action_class: 'write_local' });
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant({ outcome: 'allow' }) },
    { weight: 2, arbitrary: fc.record({ outcome: fc.constantFrom<PolicyOutcome>('deny', 'require_approval') }) },
    { weight: 2, arbitrary: fc.constantFrom(...downgrades).map((downgrade_to) => ({ outcome: 'downgrade', downgrade_to })) },
    { weight: 1, arbitrary: fc.record({ outcome: fc.constant('allow'), approval_at_or_above: fc.constantFrom('moderate', 'high', 'critical') }) },
  );
}

const documentArb: fc.Arbitrary<PolicyProfileDocumentInput> = fc.record({
  id: fc.constant('random_profile'),
  description: fc.constant('A random profile for property tests.'),
  action_classes: fc.record(Object.fromEntries(CLASSES.map((cls) => [cls, ruleFor(cls)])) as Record<ActionClass, fc.Arbitrary<Record<string, unknown>>>, { requiredKeys: [] }),
  destructive_commands: fc.constantFrom('require_approval', 'deny'),
  files_owned: fc.constantFrom('enforce', 'require_approval'),
  sacred_paths: fc.subarray(SACRED_VOCABULARY),
  secret_paths: fc.subarray(SECRET_VOCABULARY),
  sacred_exceptions: fc.subarray(EXCEPTION_VOCABULARY),
  ceilings: fc.record({ egress_hosts: fc.subarray(['*', 'api.example.com', '*.example.com']) }),
}) as fc.Arbitrary<PolicyProfileDocumentInput>;

const factsArb: fc.Arbitrary<PolicyFacts> = fc.record({
  files_owned: fc.subarray(OWNED_VOCABULARY, { minLength: 1 }),
  sacred_exceptions: fc.subarray(EXCEPTION_VOCABULARY),
  workspace_root: fc.constant(ROOT),
});

const segment = fc.constantFrom('src', 'app', 'lib', 'tests', 'a.ts', 'package.json', 'migrations', 'x.lock', '.env', 'k.pem', '..', '.', 'drafts', 'secret', '.git');
const pathArb = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.constantFrom('', `${ROOT}/`), fc.constantFrom('src', 'src/app', 'lib', 'tests', 'drafts', 'src/secret', 'src/migrations', 'db/migrations', '.'), fc.constantFrom('a.ts', 'package.json', 'x.lock', '.env', 'k.pem', '.git/config'))
      .map(([lead, dir, file]) => `${lead}${dir}/${file}`),
  },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom('', '', '', `${ROOT}/`, '/etc/'), fc.array(segment, { minLength: 1, maxLength: 4 })).map(([lead, parts]) => `${lead}${parts.join('/')}`) },
);

const requestArb: fc.Arbitrary<ActionRequest> = fc.tuple(fc.constantFrom(...CLASSES), pathArb, fc.nat(3), fc.constantFrom('https://api.example.com/x', 'https://evil.test/y')).map(([cls, path, shape, url]) => {
  switch (cls) {
    case 'execute_command': {
      const argv = [['touch', path], ['rm', '-rf', path], ['sh', '-c', `echo x > ${path}`], ['npm', 'test']][shape] as string[];
      return request({ action_class: cls, target_resources: ['.'], params: { argv } });
    }
    case 'network_read':
    case 'network_write':
    case 'credentialed_api_call':
    case 'publication':
    case 'payment':
      return request({ action_class: cls, target_resources: shape === 0 ? [url, path] : [url], params: { url, method: cls === 'network_read' ? 'GET' : 'POST' } });
    case 'vcs_mutation':
    case 'memory_write':
      return request({ action_class: cls, target_resources: [path], params: {} });
    case 'rollback': {
      // shape 3: a step outside what the target names (never allowed); otherwise the step is the target.
      const stepPath = shape === 3 ? 'src/app/a.ts' : path;
      const step = { action_class: 'delete_local', path: stepPath, expected_sha256: 'a'.repeat(64) };
      return request({ action_class: cls, target_resources: [path], params: { receipt_id: 'rct-1', receipt_hash: 'c'.repeat(64), steps: [step] } });
    }
    default:
      return request({ action_class: cls, target_resources: [path], params: cls === 'write_local' ? { path, content: 'x' } : { path } });
  }
});

const caseArb: fc.Arbitrary<Case> = fc.record({ document: documentArb, facts: factsArb, req: requestArb });

function evaluate(c: Case): PolicyEvaluation {
  return evaluatePolicy(c.req, versionPolicyProfile(c.document, 'property'), c.facts);
}

// ---------------------------------------------------------------------------

describe('policy properties over random documents', () => {
  it('property: the oracle agrees with the glob matcher on the vocabulary (sanity of the oracle itself)', () => {
    expect(globOracle('**/package.json').test('package.json')).toBe(true);
    expect(globOracle('**/package.json').test('src/app/package.json')).toBe(true);
    expect(globOracle('src/**').test('src')).toBe(true);
    expect(globOracle('src/**').test('src2/a')).toBe(false);
    expect(globOracle('**/migrations/**').test('db/migrations/1.sql')).toBe(true);
    expect(globOracle('lib/*.ts').test('lib/x/a.ts')).toBe(false);
    expect(globOracle('**').test('anything/at/all')).toBe(true);
  });

  it('property: no request writing outside files_owned (or into a secret, or a Sacred Scope without both exceptions) is ever allowed or downgraded to such a write', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const result = evaluate(c);
        const note = `${c.req.action_class} ${JSON.stringify(c.req.params)} ${JSON.stringify(c.req.target_resources)} owned=${c.facts.files_owned.join(',')} → ${result.outcome}: ${result.reasons.map((r) => r.code).join(',')}`;
        if (result.outcome === 'allow') {
          for (const path of writesOf(c.req)) expect(forbiddenWrite(path, c), `${note}: ${path}`).toBeNull();
        }
        if (result.outcome === 'downgrade') {
          const rewritten = result.downgrade?.action_request;
          expect(rewritten, note).toBeDefined();
          for (const path of writesOf(rewritten as ActionRequest)) expect(forbiddenWrite(path, c), `${note}: downgraded write ${path}`).toBeNull();
        }
      }),
      { numRuns: 3_000 },
    );
  });

  it('property: a Sacred Scope write is allowed only when the profile AND the task exceptions both cover it', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const result = evaluate(c);
        if (result.outcome !== 'allow') return;
        for (const path of writesOf(c.req)) {
          if (path === null || !matchesAny(c.document.sacred_paths ?? [], path)) continue;
          expect(matchesAny(c.document.sacred_exceptions ?? [], path), path).toBe(true);
          expect(matchesAny(c.facts.sacred_exceptions ?? [], path), path).toBe(true);
          expect(result.reasons.map((r) => r.code)).toContain('sacred_path_excepted');
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it('property: an action class the document does not list is denied (deny by default)', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        if (c.document.action_classes[c.req.action_class] !== undefined) return;
        const result = evaluate(c);
        expect(result.outcome).toBe('deny');
        expect(result.reasons.map((r) => r.code)).toContain('action_class_not_permitted');
      }),
      { numRuns: 1_000 },
    );
  });

  it('property: evaluation is total and deterministic (same input, same output; inputs are not mutated)', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const before = JSON.stringify(c);
        const first = evaluate(c);
        const second = evaluate(JSON.parse(before) as Case);
        expect(second).toEqual(first);
        expect(JSON.stringify(c)).toBe(before);
        expect(['allow', 'deny', 'require_approval', 'downgrade']).toContain(first.outcome);
      }),
      { numRuns: 1_000 },
    );
  });

  it('property: an allowed request never reaches a host outside the ceiling or the facts, and never asks for more wall clock than allowed', () => {
    const hosts = fc.constantFrom('api.example.com', 'a.b.example.com', 'example.com', 'evil.test', 'api.example.com:8443');
    fc.assert(
      fc.property(
        fc.subarray(['*', 'api.example.com', '*.example.com', 'example.com:8443']),
        fc.option(fc.subarray(['*', 'api.example.com', '*.example.com', 'evil.test']), { nil: undefined }),
        hosts,
        fc.integer({ min: 1, max: 2_000_000 }),
        (ceiling, narrowing, host, timeout) => {
          const document = { id: 'net', description: 'Network reads.', action_classes: { network_read: { outcome: 'allow' } }, destructive_commands: 'deny', ceilings: { egress_hosts: ceiling } } as const;
          const url = `https://${host}/x`;
          const facts: PolicyFacts = { files_owned: [], ...(narrowing === undefined ? {} : { egress_hosts: narrowing }) };
          const result = evaluatePolicy(request({ action_class: 'network_read', target_resources: [url], params: { url, method: 'GET', timeout_ms: timeout } }), versionPolicyProfile(document, 'p'), facts);
          const allows = (patterns: readonly string[]) =>
            patterns.some((p) => p === '*' || p === host || (p.startsWith('*.') && !host.includes(':') && host.endsWith(p.slice(1)) && host.length > p.length - 1));
          const expected = allows(ceiling) && (narrowing === undefined || allows(narrowing)) && timeout <= 900_000;
          expect(result.outcome === 'allow', `${url} ceiling=${ceiling.join(',')} narrowing=${narrowing?.join(',')} timeout=${timeout}`).toBe(expected);
        },
      ),
      { numRuns: 1_000 },
    );
  });
});
