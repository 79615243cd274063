import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

/** A JetStream cluster of nats-server processes on loopback, for one test file. */
export interface TestNatsCluster {
  /** Each node's client URL, in node order. */
  readonly urls: readonly string[];
  /** Kills one node (SIGKILL); `start` brings it back on the same store. */
  kill(node: number): Promise<void>;
  start(node: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts `nodes` nats-servers with JetStream clustered on free loopback ports and
 * waits until each reports healthy (`/healthz`: JetStream current). No auth: the
 * processes are the test's own, on loopback, and gone when it ends.
 */
export async function startTestNatsCluster(nodes = 3): Promise<TestNatsCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'writ-nats-cluster-'));
  const ports = await Promise.all(Array.from({ length: nodes }, async () => ({ client: await freePort(), route: await freePort(), monitor: await freePort() })));
  const configs: string[] = [];
  for (const [index, port] of ports.entries()) {
    const routes = ports.filter((_, other) => other !== index).map((other) => `"nats-route://127.0.0.1:${other.route}"`);
    const config = join(dir, `n${index + 1}.conf`);
    await writeFile(
      config,
      [
        `server_name: test-n${index + 1}`,
        'host: "127.0.0.1"',
        `port: ${port.client}`,
        `http: "127.0.0.1:${port.monitor}"`,
        `jetstream { store_dir: ${JSON.stringify(join(dir, `n${index + 1}`))} }`,
        `cluster { name: test, listen: "127.0.0.1:${port.route}", routes: [${routes.join(', ')}] }`,
        '',
      ].join('\n'),
    );
    configs.push(config);
  }
  const processes: (ChildProcess | undefined)[] = [];
  const healthy = async (index: number): Promise<void> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        if ((await fetch(`http://127.0.0.1:${ports[index]!.monitor}/healthz`)).ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`test NATS node ${index + 1} not healthy within 60 s (config ${configs[index]})`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  const start = async (node: number): Promise<void> => {
    processes[node - 1] = spawn('nats-server', ['-c', configs[node - 1]!], { stdio: 'ignore' });
  };
  const kill = async (node: number): Promise<void> => {
    const child = processes[node - 1];
    if (child === undefined || child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  };
  for (let node = 1; node <= nodes; node++) await start(node);
  for (let index = 0; index < nodes; index++) await healthy(index);
  return {
    urls: ports.map((port) => `nats://127.0.0.1:${port.client}`),
    kill,
    start: async (node) => {
      await start(node);
      await healthy(node - 1);
    },
    stop: async () => {
      for (let node = 1; node <= nodes; node++) await kill(node);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
