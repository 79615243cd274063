#!/usr/bin/env node
// The console's build: one esbuild bundle of src/main.tsx (preact, @writ/contracts,
// @writ/verification and this app's modules) and its stylesheet, written with content
// hashes in their names to dist/public/assets/, and dist/public/index.html naming them.
// Everything the browser runs comes from this directory: no CDN, no external URL, no
// inline script or style, so the projection can serve it under a strict CSP.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.dirname(new URL(import.meta.url).pathname);
const out = path.join(root, 'dist', 'public');

await rm(path.join(root, 'dist'), { recursive: true, force: true });
await mkdir(path.join(out, 'assets'), { recursive: true });

const result = await build({
  absWorkingDir: root,
  entryPoints: { console: 'src/main.tsx' },
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome120', 'firefox128', 'safari17'],
  // Workspace packages from their TypeScript sources (no dist needed, one compiler pass).
  conditions: ['@writ/source'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: true,
  sourcemap: 'linked',
  legalComments: 'linked',
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  outdir: path.join(out, 'assets'),
  metafile: true,
  logLevel: 'warning',
  // A browser bundle must not reach for Node: fail the build rather than ship a shim.
  external: [],
  define: { 'process.env.NODE_ENV': '"production"' },
});

const outputs = Object.keys(result.metafile.outputs).map((file) => path.relative(out, path.join(root, file)));
const script = outputs.find((file) => /^assets\/console-[A-Z0-9]+\.js$/.test(file));
const style = outputs.find((file) => /^assets\/console-[A-Z0-9]+\.css$/.test(file));
if (script === undefined || style === undefined) throw new Error(`the bundle lacks its script or stylesheet: ${outputs.join(', ')}`);

const template = await readFile(path.join(root, 'src', 'index.html'), 'utf8');
await writeFile(path.join(out, 'index.html'), template.replace('%STYLE%', style).replace('%SCRIPT%', script));

const bytes = Object.values(result.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
console.log(`console: ${script}, ${style} (${Math.round(bytes / 1024)} KiB with source maps) → ${path.relative(process.cwd(), out)}`);
