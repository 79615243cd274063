#!/usr/bin/env node
// Writes docs/configuration.md: every WRIT_* environment variable, generated from the
// services' zod schemas (services/<name>/src/config.ts, each built on @writ/runtime's
// serviceEnvironment and, where it has durables, busConsumerVariables) and a scan of the rest of
// the source. It fails when a service copies a shared declaration instead of building on it.
//
//   npx nx run-many -t build && node scripts/generate-config-reference.mjs           # write
//   npx nx run-many -t build && node scripts/generate-config-reference.mjs --check   # CI: exit 1 on drift
//
// Defaults and bounds come from each service's built schema (dist/config.js: the one
// export that is a zod object keyed by WRIT_* names); descriptions from the JSDoc above
// each property in the TypeScript source. The shared section lists what
// libs/runtime/src/service-environment.ts declares, with the services whose schema reads
// each; a service's section, the rest of its schema. "Read outside the service schemas"
// lists every other WRIT_* name that non-test source under libs/, services/ and apps/
// reads: `env['WRIT_X']`, `env.WRIT_X`, `const { WRIT_X } = env`, the keys of another
// `z.object(...)`, and names built at run time (`env[`WRIT_${x}_ID`]`, shown as written).
//
// --check writes nothing; it exits 1 if docs/configuration.md is stale or missing.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { z } from 'zod';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outFile = join(root, 'docs', 'configuration.md');
const RUNTIME_SOURCE = 'libs/runtime/src/service-environment.ts';
const REGENERATE = 'npx nx run-many -t build && node scripts/generate-config-reference.mjs';
const VARIABLE = /^WRIT_[A-Z0-9_]+$/;

const check = process.argv.includes('--check');
const unknownArgs = process.argv.slice(2).filter((arg) => arg !== '--check');
if (unknownArgs.length > 0) {
  console.error(`usage: node scripts/generate-config-reference.mjs [--check]  (unknown: ${unknownArgs.join(' ')})`);
  process.exit(2);
}

function fail(message) {
  console.error(message);
  process.exit(2);
}

// --- The services and their sources -----------------------------------------------------------

const services = readdirSync(join(root, 'services'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(root, 'services', entry.name, 'src', 'config.ts')))
  .map((entry) => ({ name: entry.name, source: `services/${entry.name}/src/config.ts`, dist: join(root, 'services', entry.name, 'dist', 'config.js') }))
  .sort((a, b) => a.name.localeCompare(b.name));
if (services.length === 0) fail('no services/<name>/src/config.ts found');

// Parsed, not type-checked: every variable is declared by name (a computed key fails below).
const sourceFile = (file) => ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);

function jsDocText(node) {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
  const text = docs.length === 0 ? '' : (ts.getTextOfJSDocComment(docs[docs.length - 1].comment) ?? '');
  return text.replace(/\s+/g, ' ').trim();
}

const isCall = (node, method) => ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === method;

/** `.default(() => …)`: a default computed where the service starts (a hostname…), not a constant. */
function hasComputedDefault(initializer) {
  let computed = false;
  const visit = (node) => {
    if (isCall(node, 'default') && node.arguments.length > 0 && (ts.isArrowFunction(node.arguments[0]) || ts.isFunctionExpression(node.arguments[0]))) computed = true;
    ts.forEachChild(node, visit);
  };
  visit(initializer);
  return computed;
}

/**
 * Every WRIT_* property of the file's object literals (the shapes handed to `z.object`,
 * `.extend`, `commonShape`, `busConsumerVariables`): its JSDoc, whether its default is
 * computed at start, and whether it re-declares a shared variable in `.extend(...)`.
 */
function declarations(file) {
  const found = new Map();
  const visit = (node) => {
    if (ts.isPropertyAssignment(node) && ts.isObjectLiteralExpression(node.parent)) {
      const key = node.name;
      if (ts.isComputedPropertyName(key)) fail(`${file}: a computed key (${key.getText()}); declare each WRIT_* variable by name so that its JSDoc documents it`);
      const names = ts.isIdentifier(key) || ts.isStringLiteral(key) ? [key.text] : [];
      const call = node.parent.parent;
      for (const name of names.filter((n) => VARIABLE.test(n))) {
        if (found.has(name)) fail(`${file}: ${name} is declared twice; the reference cannot tell which comment documents it`);
        found.set(name, { description: jsDocText(node), computedDefault: hasComputedDefault(node.initializer), inExtend: isCall(call, 'extend') });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile(file));
  return found;
}

const shared = declarations(RUNTIME_SOURCE);
for (const service of services) service.declared = declarations(service.source);

// A shared variable has one declaration: a service builds on serviceEnvironment and takes busConsumerVariables
// (spread, or by name as `{ WRIT_BUS_MAX_DELIVER }`, which declares nothing). It may narrow one in `.extend(...)`
// (atLeast, another default), and its JSDoc there says why; a copy elsewhere is how defaults drifted apart.
for (const service of services) {
  for (const [name, declaration] of service.declared) {
    if (!shared.has(name)) continue;
    if (!declaration.inExtend) fail(`${service.source}: ${name} copies the declaration in ${RUNTIME_SOURCE}; build on serviceEnvironment / busConsumerVariables / artifactVariables instead`);
    if (declaration.description === '') fail(`${service.source}: ${name} narrows the shared declaration in .extend(...) without a JSDoc saying why`);
  }
}

// --- The built schemas --------------------------------------------------------------------------

const isZod = (value) => typeof value === 'object' && value !== null && '_zod' in value;
function objectOf(schema) {
  let current = schema;
  while (current._zod.def.type === 'pipe') current = current._zod.def.in;
  return current._zod.def.type === 'object' ? current : undefined;
}

const RUNTIME_DIST = join(root, 'libs', 'runtime', 'dist', 'service-environment.js');
let commonNames;
try {
  const { serviceEnvironment } = await import(pathToFileURL(RUNTIME_DIST).href);
  commonNames = Object.keys(serviceEnvironment({ httpPort: 0 }).shape);
} catch (error) {
  fail(`Cannot load ${relative(root, RUNTIME_DIST)}; build first: npx nx run-many -t build\n${error.stack ?? error}`);
}

for (const service of services) {
  let module;
  try {
    module = await import(pathToFileURL(service.dist).href);
  } catch (error) {
    fail(`Cannot load ${relative(root, service.dist)}; build first: npx nx run-many -t build\n${error.stack ?? error}`);
  }
  const schemas = Object.entries(module)
    .filter(([, value]) => isZod(value))
    .map(([exportName, value]) => ({ exportName, object: objectOf(value) }))
    .filter(({ object }) => object !== undefined && Object.keys(object._zod.def.shape).length > 0 && Object.keys(object._zod.def.shape).every((key) => VARIABLE.test(key)));
  if (schemas.length !== 1) {
    fail(`${service.source} must export exactly one zod object keyed by WRIT_* names (its environment); found ${schemas.length}: ${schemas.map((s) => s.exportName).join(', ') || 'none'}`);
  }
  service.exportName = schemas[0].exportName;
  service.shape = schemas[0].object._zod.def.shape;
  const missing = commonNames.filter((name) => !(name in service.shape));
  if (missing.length > 0) fail(`${service.source}: ${service.exportName} does not build on serviceEnvironment (${RUNTIME_SOURCE}); it lacks ${missing.join(', ')}`);
  // The built schema and the source must name the same variables, or one of them is out of date.
  const built = Object.keys(service.shape);
  const onlyBuilt = built.filter((name) => !service.declared.has(name) && !shared.has(name));
  const onlySource = [...service.declared.keys()].filter((name) => !built.includes(name));
  if (onlyBuilt.length > 0 || onlySource.length > 0) {
    fail(
      `${relative(root, service.dist)} does not match ${service.source}` +
        (onlySource.length > 0 ? `; only in the source: ${onlySource.join(', ')}` : '') +
        (onlyBuilt.length > 0 ? `; only in the build: ${onlyBuilt.join(', ')}` : '') +
        `\nBuild first: npx nx run-many -t build (a variable declared outside ${service.source} and ${RUNTIME_SOURCE} is not supported)`,
    );
  }
}

// --- Cells ----------------------------------------------------------------------------------------

const code = (value) => `\`${value}\``;

/** Outside code spans, `<` would open an HTML tag and `|` a table cell. */
function markdown(text) {
  return text
    .split(/(`[^`]*`)/)
    .map((part, index) => (index % 2 === 1 ? part : part.replace(/</g, '&lt;')))
    .join('')
    .replace(/\|/g, '\\|');
}

function unit(value, units) {
  const match = units.find(([size]) => value >= size && value % size === 0);
  return match === undefined ? '' : ` (${value / match[0]} ${match[1]})`;
}

/** 10737418240 → "(10 GiB)" for a *_BYTES variable; 43200 → "(12 h)" for a *_SECONDS one. */
function readable(name, value) {
  if (typeof value !== 'number' || value === 0) return '';
  if (name.endsWith('_BYTES')) return unit(value, [[1024 ** 3, 'GiB'], [1024 ** 2, 'MiB'], [1024, 'KiB']]);
  const ms = name.endsWith('_MS') ? value : name.endsWith('_SECONDS') ? value * 1000 : undefined;
  if (ms === undefined) return '';
  const text = unit(ms, [[86_400_000, 'd'], [3_600_000, 'h'], [60_000, 'min'], [1_000, 's']]);
  return name.endsWith('_SECONDS') && text.endsWith(' s)') ? '' : text;
}

function bounds(field) {
  let json;
  try {
    json = z.toJSONSchema(field, { io: 'input', unrepresentable: 'any' });
  } catch {
    return '';
  }
  if (Array.isArray(json.enum)) return `one of ${json.enum.map(code).join(', ')}`;
  if (json.type !== 'integer' && json.type !== 'number') return '';
  const kind = json.type === 'integer' ? 'integer' : 'number';
  const max = json.maximum !== undefined && json.maximum < Number.MAX_SAFE_INTEGER ? json.maximum : undefined;
  if (json.minimum !== undefined && max !== undefined) return `${kind} ${json.minimum}–${max}`;
  if (json.minimum !== undefined) return `${kind} ≥ ${json.minimum}`;
  return max === undefined ? kind : `${kind} ≤ ${max}`;
}

function defaultValue(name, field, declaration) {
  if (declaration?.computedDefault) return 'computed at start';
  const result = field.safeParse(undefined);
  if (!result.success) return '**required**';
  if (result.data === undefined) return 'unset';
  return `${code(typeof result.data === 'string' ? result.data : JSON.stringify(result.data))}${readable(name, result.data)}`;
}

const joinCell = (value, range) => (range === '' ? value : `${value}; ${range}`);
const defaultCell = (name, field, declaration) => joinCell(defaultValue(name, field, declaration), bounds(field));

const row = (cells) => `| ${cells.join(' | ')} |`;

// --- Sections -------------------------------------------------------------------------------------

/** Each file's WRIT_* declarations without a JSDoc (they get an empty description). */
function undocumented() {
  const missing = [...shared].filter(([, declaration]) => declaration.description === '').map(([name]) => `${RUNTIME_SOURCE}: ${name}`);
  for (const service of services) {
    for (const [name, declaration] of service.declared) if (declaration.description === '') missing.push(`${service.source}: ${name}`);
  }
  return missing;
}

/** One cell for the services reading a shared variable: one value when they agree, else each group's. */
function sharedDefaultCell(name, readers, declaration) {
  const group = (cellOf) => {
    const groups = new Map();
    for (const service of readers) {
      const cell = cellOf(service);
      groups.set(cell, [...(groups.get(cell) ?? []), service.name]);
    }
    return groups.size === 1 ? [...groups.keys()][0] : [...groups].map(([cell, names]) => `${names.join(', ')}: ${cell}`).join('<br>');
  };
  const ranges = new Set(readers.map((service) => bounds(service.shape[name])));
  const valueOf = (service) => defaultValue(name, service.shape[name], service.declared.get(name) ?? declaration);
  if (ranges.size > 1) return group((service) => joinCell(valueOf(service), bounds(service.shape[name])));
  // Bounds every reader shares are stated once, after the values.
  const values = group(valueOf);
  const [range] = ranges;
  return range === '' ? values : `${values}${values.includes('<br>') ? '<br>' : '; '}${range}`;
}

/**
 * A service's own comment on a shared variable, where it says more than the shared one: the
 * service narrows it in `.extend(...)`, or leaves it unset where the others have a default.
 */
function serviceNotes(name, readers) {
  const unsetByDefault = (service) => defaultValue(name, service.shape[name], service.declared.get(name)) === 'unset';
  const someHaveDefault = readers.some((service) => !unsetByDefault(service));
  return readers
    .filter((service) => {
      const own = service.declared.get(name);
      return own !== undefined && own.description !== '' && (own.inExtend || (someHaveDefault && unsetByDefault(service)));
    })
    .map((service) => `<br>${service.name}: ${markdown(service.declared.get(name).description)}`)
    .join('');
}

function sharedSection() {
  const lines = [
    '## Every service',
    '',
    `Declared once in \`${RUNTIME_SOURCE}\` (\`serviceEnvironment\`, \`busConsumerVariables\`, \`artifactVariables\`): every service's`,
    'schema builds on them. Where a service narrows a bound or sets another default, each value is shown, and',
    "the service's reason follows the shared description.",
    '',
    row(['Variable', 'Default', 'Read by', 'Description']),
    row(['---', '---', '---', '---']),
  ];
  for (const [name, declaration] of shared) {
    const readers = services.filter((service) => name in service.shape);
    const readBy = readers.length === services.length ? 'every service' : readers.length === 0 ? '—' : readers.map((service) => service.name).join(', ');
    lines.push(row([code(name), readers.length === 0 ? '—' : sharedDefaultCell(name, readers, declaration), readBy, markdown(declaration.description) + serviceNotes(name, readers)]));
  }
  return lines;
}

function serviceSection(service) {
  const lines = [
    `## ${service.name}`,
    '',
    `\`${service.exportName}\` in \`${service.source}\`, besides the variables every service reads.`,
    '',
    row(['Variable', 'Default', 'Description']),
    row(['---', '---', '---']),
  ];
  for (const [name, field] of Object.entries(service.shape)) {
    if (shared.has(name)) continue;
    const declaration = service.declared.get(name);
    lines.push(row([code(name), defaultCell(name, field, declaration), markdown(declaration.description)]));
  }
  return lines;
}

// --- Everything else that reads a WRIT_* variable --------------------------------------------------

function* sourceFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!['node_modules', 'dist', 'test'].includes(entry.name)) yield* sourceFiles(path);
    } else if (/\.(c|m)?(t|j)sx?$/.test(entry.name) && !/\.(spec|test|d)\.(c|m)?(t|j)sx?$/.test(entry.name)) yield path;
  }
}

/** What a file reads: `x['WRIT_A']`, `x.WRIT_A`, `{ WRIT_A } = x`, `z.object({ WRIT_A: … })`, `x[`WRIT_${…}`]`. */
function readsIn(path) {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const names = new Set();
  const visit = (node) => {
    if (ts.isElementAccessExpression(node)) {
      const argument = node.argumentExpression;
      if (ts.isStringLiteralLike(argument) && VARIABLE.test(argument.text)) names.add(argument.text);
      if (ts.isTemplateExpression(argument) && argument.head.text.startsWith('WRIT_')) names.add(argument.getText(source).slice(1, -1));
    } else if (ts.isPropertyAccessExpression(node) && VARIABLE.test(node.name.text)) names.add(node.name.text);
    else if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent)) {
      const key = node.propertyName ?? node.name;
      if (ts.isIdentifier(key) && VARIABLE.test(key.text)) names.add(key.text);
    } else if ((isCall(node, 'object') || isCall(node, 'extend')) && node.arguments[0] !== undefined && ts.isObjectLiteralExpression(node.arguments[0])) {
      for (const property of node.arguments[0].properties) if (property.name !== undefined && ts.isIdentifier(property.name) && VARIABLE.test(property.name.text)) names.add(property.name.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return names;
}

function outsideSection() {
  const inSchemas = new Set(services.flatMap((service) => Object.keys(service.shape)));
  const readers = new Map();
  for (const top of ['libs', 'services', 'apps']) {
    for (const path of sourceFiles(join(root, top))) {
      for (const name of readsIn(path)) if (!inSchemas.has(name)) readers.set(name, [...(readers.get(name) ?? []), relative(root, path)]);
    }
  }
  const lines = [
    '## Read outside the service schemas',
    '',
    'Read directly from the environment by the libraries, the services or the CLI (`apps/cli`), without a',
    'service schema: see each file for what it does. A name with `${…}` is built at run time.',
    '',
    row(['Variable', 'Read in']),
    row(['---', '---']),
  ];
  for (const name of [...readers.keys()].sort()) lines.push(row([code(name), readers.get(name).sort().map(code).join(', ')]));
  return { lines, count: readers.size };
}

// --- The document -----------------------------------------------------------------------------------

const outside = outsideSection();
const text = [
  '<!-- Generated by scripts/generate-config-reference.mjs: do not edit; change the JSDoc in the config sources. -->',
  '',
  '# Configuration reference',
  '',
  "Every `WRIT_*` environment variable Writ reads: the services', generated from their zod schemas",
  '(`services/<name>/src/config.ts`: defaults and bounds from the built schema, descriptions from the',
  'JSDoc above each variable), then those read elsewhere (libraries, CLI), found by a scan of the source.',
  '`npm test` fails when this file is stale; regenerate it with `npm run config-reference`, or:',
  '',
  '```sh',
  REGENERATE,
  '```',
  '',
  'Default: the value a service uses when the variable is unset; "unset" when the variable is optional',
  '(the description says what applies then). Integer bounds are inclusive. A service refuses to start',
  '(`RUNTIME_CONFIG_INVALID`, naming each offending variable) when a value is out of bounds.',
  '',
  ...sharedSection(),
  '',
  ...services.flatMap((service) => [...serviceSection(service), '']),
  ...outside.lines,
  '',
].join('\n');

const missing = undocumented();
if (missing.length > 0) console.warn(`warning: no JSDoc above these variables, so no description:\n  ${missing.join('\n  ')}`);

const summary = `${shared.size} shared, ${services.map((service) => `${Object.keys(service.shape).filter((name) => !shared.has(name)).length} ${service.name}`).join(', ')}, ${outside.count} read outside the schemas`;
const current = await readFile(outFile, 'utf8').catch((error) => (error.code === 'ENOENT' ? null : Promise.reject(error)));
const rel = relative(root, outFile);
if (check) {
  if (current === text) {
    console.log(`${rel} is up to date (${summary}).`);
    process.exit(0);
  }
  console.error(`${rel} is ${current === null ? 'missing' : 'stale: it does not match the schemas and their JSDoc'}.`);
  console.error(`Run: ${REGENERATE}`);
  process.exit(1);
}
if (current === text) console.log(`${rel} unchanged (${summary}).`);
else {
  await writeFile(outFile, text, 'utf8');
  console.log(`wrote ${rel} (${summary}).`);
}
