#!/usr/bin/env node
// Builds @writ/agent as a self-contained npm package in dist/ (run by `nx run @writ/agent:build`,
// from libs/agent).
//
// Why this is not the workspace's plain `swc src -d dist`: the SDK is published, and
// @writ/contracts (its types and zod schemas, the single source of truth for the wire) is a
// private workspace package that no registry serves. So the build vendors it: the contracts are
// compiled into dist/vendor/contracts (JavaScript by swc, declarations by tsc), and the SDK's one
// seam onto them (src/contracts.ts) is pointed at that copy. Nothing else in the SDK names
// @writ/contracts, and the build fails if any emitted file still imports a @writ/* package, so
// what `npm pack` ships resolves with the package's own npm dependencies alone.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const contractsRoot = path.resolve(root, '..', 'contracts');
const dist = path.join(root, 'dist');
const vendor = path.join(dist, 'vendor', 'contracts');
const types = path.join(dist, '.types');
const bin = (name) => path.resolve(root, '..', '..', 'node_modules', '.bin', name);

/** The module the seam re-exports from, and what it becomes in dist/contracts.{js,d.ts}. */
const SEAM = { file: 'contracts', from: "'@writ/contracts'", to: "'./vendor/contracts/index.js'" };
/** The contracts' subpath exports the seam also re-exports from, and where each is in the vendored copy. */
const SEAM_SUBPATHS = { "'@writ/contracts/projection-rows'": "'./vendor/contracts/projection-rows/index.js'" };

function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`${path.basename(command)} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
}

async function filesUnder(dir) {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
}

await rm(dist, { recursive: true, force: true });

// 1. JavaScript: the SDK, and the contracts it vendors (specs left out of both).
const swcArgs = (out) => ['src', '-d', out, '--strip-leading-paths', '--config-file', path.resolve(root, '..', '..', '.swcrc'), '--ignore', '**/*.spec.ts'];
run(bin('swc'), swcArgs(dist), root);
run(bin('swc'), swcArgs(vendor), contractsRoot);

// 2. Declarations: one tsc program over the SDK, which reaches the contracts' sources through the
// workspace (rootDir libs/), so both are emitted; then each tree is moved where its JavaScript is.
run(bin('tsc'), ['-p', 'tsconfig.build.json'], root);
await cp(path.join(types, 'agent', 'src'), dist, { recursive: true });
await cp(path.join(types, 'contracts', 'src'), vendor, { recursive: true });
await rm(types, { recursive: true, force: true });

// 3. The seam: @writ/contracts → the vendored copy.
for (const ext of ['.js', '.d.ts']) {
  const file = path.join(dist, SEAM.file + ext);
  const text = await readFile(file, 'utf8');
  if (!text.includes(SEAM.from)) throw new Error(`${path.relative(root, file)} does not import ${SEAM.from}: the seam moved; update scripts/build-package.mjs`);
  let rewritten = text;
  for (const [from, to] of Object.entries(SEAM_SUBPATHS)) rewritten = rewritten.replaceAll(from, to);
  await writeFile(file, rewritten.replaceAll(SEAM.from, SEAM.to));
}

// 4. Nothing shipped may still need a private workspace package, nor lack its declarations.
const shipped = (await filesUnder(dist)).filter((file) => file.endsWith('.js') || file.endsWith('.d.ts'));
const leaks = [];
for (const file of shipped) {
  const text = await readFile(file, 'utf8');
  if (/(?:from\s*|import\s*\(\s*|require\s*\(\s*)['"]@writ\//.test(text)) leaks.push(path.relative(root, file));
}
if (leaks.length > 0) throw new Error(`these files still import a private @writ/* package: ${leaks.join(', ')}`);
for (const file of shipped.filter((name) => name.endsWith('.js'))) {
  const declaration = file.replace(/\.js$/, '.d.ts');
  if (!existsSync(declaration)) throw new Error(`${path.relative(root, file)} has no declaration (${path.relative(root, declaration)})`);
}
console.log(`@writ/agent: dist/ built (${shipped.length} files, contracts vendored in dist/vendor/contracts)`);
