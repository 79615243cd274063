import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Projection lag must never authorize a side effect (Hermit 20.4; DESIGN.md,
 * projection: "authorize anything"): nothing on an authorization path reads
 * a projection. The services that authenticate, decide, approve, grant and
 * execute (ingress, policy, approval, executor, orchestrator) and the
 * libraries they decide with are scanned for the four ways a projection
 * could be read: importing the projection service, reaching Postgres (where
 * the projections live: none of them has any business there), subscribing to
 * `<root>.proj.*`, or calling the projection's HTTP API. Each rule is first
 * shown to fire on a probe, so the scan cannot pass by matching nothing.
 */

const workspace = fileURLToPath(new URL('../../../', import.meta.url));

const AUTHORIZATION_SERVICES = ['ingress', 'policy', 'approval', 'executor', 'orchestrator'];
const AUTHORIZATION_LIBS = ['kernel', 'runtime', 'eventstore', 'bus', 'crypto', 'contracts'];

type Rule = 'imports-projection' | 'reaches-postgres' | 'subscribes-to-projection-topics' | 'calls-projection-http';

const RULES: ReadonlyArray<{ readonly rule: Rule; readonly pattern: RegExp; readonly servicesOnly: boolean }> = [
  { rule: 'imports-projection', pattern: /(?:from\s+|import\s*\(\s*|require\s*\(\s*)['"](?:@writ\/projection|[^'"]*services\/projection)[^'"]*['"]/, servicesOnly: false },
  { rule: 'reaches-postgres', pattern: /(?:from\s+|import\s*\(\s*|require\s*\(\s*)['"](?:pg|pg-[a-z-]+|postgres|typeorm|@nestjs\/typeorm)(?:\/[^'"]*)?['"]/, servicesOnly: false },
  // `<root>.proj.<view>.<id>`, the runtime's `subjects.projections`, or the contracts' `SUBJECTS.projection(...)`.
  { rule: 'subscribes-to-projection-topics', pattern: /['"`][^'"`\n]*\.proj(?:\.|['"`])|\.projections\b|\bSUBJECTS\.projection\b/, servicesOnly: true },
  // The public read API: a global fetch, an HTTP client library, the CLI's WRIT_URL, or a read route named in a string.
  {
    rule: 'calls-projection-http',
    pattern: /(?<![.\w])fetch\s*\(|['"](?:undici|axios|got|node-fetch)['"]|\bWRIT_URL\b|['"`][^'"`\n]*\/v1\/(?:actions|tasks|approvals|grants|receipts|keys|steps|attempts|artifacts|cells|principals|projections)\b/,
    servicesOnly: false,
  },
];

/** Comments say why, they do not run: removed before the scan (URLs in strings stay). */
function code(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

function findings(source: string, isService: boolean): Rule[] {
  const text = code(source);
  return RULES.filter((r) => (isService || !r.servicesOnly) && r.pattern.test(text)).map((r) => r.rule);
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'dist' || entry.name === '__fixtures__' ? [] : sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

describe('no authorization path reads a projection', () => {
  it.each([
    { note: 'an import of the projection service', source: "import { createProjectionApp } from '@writ/projection';", service: true, want: 'imports-projection' },
    { note: 'a relative import into its sources', source: "import { ReadService } from '../../projection/src/application/read-service.js';\n// services/projection", service: true, want: null },
    { note: 'a relative import through services/', source: "import { x } from '../../../services/projection/src/main.js';", service: true, want: 'imports-projection' },
    { note: 'a Postgres client', source: "import pg from 'pg';", service: false, want: 'reaches-postgres' },
    { note: 'an ORM', source: "import { DataSource } from 'typeorm';", service: true, want: 'reaches-postgres' },
    { note: 'a subscription to projection updates', source: 'nc.subscribe(`${root}.proj.grants.${id}`);', service: true, want: 'subscribes-to-projection-topics' },
    { note: "the runtime's projection subjects", source: 'const topic = runtime.subjects.projections;', service: true, want: 'subscribes-to-projection-topics' },
    { note: 'the read API over fetch', source: "const grant = await fetch(`${base}/v1/grants/${id}`);", service: true, want: 'calls-projection-http' },
    { note: "the CLI's API variable", source: "const url = process.env['WRIT_URL'];", service: true, want: 'calls-projection-http' },
    { note: 'a read route through node:http', source: "http.get(`http://projection:8080/v1/grants/${id}`, onGrant);", service: true, want: 'calls-projection-http' },
    { note: 'an HTTP server of its own (the egress proxy) is not a read', source: "import http from 'node:http';\nconst server = http.createServer(handler);", service: true, want: null },
    { note: 'a JetStream consumer fetch is not HTTP', source: 'const batch = await consumer.fetch({ max_messages: 10 });', service: false, want: null },
    { note: 'a comment is not code', source: '// reads GET /v1/grants like fetch(url) would; see writ.proj.grants', service: true, want: null },
  ])('the scan flags $note: $want', ({ source, service, want }) => {
    const found = findings(source, service);
    if (want === null) expect(found).toEqual([]);
    else expect(found).toContain(want);
  });

  it('given the sources of ingress, policy, approval, executor, orchestrator and the libraries they decide with, when scanned, then none reads a projection', () => {
    const scanned: string[] = [];
    const violations: string[] = [];
    const scan = (dir: string, isService: boolean) => {
      for (const file of sources(join(workspace, dir))) {
        scanned.push(file);
        for (const rule of findings(readFileSync(file, 'utf8'), isService)) violations.push(`${relative(workspace, file)}: ${rule}`);
      }
    };
    for (const service of AUTHORIZATION_SERVICES) scan(`services/${service}/src`, true);
    for (const lib of AUTHORIZATION_LIBS) scan(`libs/${lib}/src`, false);
    // the scan saw the code it vouches for
    expect(scanned.some((file) => file.includes('services/executor/src/application/grant-verification.ts'))).toBe(true);
    expect(scanned.some((file) => file.includes('services/approval/src'))).toBe(true);
    expect(violations).toEqual([]);
  });
});
