#!/usr/bin/env node
// Writes the JSON Schema of every public contract to docs/schemas/<name>.schema.json,
// generated from the zod schemas of the built @writ/contracts package; the dashboard
// contract's (issue 16) to docs/schemas/projection-rows/ (each published view's row and
// the changes feed's messages) and the AsyncAPI document of the public subjects to
// docs/asyncapi.json (@writ/contracts/projection-rows).
//
//   npx nx run @writ/contracts:build && node scripts/generate-schemas.mjs           # write
//   npx nx run @writ/contracts:build && node scripts/generate-schemas.mjs --check   # CI: exit 1 on drift
//
// --check writes nothing; it lists every file that is stale, missing, or no
// longer generated (an orphan *.schema.json) and exits 1 if there is any.
import { mkdir, readdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, 'docs', 'schemas');
const check = process.argv.includes('--check');
const unknownArgs = process.argv.slice(2).filter((arg) => arg !== '--check');
if (unknownArgs.length > 0) {
  console.error(`usage: node scripts/generate-schemas.mjs [--check]  (unknown: ${unknownArgs.join(' ')})`);
  process.exit(2);
}

let contracts;
let rows;
try {
  contracts = await import('@writ/contracts');
  rows = await import('@writ/contracts/projection-rows');
} catch (error) {
  console.error('Cannot load @writ/contracts; build it first: npx nx run @writ/contracts:build');
  console.error(error);
  process.exit(2);
}

const documents = [...contracts.jsonSchemaDocuments(), ...rows.projectionRowSchemaDocuments()];
const expected = new Map(documents.map((doc) => [doc.file, doc.text]));
// Paths under docs/schemas; the AsyncAPI document sits beside it, at docs/asyncapi.json.
const ASYNCAPI = '../asyncapi.json';
expected.set(ASYNCAPI, rows.asyncApiText());

async function readOrNull(path) {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if (error.code === 'ENOENT') return null;
    throw error;
  }
}

async function schemaFilesIn(dir) {
  try {
    return (await readdir(join(outDir, dir))).filter((name) => name.endsWith('.schema.json')).map((name) => (dir === '.' ? name : `${dir}/${name}`));
  } catch (error) {
    if (error.code === 'ENOENT') return [];
    throw error;
  }
}

async function existingSchemaFiles() {
  return [...(await schemaFilesIn('.')), ...(await schemaFilesIn('projection-rows'))];
}

const problems = [];
for (const [file, text] of expected) {
  const current = await readOrNull(join(outDir, file));
  if (current === null) problems.push({ file, state: 'missing' });
  else if (current !== text) problems.push({ file, state: 'stale' });
}
for (const file of await existingSchemaFiles()) {
  if (!expected.has(file)) problems.push({ file, state: 'orphan' });
}

const rel = (file) => relative(root, join(outDir, file));

if (check) {
  if (problems.length === 0) {
    console.log(`docs/schemas and docs/asyncapi.json are up to date (${expected.size} documents).`);
    process.exit(0);
  }
  console.error('docs/schemas or docs/asyncapi.json does not match the zod contracts:');
  for (const { file, state } of problems) console.error(`  ${state.padEnd(7)} ${rel(file)}`);
  console.error('Run: npx nx run @writ/contracts:build && node scripts/generate-schemas.mjs');
  process.exit(1);
}

for (const { file, state } of problems) {
  await mkdir(dirname(join(outDir, file)), { recursive: true });
  if (state === 'orphan') await unlink(join(outDir, file));
  else await writeFile(join(outDir, file), expected.get(file), 'utf8');
  console.log(`${state === 'orphan' ? 'removed' : 'wrote  '} ${rel(file)}`);
}
console.log(`${problems.length} file(s) changed, ${expected.size} contracts.`);
