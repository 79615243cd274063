import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';

/**
 * What `npm pack` ships works on its own: the tarball is installed into a
 * directory outside the workspace with npm (its dependencies from the
 * registry, no workspace resolution), imported with plain node, and its
 * declarations type-check a consumer under tsc --strict without skipLibCheck.
 * Needs the package built (`nx run @writ/agent:build`) and the npm registry.
 */

const run = promisify(execFile);
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const repoBin = path.resolve(packageDir, '..', '..', 'node_modules', '.bin');
const STEP_MS = 240_000;

let consumer: string;
let tarball: string;

beforeAll(async () => {
  if (!existsSync(path.join(packageDir, 'dist', 'index.js'))) throw new Error('@writ/agent is not built: npx nx run @writ/agent:build');
  consumer = await mkdtemp(path.join(tmpdir(), 'writ-agent-consumer-'));
}, STEP_MS);

afterAll(async () => {
  if (consumer !== undefined) await rm(consumer, { recursive: true, force: true });
});

const env = { ...process.env, PATH: `${repoBin}${path.delimiter}${process.env['PATH'] ?? ''}`, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };

it(
  'given the built package, when it is packed, then the tarball holds dist (JavaScript and declarations, no maps) and the README only',
  async () => {
    // when
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', consumer], { cwd: packageDir, env });
    const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    tarball = path.join(consumer, String(packed?.filename));
    // then
    const files = (packed?.files ?? []).map((file) => file.path);
    expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/vendor/contracts/index.js', 'dist/vendor/contracts/index.d.ts']));
    expect(files.filter((file) => !(file === 'package.json' || file === 'README.md' || file.startsWith('dist/')))).toEqual([]);
    expect(files.filter((file) => file.endsWith('.map') || file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
  },
  STEP_MS,
);

it(
  'given the tarball installed outside the workspace, when plain node imports it and a consumer type-checks against it, then both work',
  async () => {
    // given: a consumer project that knows nothing of the workspace
    expect(tarball).toBeDefined();
    await writeFile(path.join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await run('npm', ['install', tarball, '@types/node@24.19.2'], { cwd: consumer, env, timeout: STEP_MS });
    await writeFile(
      path.join(consumer, 'consumer.ts'),
      [
        "import { WritAgent, buildActionRequest, generateAgentKey, isAgentError, signActionRequest, type ActionRequestFields, type Outcome } from '@writ/agent';",
        'const key = await generateAgentKey({ kid: "consumer-k1" });',
        "const fields: ActionRequestFields = { task: { title: 't', goal: 'g', policy_profile: 'local_edit_allowed', files_owned: ['**'] }, action_class: 'execute_command', target_resources: ['x'], params: { argv: ['true'] }, expected_effects: [], reversibility_hint: 'reversible', reason: 'r' };",
        "const signed = await signActionRequest(buildActionRequest(fields, { principalId: 'consumer' }), key);",
        "const agent = new WritAgent({ principalId: 'consumer', key, apiUrl: 'http://127.0.0.1:9' });",
        'let outcome: Outcome | undefined;',
        'let code: string | undefined;',
        'try { outcome = await agent.awaitOutcome(signed.request.action_request_id, { timeoutMs: 1 }); } catch (error) { if (isAgentError(error)) code = error.code; }',
        'await agent.close();',
        'console.log(JSON.stringify({ parts: signed.jws.split(".").length, code, outcome: outcome ?? null }));',
      ].join('\n'),
    );
    await writeFile(
      path.join(consumer, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'es2023', lib: ['es2023'], module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] }, files: ['consumer.ts'] }),
    );

    // when: plain node (type stripping, no loader, no workspace), and tsc on the shipped declarations
    const ran = await run(path.join(repoBin, 'node'), ['consumer.ts'], { cwd: consumer, env, timeout: 60_000 });
    const typed = await run(path.join(repoBin, 'tsc'), ['-p', 'tsconfig.json'], { cwd: consumer, env, timeout: STEP_MS }).then(
      () => ({ ok: true, output: '' }),
      (error: { stdout?: string }) => ({ ok: false, output: error.stdout ?? String(error) }),
    );

    // then: it signs, and nothing answering on the API is AGENT_API_UNAVAILABLE, not a crash
    expect(JSON.parse(ran.stdout.trim())).toEqual({ parts: 3, code: 'AGENT_API_UNAVAILABLE', outcome: null });
    expect(typed).toEqual({ ok: true, output: '' });
    // and no installed file names a private workspace package
    const installed = path.join(consumer, 'node_modules', '@writ', 'agent', 'dist');
    const shipped = (await readdir(installed, { recursive: true })).filter((file) => file.endsWith('.js') || file.endsWith('.d.ts'));
    const leaking: string[] = [];
    for (const file of shipped) if (/(?:from\s*|import\s*\(\s*)['"]@writ\//.test(await readFile(path.join(installed, file), 'utf8'))) leaking.push(file);
    expect(shipped.length).toBeGreaterThan(100);
    expect(leaking).toEqual([]);
  },
  STEP_MS,
);
