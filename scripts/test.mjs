#!/usr/bin/env node
// `npm test`: every check CI relies on, in the order that fails fastest.
// Each step runs to completion with its output shown; the first failure stops the run.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';

// vitest.config.ts writes each project's results here; read back to name what failed.
const reportsDir = path.join(import.meta.dirname, '..', 'var', 'test-reports');

// Tests talk to Writ's own NATS (scripts/writ-nats.sh: auth on, port 4223) as its operator, whose
// credential `writ init` wrote; never to the machine's anonymous server. A WRIT_HOME set outside wins.
const home = process.env.WRIT_HOME ?? path.join(import.meta.dirname, '..', 'var', 'writ');
const env = {
  ...process.env,
  NX_NO_CLOUD: 'true',
  NX_DAEMON: 'false',
  NX_TUI: 'false',
  WRIT_HOME: home,
  WRIT_NATS_URL: process.env.WRIT_NATS_URL ?? 'nats://127.0.0.1:4223',
  WRIT_NATS_CREDS: process.env.WRIT_NATS_CREDS ?? path.join(home, 'creds', 'operator.creds'),
  WRIT_TRUST_ANCHOR: process.env.WRIT_TRUST_ANCHOR ?? path.join(home, 'trust-anchor.json'),
  WRIT_OPERATOR_ID: process.env.WRIT_OPERATOR_ID ?? 'operator',
  WRIT_OPERATOR_KEY: process.env.WRIT_OPERATOR_KEY ?? path.join(home, 'operator', 'operator.jwk.json'),
};
// A cached "typecheck passed" proves nothing about this checkout: by default every
// check runs for real. WRIT_TEST_CACHE=1 lets a developer reuse Nx's cache locally.
const cacheFlags = process.env.WRIT_TEST_CACHE === '1' ? [] : ['--skip-nx-cache'];

const steps = [
  ['build every project (swc)', 'nx', ['run-many', '-t', 'build', '--output-style=static', ...cacheFlags]],
  ['typecheck and lint, module boundaries included', 'nx', ['run-many', '-t', 'typecheck', 'lint', '--output-style=static', ...cacheFlags]],
  ['no import cycles', 'depcruise', ['libs', 'services', 'apps', 'test', '--config', '.dependency-cruiser.cjs']],
  ['generated JSON Schemas match the zod contracts', 'node', ['scripts/generate-schemas.mjs', '--check']],
  ["docs/configuration.md matches the services' env schemas and their JSDoc", 'node', ['scripts/generate-config-reference.mjs', '--check']],
  ["Writ's own NATS with auth (writ init, nats-server on 4223)", 'scripts/writ-nats.sh', []],
  ['unit and integration tests of every project (real NATS and Postgres)', 'nx', ['run-many', '-t', 'test', '--output-style=static', '--parallel=2']],
];

const major = Number(process.versions.node.split('.')[0]);
console.log(`[test] node ${process.version} (${process.execPath})`);
if (major < 24) {
  console.error('[test] Writ targets Node 24 LTS; run through npm (`npm test`) after `npm ci` so the node@24 devDependency is used');
  process.exit(1);
}

/**
 * The failed tests of the last run, one block each: project report, file, full name and
 * the first lines of the failure. Printed last, because CI keeps only a log's tail.
 */
function failedTestsSummary() {
  if (!existsSync(reportsDir)) return [];
  const lines = [];
  for (const name of readdirSync(reportsDir).filter((n) => n.endsWith('.json')).sort()) {
    let report;
    try {
      report = JSON.parse(readFileSync(path.join(reportsDir, name), 'utf8'));
    } catch {
      lines.push(`${name}: unreadable report`);
      continue;
    }
    for (const file of report.testResults ?? []) {
      const failed = (file.assertionResults ?? []).filter((t) => t.status === 'failed');
      if (failed.length === 0 && file.status === 'failed') lines.push(`${path.relative(process.cwd(), file.name)}: ${(file.message ?? 'failed outside any test').split('\n').slice(0, 6).join('\n    ')}`);
      for (const test of failed) {
        const message = (test.failureMessages ?? []).join('\n').split('\n').slice(0, 8).join('\n    ');
        lines.push(`${path.relative(process.cwd(), file.name)} > ${test.fullName}\n    ${message}`);
      }
    }
  }
  return lines;
}

rmSync(reportsDir, { recursive: true, force: true });
const started = performance.now();
for (const [what, command, args] of steps) {
  const t0 = performance.now();
  console.log(`\n[test] --- ${what}: ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, { stdio: 'inherit', env });
  const seconds = ((performance.now() - t0) / 1000).toFixed(1);
  if (result.status !== 0) {
    const failures = failedTestsSummary();
    if (failures.length > 0) console.error(`\n[test] failed tests (${failures.length}):\n${failures.map((f) => `- ${f}`).join('\n')}`);
    console.error(`\n[test] FAILED after ${seconds}s: ${what}`);
    process.exit(result.status ?? 1);
  }
  console.log(`[test] ok (${seconds}s): ${what}`);
}
console.log(`\n[test] all checks passed in ${((performance.now() - started) / 1000).toFixed(1)}s`);
