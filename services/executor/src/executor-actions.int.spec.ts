import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { ExecutionCompleted, type ActionRequest, type EventEnvelope } from '@writ/contracts';
import { uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { egressTestLookup, endOfUse, ExecutorRig, newIds, request, runAction } from '../test/executor-rig.js';
import { recordRequests, type SeenRequest } from '../test/recording-server.js';
import { TestPki } from '../test/test-pki.js';

/**
 * network_read / network_write and vcs_mutation through the whole executor (grant verified, use
 * claimed, a real Docker cell, recorded with artifacts), against the real NATS and Docker Engine:
 * HTTP and HTTPS are sent from inside the cell through the egress proxy to host servers reachable
 * only that way (the https server's certificates come from CAs made at test time; the executor
 * trusts one through WRIT_EXECUTOR_EXTRA_CA_FILE); git runs in the task's cell. Everything is test-unique and removed afterwards.
 */

const rig = new ExecutorRig();
const TOKEN = `tok-${randomBytes(12).toString('hex')}`;

let port = 0;
const seen: SeenRequest[] = [];
let pki: TestPki;
let tlsPort = 0;
/** What the https server's handler saw (only requests that came through a verified handshake reach it). */
const tlsSeen: SeenRequest[] = [];

beforeAll(async () => {
  const secretsDir = await rig.secretsDir('writ-network-secrets-', { api_token: TOKEN });
  // secure.egress.test: issued by the CA the executor trusts; untrusted.egress.test: by a CA it does
  // not; wrong.egress.test: served secure.egress.test's certificate (picked by SNI).
  pki = new TestPki();
  const ca = pki.createCa('writ-actions-ca');
  const trusted = pki.issueServerCert(ca, ['secure.egress.test']);
  const untrusted = pki.issueServerCert(pki.createCa('writ-actions-untrusted-ca'), ['untrusted.egress.test']);
  const tlsServer = createHttpsServer(
    { cert: trusted.certPem, key: trusted.keyPem, SNICallback: (name, done) => done(null, name === 'untrusted.egress.test' ? untrusted.context : trusted.context) },
    recordRequests(tlsSeen, (req, res, body) => {
      res.writeHead(200, { 'x-tls': 'yes', 'content-type': 'text/plain' });
      res.end(`${req.method} ${req.url} auth=${req.headers.authorization ?? '-'} body=${body}`);
    }),
  );
  tlsPort = await rig.listen(tlsServer);
  await rig.start('executor-network', {
    cellsRoots: ['writ-network-'],
    env: { WRIT_SECRETS_DIR: secretsDir, WRIT_CELL_POOL_SIZE: '0', WRIT_EXECUTOR_EXTRA_CA_FILE: ca.certFile },
    executorIds: ['executor-network'],
    app: { egress: { lookup: egressTestLookup } },
    approval: { kid: 'approval-network', displayName: 'approval (network test)' },
  });
  const server = createServer(
    recordRequests(seen, (req, res, body) => {
      res.writeHead(201, { 'x-echo': 'yes', 'content-type': 'text/plain' });
      res.end(`${req.method} ${req.url} auth=${req.headers.authorization ?? '-'} body=${body}`);
    }),
  );
  port = await rig.listen(server);
}, 300_000);

afterAll(async () => {
  await rig.close();
  pki?.remove();
}, 60_000);

interface Ran {
  readonly completed?: ExecutionCompleted;
  readonly refused?: { code: string };
  readonly stdout: string;
  readonly log: EventEnvelope[];
}

async function artifactBytes(sha256: string): Promise<Buffer> {
  return Buffer.from((await rig.objectBytes(sha256)) ?? []);
}

/** Runs one action through the executor (a fresh attempt of `taskId`, or of a new task) and waits for how it ended. */
async function act(actionClass: ActionRequest['action_class'], params: ActionRequest['params'], grant: { hosts: string[]; secret_handles?: string[]; repos?: { repo: string; refs: string[] }[] }, taskId?: string): Promise<Ran> {
  const ids = newIds('net', taskId);
  const minted = await rig.mint({ ids, actionClass, hosts: grant.hosts, repos: grant.repos, constraints: grant.secret_handles === undefined ? {} : { secret_handles: grant.secret_handles } });
  const targets = typeof params.url === 'string' ? [params.url] : ['.', ...(grant.repos ?? []).map((scope) => `repo:${scope.repo}@refs/heads/main`)];
  const actionRequest = request(ids, { action_class: actionClass, target_resources: targets, params });
  await rig.publishRunAction(runAction(ids, minted, actionRequest));
  const ended = await rig.waitForTaskEvent(ids.task_id, `the end of ${actionClass} ${String(params.url)}`, endOfUse(minted.grant_id), { timeoutMs: 90_000 });
  const log = await rig.events(ids.task_id);
  if (ended.event_type === 'grant.refused') return { refused: ended.payload as { code: string }, stdout: '', log };
  const completed = ExecutionCompleted.parse(ended.payload);
  return { completed, stdout: (await artifactBytes(completed.stdout_sha256)).toString('utf8'), log };
}

function artifactOf(ran: Ran, kind: string) {
  return ran.completed?.artifacts.find((artifact) => artifact.kind === kind);
}

describe('network_read / network_write: HTTP sent from the cell through the egress proxy (issue 5)', () => {
  it('given a granted host, when network_read GETs it, then the server answers and status, headers and body are artifacts', async () => {
    const before = seen.length;
    const url = `http://api.egress.test:${port}/items?page=2`;
    const ran = await act('network_read', { url, headers: { Accept: 'text/plain' } }, { hosts: [`api.egress.test:${port}`] });
    expect(ran.completed).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(ran.completed?.error).toBeUndefined();
    expect(seen.slice(before)).toMatchObject([{ method: 'GET', url: '/items?page=2', headers: { accept: 'text/plain', host: `api.egress.test:${port}` } }]);
    const response = JSON.parse((await artifactBytes(artifactOf(ran, 'http.response')?.content_hash ?? '')).toString('utf8')) as Record<string, unknown>;
    expect(response).toMatchObject({ format: 'writ.http-response/1', request: { method: 'GET', url }, status: 201, body_truncated: false });
    expect(response['headers']).toContainEqual({ name: 'x-echo', value: 'yes' });
    const body = artifactOf(ran, 'http.body');
    expect(body?.content_hash).toBe(response['body_sha256']);
    expect((await artifactBytes(body?.content_hash ?? '')).toString('utf8')).toBe('GET /items?page=2 auth=- body=');
    expect(ran.stdout).toMatch(/^HTTP\/1\.[01] 201 /);
    expect(ran.completed?.environment?.network_mode).toMatch(/^writ-egress-[0-9a-f]{12}$/);
  });

  it('given a granted host and secret handle, when network_write POSTs a body with {{secret:api_token}} in a header, then both arrive and the value is in no artifact or event', async () => {
    const before = seen.length;
    const ran = await act(
      'network_write',
      { url: `http://api.egress.test:${port}/orders`, method: 'POST', body: '{"qty":3}', headers: { Authorization: 'Bearer {{secret:api_token}}', 'Content-Type': 'application/json' }, secret_handles: ['api_token'] },
      { hosts: [`api.egress.test:${port}`], secret_handles: ['api_token'] },
    );
    expect(ran.completed).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(seen.slice(before)).toMatchObject([{ method: 'POST', url: '/orders', body: '{"qty":3}', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } }]);
    // The server echoed the token: the transcript and the body artifact show it redacted, the log never holds it.
    expect(ran.stdout).toContain('auth=Bearer [redacted:api_token] body={"qty":3}');
    expect(ran.stdout).not.toContain(TOKEN);
    for (const artifact of ran.completed?.artifacts ?? []) expect((await artifactBytes(artifact.content_hash)).toString('utf8')).not.toContain(TOKEN);
    expect(JSON.stringify(ran.log)).not.toContain(TOKEN);
  });

  it('given a grant for another host, when network_read names this one, then the grant is refused (GRANT_OUT_OF_SCOPE) and the server sees nothing', async () => {
    const before = seen.length;
    const ran = await act('network_read', { url: `http://api.egress.test:${port}/` }, { hosts: [`other.egress.test:${port}`] });
    expect(ran.refused?.code).toBe('GRANT_OUT_OF_SCOPE');
    expect(ran.log.some((event) => event.event_type === 'grant.use_claimed')).toBe(false);
    expect(seen.length).toBe(before);
  });

  it('given network_write with GET, when it runs, then errored EXECUTOR_PARAMS_INVALID and the server sees nothing', async () => {
    const before = seen.length;
    const ran = await act('network_write', { url: `http://api.egress.test:${port}/`, method: 'GET' }, { hosts: [`api.egress.test:${port}`] });
    expect(ran.completed).toMatchObject({ outcome: 'errored', error: { code: 'EXECUTOR_PARAMS_INVALID' } });
    expect(seen.length).toBe(before);
  });

});

describe('network_read / network_write over https: curl in the cell, through the egress proxy (CONNECT), the server verified (issue 5)', () => {
  const secureUrl = (host: string, rest = '/') => `https://${host}:${tlsPort}${rest}`;

  it('given a server issued by the CA of WRIT_EXECUTOR_EXTRA_CA_FILE, when network_read GETs it, then it completes and status, headers and body are artifacts', async () => {
    const before = tlsSeen.length;
    const url = secureUrl('secure.egress.test', '/items?page=2');
    const ran = await act('network_read', { url, headers: { Accept: 'text/plain' } }, { hosts: [`secure.egress.test:${tlsPort}`] });
    expect(ran.completed).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(ran.completed?.error).toBeUndefined();
    expect(tlsSeen.slice(before)).toMatchObject([{ method: 'GET', url: '/items?page=2', headers: { accept: 'text/plain', host: `secure.egress.test:${tlsPort}`, 'user-agent': 'writ-executor' } }]);
    const response = JSON.parse((await artifactBytes(artifactOf(ran, 'http.response')?.content_hash ?? '')).toString('utf8')) as Record<string, unknown>;
    expect(response).toMatchObject({ format: 'writ.http-response/1', request: { method: 'GET', url }, http_version: 'HTTP/1.1', status: 200, body_truncated: false });
    expect(response['headers']).toContainEqual({ name: 'x-tls', value: 'yes' });
    const body = artifactOf(ran, 'http.body');
    expect(body?.content_hash).toBe(response['body_sha256']);
    expect((await artifactBytes(body?.content_hash ?? '')).toString('utf8')).toBe('GET /items?page=2 auth=- body=');
    expect(ran.completed?.environment?.network_mode).toMatch(/^writ-egress-[0-9a-f]{12}$/);
  });

  it('given a granted secret handle, when network_write POSTs a body with {{secret:api_token}} in a header, then both arrive and the value is in no artifact or event', async () => {
    const before = tlsSeen.length;
    const ran = await act(
      'network_write',
      { url: secureUrl('secure.egress.test', '/orders'), body: '{"qty":3}', headers: { Authorization: 'Bearer {{secret:api_token}}', 'Content-Type': 'application/json' }, secret_handles: ['api_token'] },
      { hosts: [`secure.egress.test:${tlsPort}`], secret_handles: ['api_token'] },
    );
    expect(ran.completed).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(tlsSeen.slice(before)).toMatchObject([{ method: 'POST', url: '/orders', body: '{"qty":3}', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'content-length': '9' } }]);
    expect(ran.stdout).toContain('auth=Bearer [redacted:api_token] body={"qty":3}');
    expect(ran.stdout).not.toContain(TOKEN);
    for (const artifact of ran.completed?.artifacts ?? []) expect((await artifactBytes(artifact.content_hash)).toString('utf8')).not.toContain(TOKEN);
    expect(JSON.stringify(ran.log)).not.toContain(TOKEN);
  });

  it.each([
    ['a server whose CA the executor does not trust', 'untrusted.egress.test'],
    ['a certificate issued for another host name', 'wrong.egress.test'],
  ])('given %s, when network_write POSTs with a secret header, then it ends with EXECUTOR_TLS_VERIFY_FAILED (exit 60) and the server\'s handler sees nothing', async (_note, host) => {
    const before = tlsSeen.length;
    const ran = await act(
      'network_write',
      { url: secureUrl(host, '/orders'), body: 'x', headers: { Authorization: 'Bearer {{secret:api_token}}' }, secret_handles: ['api_token'] },
      { hosts: [`${host}:${tlsPort}`], secret_handles: ['api_token'] },
    );
    expect(ran.completed).toMatchObject({ outcome: 'completed', exit_code: 60, error: { code: 'EXECUTOR_TLS_VERIFY_FAILED' } });
    expect(artifactOf(ran, 'http.response')).toBeUndefined();
    expect(tlsSeen.length).toBe(before);
    expect(JSON.stringify(ran.log)).not.toContain(TOKEN);
  });

  it('given a grant for another host, when network_read names an https URL, then the grant is refused (GRANT_OUT_OF_SCOPE) and the server sees nothing', async () => {
    const before = tlsSeen.length;
    const ran = await act('network_read', { url: secureUrl('secure.egress.test') }, { hosts: [`other.egress.test:${tlsPort}`] });
    expect(ran.refused?.code).toBe('GRANT_OUT_OF_SCOPE');
    expect(ran.log.some((event) => event.event_type === 'grant.use_claimed')).toBe(false);
    expect(tlsSeen.length).toBe(before);
  });
});

/** A vcs_mutation grant names the repository and its refs (contracts: resource_scope.repos). */
const REPO = { hosts: [], repos: [{ repo: 'workspace', refs: ['refs/heads/**'] }] };

describe('vcs_mutation: git inside the task\'s cell (issue 5)', () => {
  it('given a repository made by execute_command, when vcs_mutation adds and commits, then HEAD moves from unborn to a commit authored by the proposer, and .git changes are recorded', async () => {
    const taskId = uniqueName('task-vcs');
    const init = await act('execute_command', { argv: ['sh', '-c', 'git init -q -b main && echo hello > a.txt && echo ok'] }, { hosts: [] }, taskId);
    expect(init.completed).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(init.stdout).toBe('ok\n');

    const add = await act('vcs_mutation', { argv: ['git', 'add', 'a.txt'] }, REPO, taskId);
    expect(add.refused).toBeUndefined();
    expect(add.completed).toMatchObject({ outcome: 'completed', exit_code: 0 });
    const commit = await act('vcs_mutation', { argv: ['git', 'commit', '-q', '-m', 'first'] }, REPO, taskId);
    expect(commit.completed).toMatchObject({ outcome: 'completed', exit_code: 0 });
    const head = JSON.parse((await artifactBytes(artifactOf(commit, 'vcs.head')?.content_hash ?? '')).toString('utf8')) as { before: { ref: string; commit: string | null }; after: { ref: string; commit: string | null } };
    expect(head.before).toEqual({ ref: 'refs/heads/main', commit: null });
    expect(head.after.ref).toBe('refs/heads/main');
    expect(head.after.commit).toMatch(/^[0-9a-f]{40}$/);
    const changed = commit.completed?.changed_files.map((file) => file.path) ?? [];
    expect(changed).toContain('.git/refs/heads/main');
    expect(changed).not.toContain('a.txt');

    const log = await act('execute_command', { argv: ['git', '-c', 'safe.directory=*', 'log', '--format=%H %an <%ae> %s'] }, { hosts: [] }, taskId);
    expect(log.stdout).toBe(`${head.after.commit} agent-test <agent-test@writ.invalid> first\n`);

    const branch = await act('vcs_mutation', { argv: ['git', 'checkout', '-q', '-b', 'writ/feature'] }, REPO, taskId);
    const moved = JSON.parse((await artifactBytes(artifactOf(branch, 'vcs.head')?.content_hash ?? '')).toString('utf8')) as typeof head;
    expect(moved).toMatchObject({ before: head.after, after: { ref: 'refs/heads/writ/feature', commit: head.after.commit } });
  });

  it.each([
    ['a non-git argv', ['sh', '-c', 'echo ran > ran.txt']],
    ['git with a global option before the subcommand', ['git', '-c', 'core.pager=sh -c "echo ran > ran.txt"', 'log']],
  ])('given %s, when vcs_mutation runs, then errored EXECUTOR_PARAMS_INVALID and nothing ran', async (_note, argv) => {
    const taskId = uniqueName('task-vcs-bad');
    const ran = await act('vcs_mutation', { argv }, REPO, taskId);
    expect(ran.completed).toMatchObject({ outcome: 'errored', error: { code: 'EXECUTOR_PARAMS_INVALID' } });
    expect(existsSync(rig.hostFile(taskId, 'ran.txt'))).toBe(false);
  });
});
