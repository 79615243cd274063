import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ExecutionCompleted, type ActionRequest, type EventEnvelope } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutorApp } from './bootstrap.js';
import { EGRESS_TARGET, egressTestLookup, endOfUse, ExecutorRig, newIds, request, runAction } from '../test/executor-rig.js';

/**
 * Issue 5's escape attempts, each run as a real action through the whole executor
 * (grant verified, use claimed in the log, run in a real Docker cell, recorded with
 * artifacts), against the real NATS and Docker Engine. Each case asserts the outcome
 * (exit code or error code) and that the host is unchanged. Everything this file
 * makes is test-unique (subject root, streams, bucket, `writ.test=<run>` label,
 * temporary cells root and secrets directory) and removed afterwards.
 */

const rig = new ExecutorRig();
const MiB = 1024 ** 2;
/** In the executor's own environment: must never reach a cell. */
const EXECUTOR_SECRET = `exec-env-${randomBytes(8).toString('hex')}`;
/** The value behind the secret handle `deploy_token` (generated at run time, never in the repo). */
const HANDLE_VALUE = `tok-${randomBytes(12).toString('hex')}`;

let executor: ExecutorApp;
let secretsDir: string;
let serverHits = 0;
let serverPort = 0;
/** Egress: the host service a grant names (reached only through the proxy), and its hits. */
let allowedHits = 0;
let allowedPort = 0;

beforeAll(async () => {
  process.env['WRIT_TEST_ESCAPE_SECRET'] = EXECUTOR_SECRET;
  secretsDir = await rig.secretsDir('writ-escape-secrets-', { deploy_token: HANDLE_VALUE });
  [executor] = await rig.start('executor-escape', {
    cellsRoots: ['writ-escape-'],
    env: { WRIT_SECRETS_DIR: secretsDir, WRIT_CELL_POOL_SIZE: '0' },
    executorIds: ['executor-escape'],
    app: {
      // A small memory limit so that the memory hog meets it quickly.
      cells: { memoryBytes: 64 * MiB },
      egress: { lookup: egressTestLookup },
    },
    approval: { kid: 'approval-escape', displayName: 'approval (escape test)' },
  });
  // A host service a cell without an egress grant must never reach.
  const server = createServer((_req, res) => {
    serverHits += 1;
    res.end('reached');
  });
  serverPort = await rig.listen(server);
  const allowedServer = createServer((req, res) => {
    allowedHits += 1;
    res.end(`allowed-ok ${req.headers.host}`);
  });
  allowedPort = await rig.listen(allowedServer);
}, 300_000);

afterAll(async () => {
  await rig.close();
  delete process.env['WRIT_TEST_ESCAPE_SECRET'];
}, 60_000);

/** The capability constraints of a case, as the grant carries them. */
interface Constraints {
  readonly secret_handles?: string[];
  readonly timeout_ms?: number;
}

interface Ran {
  readonly completed?: ExecutionCompleted;
  readonly refused?: { code: string };
  readonly stdout: string;
  readonly stderr: string;
  readonly log: EventEnvelope[];
}

async function artifactText(sha256: string): Promise<string> {
  return Buffer.from((await rig.objectBytes(sha256)) ?? []).toString('utf8');
}

/** Runs one action through the executor (a fresh attempt of `taskId`) and waits for how it ended. */
async function act(taskId: string, params: ActionRequest['params'], options: { actionClass?: ActionRequest['action_class']; constraints?: Constraints; grantClass?: ActionRequest['action_class']; hosts?: string[] } = {}): Promise<Ran> {
  const ids = newIds('escape', taskId);
  const actionClass = options.actionClass ?? 'execute_command';
  const grant = await rig.mint({ ids, actionClass: options.grantClass ?? actionClass, constraints: { ...options.constraints }, hosts: options.hosts ?? [] });
  const actionRequest = request(ids, { action_class: actionClass, target_resources: typeof params.path === 'string' ? [params.path] : ['.'], params });
  await rig.publishRunAction(runAction(ids, grant, actionRequest));
  const ended = await rig.waitForTaskEvent(taskId, `the end of ${JSON.stringify(params)}`, endOfUse(grant.grant_id), { timeoutMs: 90_000 });
  const log = await rig.events(taskId);
  if (ended.event_type === 'grant.refused') return { refused: ended.payload as { code: string }, stdout: '', stderr: '', log };
  const completed = ExecutionCompleted.parse(ended.payload);
  return { completed, stdout: await artifactText(completed.stdout_sha256), stderr: await artifactText(completed.stderr_sha256), log };
}

const sh = (script: string, extra: ActionRequest['params'] = {}): ActionRequest['params'] => ({ argv: ['sh', '-c', script], ...extra });

async function hostHash(file: string): Promise<string> {
  return sha256Hex(await readFile(file));
}

describe('escape attempts run as real actions and are contained (issue 5, DESIGN invariant 7)', () => {
  it('given a cell, when it reads /etc/shadow, then there is none (own rootfs) and the host file is unchanged and never shown', async () => {
    const before = await hostHash('/etc/shadow');
    const ran = await act(uniqueName('task-shadow'), sh('cat /etc/shadow; ls /etc'));
    expect(ran.completed).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(ran.stderr).toContain('/etc/shadow');
    expect(ran.stdout).not.toContain('shadow');
    expect(ran.stdout.split('\n')).toContain('passwd');
    expect(await hostHash('/etc/shadow')).toBe(before);
  });

  it('given a cell, when it writes outside /workspace, then every write fails (read-only root) but /tmp (a cell tmpfs), and the host is unchanged', async () => {
    const marker = `escape-${rig.run}`;
    const ran = await act(uniqueName('task-write'), sh(`for f in /${marker} /etc/${marker} /home/cell/${marker} /usr/${marker} /var/${marker}; do echo x > $f 2>/dev/null && echo "WROTE $f"; done; echo x > /tmp/${marker} && echo TMP_OK; exit 0`));
    expect(ran.completed).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(ran.stdout).not.toContain('WROTE');
    expect(ran.stdout).toContain('TMP_OK');
    for (const dir of ['/', '/etc', '/usr', '/var', '/tmp']) expect(existsSync(path.join(dir, marker))).toBe(false);
  });

  it('given no egress grant, when the cell reaches for a host service, then there is no route and the service sees nothing', async () => {
    const gateway = '172.17.0.1';
    const ran = await act(uniqueName('task-net'), sh(`cat /proc/net/dev | tail -n +3 | cut -d: -f1; wget -q -T 3 -O - http://${gateway}:${serverPort}/ || echo NO_ROUTE; wget -q -T 3 -O - http://127.0.0.1:${serverPort}/ || echo NO_LOCAL`));
    expect(ran.completed).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(ran.stdout.split('\n').map((line) => line.trim()).filter(Boolean)).toEqual(['lo', 'NO_ROUTE', 'NO_LOCAL']);
    expect(ran.stdout).not.toContain('reached');
    expect(serverHits).toBe(0);
    expect(ran.completed?.environment).toMatchObject({ network_mode: 'none' });
  });

  it('given a fork bomb, when it runs, then the pids limit holds it, its group is killed at its timeout, the executor survives and the cell runs the next action', async () => {
    const taskId = uniqueName('task-fork');
    const ran = await act(taskId, sh('bomb() { bomb | bomb & }; bomb; sleep 60', { timeout_ms: 4_000 }));
    expect(ran.completed?.outcome).toBe('completed');
    expect(ran.completed?.timed_out).toBe(true);
    expect(ran.completed?.exit_code).toBe(137);
    const next = await act(taskId, sh('echo alive'));
    expect(next.completed).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(next.stdout).toBe('alive\n');
  });

  it('given a memory hog, when it grows past the cell limit, then the kernel kills it inside the cell (137, not a timeout) and the cell lives on', async () => {
    const taskId = uniqueName('task-mem');
    const ran = await act(taskId, sh('x=aaaaaaaaaaaaaaaa; while :; do x="$x$x"; done', { timeout_ms: 60_000 }));
    expect(ran.completed).toMatchObject({ outcome: 'completed', exit_code: 137, timed_out: false });
    const next = await act(taskId, sh('echo alive'));
    expect(next.stdout).toBe('alive\n');
  });

  it('given `ln -s /etc x` in the workspace, when write_local targets x/pwned, then EXECUTOR_PATH_ESCAPE, nothing runs, and neither the host nor the cell /etc changes', async () => {
    const taskId = uniqueName('task-link');
    const linked = await act(taskId, sh('ln -s /etc x && ln -s / root && echo linked'));
    expect(linked.stdout).toBe('linked\n');
    const write = await act(taskId, { path: 'x/pwned', content: 'owned' }, { actionClass: 'write_local' });
    expect(write.completed).toMatchObject({ outcome: 'errored', error: { code: 'EXECUTOR_PATH_ESCAPE' } });
    const read = await act(taskId, { path: 'root/etc/shadow' }, { actionClass: 'read_local' });
    expect(read.completed).toMatchObject({ outcome: 'errored', error: { code: 'EXECUTOR_PATH_ESCAPE' } });
    // Through the mount: a link inside the cell resolves inside the cell's own read-only root.
    const inCell = await act(taskId, sh('echo x > x/pwned 2>/dev/null && echo WROTE; cat root/etc/shadow 2>/dev/null && echo READ; exit 0'));
    expect(inCell.stdout).toBe('');
    expect(existsSync('/etc/pwned')).toBe(false);
  });

  it('given two tasks, when one cell looks for the other’s workspace, then it cannot be named or reached', async () => {
    const victim = uniqueName('task-victim');
    const attacker = uniqueName('task-attacker');
    await act(victim, sh('echo private > mine.txt'));
    expect(await readFile(path.join(rig.cellsRoot, victim, 'workspace', 'mine.txt'), 'utf8')).toBe('private\n');
    const ran = await act(
      attacker,
      sh(`cat ../${victim}/workspace/mine.txt /workspace/../${victim}/workspace/mine.txt ${rig.cellsRoot}/${victim}/workspace/mine.txt 2>/dev/null; find / -name mine.txt 2>/dev/null; cat /proc/mounts | grep -c workspace; exit 0`),
    );
    expect(ran.completed).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(ran.stdout).toBe('1\n');
    expect(ran.stdout).not.toContain('private');
  });

  it('given a cell, when it looks for the Docker socket or host paths, then there are none', async () => {
    const ran = await act(uniqueName('task-sock'), sh('ls -la /var/run/docker.sock /run/docker.sock 2>/dev/null; grep -v -e " /proc" -e " /sys" -e " /dev" /proc/mounts | cut -d" " -f2 | sort | tr "\\n" " "; exit 0'));
    expect(ran.completed).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(ran.stdout).not.toContain('docker.sock');
    // Only the overlay root, /tmp (tmpfs), the workspace bind, the executor's per-use records
    // (/run/writ, when enabled) and Docker's own /etc files: no other host path.
    const allowed = new Set(['/', '/etc/hostname', '/etc/hosts', '/etc/resolv.conf', '/tmp', '/workspace', '/run/writ']);
    const mounts = ran.stdout.trim().split(' ');
    expect(mounts).toContain('/workspace');
    expect(mounts.filter((mount) => !allowed.has(mount))).toEqual([]);
  });

  it('given a cell, when it lists its environment, then only PATH, HOME=/workspace and LANG are there: no executor variable, no host HOME, no secret', async () => {
    const ran = await act(uniqueName('task-env'), sh('env | cut -d= -f1 | sort | tr "\\n" " "; echo; echo "$HOME"'));
    // PWD and SHLVL are the shell's own; HOSTNAME is Docker's (`cell`).
    const allowed = new Set(['HOME', 'HOSTNAME', 'LANG', 'PATH', 'PWD', 'SHLVL']);
    expect(ran.stdout.split('\n')[0]?.trim().split(' ').filter((name) => !allowed.has(name))).toEqual([]);
    expect(ran.stdout).not.toContain('WRIT');
    expect(ran.stdout.split('\n')[1]).toBe('/workspace');
    expect(JSON.stringify(ran.log)).not.toContain(EXECUTOR_SECRET);
  });

  it('given a task whose cell ran, when it is closed with scrub, then no container, no workspace and nothing in the host /tmp is left', async () => {
    const taskId = uniqueName('task-scrub');
    const hostTmpBefore = new Set(await readdir(tmpdir()));
    await act(taskId, sh('echo data > w.txt; echo scratch > /tmp/scratch; mkdir -p /dev/shm 2>/dev/null; echo ipc > /dev/shm/x 2>/dev/null; exit 0'));
    await executor.cells.runtime.closeCell(taskId, { scrub: true });
    expect(existsSync(path.join(rig.cellsRoot, taskId))).toBe(false);
    expect(await rig.docker.listContainers({ all: true, filters: { label: [`writ.task_id=${taskId}`] } })).toEqual([]);
    const residue = (await readdir(tmpdir())).filter((name) => !hostTmpBefore.has(name) && (name.includes(taskId) || name === 'scratch' || name === 'x'));
    expect(residue).toEqual([]);
  });
});

describe('secret handles (issue 5 I2, DESIGN invariant 6)', () => {
  it('given a grant naming deploy_token, when the action echoes it, then it ran with the value but every artifact shows [redacted:deploy_token], and Docker never saw it in the cell spec', async () => {
    const taskId = uniqueName('task-secret');
    const ran = await act(
      taskId,
      sh('echo "token=$WRIT_SECRET_DEPLOY_TOKEN"; echo "$WRIT_SECRET_DEPLOY_TOKEN" >&2; echo "$WRIT_SECRET_DEPLOY_TOKEN" > leak.txt; [ ${#WRIT_SECRET_DEPLOY_TOKEN} -eq ' + String(HANDLE_VALUE.length) + ' ] && echo length-ok', {
        secret_handles: ['deploy_token'],
      }),
      { constraints: { secret_handles: ['deploy_token'] } },
    );
    expect(ran.completed).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(ran.stdout).toBe('token=[redacted:deploy_token]\nlength-ok\n');
    expect(ran.stderr).toBe('[redacted:deploy_token]\n');
    // The file is the action's (it stays in the workspace) but not kept as an artifact; nothing in the log holds the value.
    expect(ran.completed?.changed_files.map((file) => file.path)).toEqual(['leak.txt']);
    expect(ran.completed?.artifacts.some((artifact) => artifact.kind === 'file.snapshot')).toBe(false);
    expect(JSON.stringify(ran.log)).not.toContain(HANDLE_VALUE);
    const inspect = await rig.docker.getContainer(`writ-cell-${taskId}`).inspect();
    expect(JSON.stringify(inspect)).not.toContain(HANDLE_VALUE);
    expect(JSON.stringify(inspect.Config.Env)).not.toContain('WRIT_SECRET');
    // The next exec of the same cell does not inherit it.
    const after = await act(taskId, sh('echo "[$WRIT_SECRET_DEPLOY_TOKEN]"'));
    expect(after.stdout).toBe('[]\n');
  });

  it('given a grant without that handle, when the request names it, then GRANT_SECRET_OUT_OF_SCOPE and nothing runs', async () => {
    const taskId = uniqueName('task-secret-out');
    const ran = await act(taskId, sh('echo ran > ran.txt', { secret_handles: ['deploy_token'] }));
    expect(ran.refused?.code).toBe('GRANT_SECRET_OUT_OF_SCOPE');
    expect(ran.log.some((event) => event.event_type === 'grant.use_claimed')).toBe(false);
    expect(existsSync(path.join(rig.cellsRoot, taskId, 'workspace', 'ran.txt'))).toBe(false);
  });

  it('given a granted handle with no file behind it, when the action runs, then errored EXECUTOR_SECRET_UNAVAILABLE before anything ran', async () => {
    const taskId = uniqueName('task-secret-missing');
    await mkdir(secretsDir, { recursive: true });
    const ran = await act(taskId, sh('echo ran > ran.txt', { secret_handles: ['absent_token'] }), { constraints: { secret_handles: ['absent_token'] } });
    expect(ran.completed).toMatchObject({ outcome: 'errored', error: { code: 'EXECUTOR_SECRET_UNAVAILABLE' } });
    expect(existsSync(path.join(rig.cellsRoot, taskId, 'workspace', 'ran.txt'))).toBe(false);
  });

  it('given a grant with a 1 s wall clock, when the request asks for more, then GRANT_WALL_CLOCK_EXCEEDED and nothing runs', async () => {
    const ran = await act(uniqueName('task-clock'), sh('echo ran', { timeout_ms: 5_000 }), { constraints: { timeout_ms: 1_000 } });
    expect(ran.refused?.code).toBe('GRANT_WALL_CLOCK_EXCEEDED');
  });
});

describe('egress allowlist from the grant (issue 5 I4)', () => {
  const firewallRules = (): string[] =>
    ['iptables', 'ip6tables'].flatMap((tool) => execFileSync(tool, ['-w', '-S', 'INPUT'], { encoding: 'utf8' }).split('\n').filter((line) => line.includes('writ-egress:')));
  const egressNetworks = async () => rig.docker.listNetworks({ filters: { label: [`writ.test=${rig.run}`, 'writ.egress=1'] } });

  it('given a grant naming one host:port, when the action fetches it, another host, and the host directly, then only the granted one answers (through the proxy); the rest is 403 or no route and sees nothing', async () => {
    const taskId = uniqueName('task-egress');
    const deniedBefore = serverHits;
    const allowedBefore = allowedHits;
    const script = [
      'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "',
      // busybox wget segfaults on names in this static build: requests are written by hand (absolute form, as any proxy-aware client does).
      'proxy=${http_proxy#http://}; gw=${proxy%:*}; pp=${proxy##*:}',
      // stdin stays open a moment: busybox nc half-closes at its end, which Node's HTTP server takes as the client leaving.
      'req() { (printf "GET http://$1/ HTTP/1.0\\r\\nHost: $1\\r\\n\\r\\n"; sleep 2) | nc -w 5 "$gw" "$pp"; }',
      `req allowed.egress.test:${allowedPort} | tail -1; echo`,
      `req denied.egress.test:${serverPort} | head -1 | tr -d "\\r"`,
      `req allowed.egress.test:${serverPort} | head -1 | tr -d "\\r"`,
      `printf "CONNECT denied.egress.test:${serverPort} HTTP/1.1\\r\\n\\r\\n" | nc -w 5 "$gw" "$pp" | head -1 | tr -d "\\r"`,
      `nc -w 3 "$gw" ${serverPort} </dev/null && echo DIRECT_GATEWAY || echo NO_DIRECT_GATEWAY`,
      `nc -w 3 ${EGRESS_TARGET} ${allowedPort} </dev/null && echo DIRECT_HOST || echo NO_DIRECT_HOST`,
      'nslookup example.com >/dev/null 2>&1 && echo DNS || echo NO_DNS',
      'exit 0',
    ].join('; ');
    const ran = await act(taskId, sh(script), { hosts: [`allowed.egress.test:${allowedPort}`] });
    expect(ran.completed).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(ran.stdout.split('\n').filter(Boolean)).toEqual([
      'lo',
      'eth0',
      `allowed-ok allowed.egress.test:${allowedPort}`,
      'HTTP/1.1 403 Forbidden',
      'HTTP/1.1 403 Forbidden',
      'HTTP/1.1 403 Forbidden',
      'NO_DIRECT_GATEWAY',
      'NO_DIRECT_HOST',
      'NO_DNS',
    ]);
    expect(allowedHits).toBe(allowedBefore + 1);
    expect(serverHits).toBe(deniedBefore);
    // The attestation names the network actually applied (never none, never the default bridge) and the hosts.
    expect(ran.completed?.environment?.network_mode).toMatch(/^writ-egress-[0-9a-f]{12}$/);
    expect(ran.completed?.environment?.egress_hosts).toEqual([`allowed.egress.test:${allowedPort}`]);
    // The networked cell, its network and its firewall rules went with the action.
    expect(await egressNetworks()).toEqual([]);
    expect(firewallRules()).toEqual([]);
    await expect(rig.docker.getContainer(`writ-cell-${taskId}`).inspect()).rejects.toMatchObject({ statusCode: 404 });
  });

  it('given a task whose last action had egress, when its next action has no egress grant, then its new cell has only lo and network none', async () => {
    const taskId = uniqueName('task-egress-next');
    await act(taskId, sh('echo first > first.txt'), { hosts: [`allowed.egress.test:${allowedPort}`] });
    const deniedBefore = serverHits;
    const ran = await act(taskId, sh(`cat first.txt; cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "; nc -w 3 ${EGRESS_TARGET} ${serverPort} </dev/null || echo NO_ROUTE; echo "[$http_proxy]"`));
    expect(ran.completed).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(ran.stdout.split('\n').filter(Boolean)).toEqual(['first', 'lo', 'NO_ROUTE', '[]']);
    expect(ran.completed?.environment).toMatchObject({ network_mode: 'none' });
    expect(ran.completed?.environment?.egress_hosts).toBeUndefined();
    expect(serverHits).toBe(deniedBefore);
    expect((await rig.docker.getContainer(`writ-cell-${taskId}`).inspect()).NetworkSettings.Networks).toEqual({});
  });
});
