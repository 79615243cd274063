import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { ExecutorError } from '../../application/executor-errors.js';
import { EgressProxy, type EgressDecision, type EgressLogger, type EgressLookup } from './egress-proxy.js';
import { egressRules } from './egress-rules.js';

const run = promisify(execFile);

/** Labels of the egress networks (so a restarted executor reaps what a crashed one left). */
export const EGRESS_LABELS = {
  egress: 'writ.egress',
  owner: 'writ.egress.owner',
  taskId: 'writ.task_id',
} as const;

/** Prefix of the networks' names (`writ-egress-<12 hex>`) and of the host bridges' (`wre<12 hex>`, at most 15 characters). */
export const EGRESS_NETWORK_PREFIX = 'writ-egress-';
const BRIDGE_PREFIX = 'wre';
const RULE_COMMENT_PREFIX = 'writ-egress:';

export interface EgressNetworksOptions {
  /** This executor's id: its networks carry it, `reap()` removes only its own. */
  readonly owner: string;
  readonly logger?: EgressLogger;
  /** Name resolution of the proxy (tests map host names to local addresses here). */
  readonly lookup?: EgressLookup;
  /** Extra labels on every network (tests remove what they made by them). */
  readonly labels?: Readonly<Record<string, string>>;
}

/** One action's egress: its network, the proxy on the network's gateway, the firewall rules guarding the host. */
export interface EgressSession {
  /** Docker network name: the cell's `NetworkMode`. */
  readonly network: string;
  readonly gateway: string;
  readonly proxyPort: number;
  /** The grant's host patterns as the proxy applies them. */
  readonly hosts: readonly string[];
  /** Proxy variables for the action's exec (lower- and upper-case: tools read one or the other). */
  readonly env: Readonly<Record<string, string>>;
  readonly decisions: readonly EgressDecision[];
  /** Stops the proxy, removes the firewall rules and the network (the cell must be removed first). */
  close(): Promise<void>;
}

/**
 * Per-action egress for a grant that names hosts. The cell is created on a fresh Docker
 * network with `internal: true` (no route out, no masquerade, no inter-container traffic),
 * never the default bridge. The executor's proxy listens on that network's gateway address
 * (the host side of its bridge) and is the only thing the cell can reach there: the host's
 * INPUT chain gets, for that bridge only, an ACCEPT to the proxy's port and a DROP for
 * everything else (without it the cell could reach any host service listening on a
 * wildcard address). Anything failing while this is set up fails the action before it runs.
 */
export class EgressNetworks {
  readonly #docker: Docker;
  readonly #options: EgressNetworksOptions;

  constructor(docker: Docker, options: EgressNetworksOptions) {
    this.#docker = docker;
    this.#options = options;
  }

  async open(taskId: string, hosts: readonly string[]): Promise<EgressSession> {
    const rules = egressRules(hosts);
    const id = randomBytes(6).toString('hex');
    const name = `${EGRESS_NETWORK_PREFIX}${id}`;
    const bridge = `${BRIDGE_PREFIX}${id}`;
    const undo: (() => Promise<unknown>)[] = [];
    const rollback = async () => {
      for (const step of undo.reverse()) await step().catch(() => undefined);
    };
    const fail = async (what: string, error: unknown): Promise<never> => {
      await rollback();
      throw new ExecutorError('EXECUTOR_EGRESS_UNAVAILABLE', `the egress of task ${taskId} could not be set up (${what}): ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
        details: { task_id: taskId, network: name },
      });
    };
    let gateway: string | undefined;
    try {
      const network = await this.#docker.createNetwork({
        Name: name,
        Driver: 'bridge',
        Internal: true,
        CheckDuplicate: true,
        EnableIPv6: false,
        Attachable: false,
        Labels: { ...this.#options.labels, [EGRESS_LABELS.egress]: '1', [EGRESS_LABELS.owner]: this.#options.owner, [EGRESS_LABELS.taskId]: taskId },
        Options: {
          'com.docker.network.bridge.name': bridge,
          'com.docker.network.bridge.enable_icc': 'false',
          'com.docker.network.bridge.enable_ip_masquerade': 'false',
        },
      });
      undo.push(() => network.remove());
      const info = (await network.inspect()) as { IPAM?: { Config?: { Gateway?: string }[] } };
      gateway = info.IPAM?.Config?.find((entry) => entry.Gateway !== undefined && entry.Gateway !== '')?.Gateway;
      if (gateway === undefined) throw new Error(`network ${name} has no IPv4 gateway`);
    } catch (error) {
      return fail('internal network', error);
    }
    const proxy = new EgressProxy({ rules, logger: this.#options.logger, context: { task_id: taskId, network: name }, ...(this.#options.lookup === undefined ? {} : { lookup: this.#options.lookup }) });
    let port: number;
    try {
      port = await proxy.listen(gateway);
      undo.push(() => proxy.close());
    } catch (error) {
      return fail('proxy', error);
    }
    const firewall = firewallRules(id, bridge, gateway, port);
    try {
      // Inserted at the top, the DROP first so that the ACCEPT ends up above it.
      for (const rule of firewall) {
        await run(rule.tool, ['-w', '-I', 'INPUT', '1', ...rule.spec]);
        undo.push(() => run(rule.tool, ['-w', '-D', 'INPUT', ...rule.spec]));
      }
    } catch (error) {
      return fail('firewall', error);
    }
    const url = `http://${gateway}:${port}`;
    this.#options.logger?.info({ task_id: taskId, network: name, hosts: [...hosts] }, 'egress opened');
    let closed = false;
    return {
      network: name,
      gateway,
      proxyPort: port,
      hosts: [...hosts],
      env: { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url },
      get decisions() {
        return proxy.decisions;
      },
      close: async () => {
        if (closed) return;
        closed = true;
        await rollback();
      },
    };
  }

  /**
   * Removes this owner's egress networks and their firewall rules: what a crashed process
   * left (at start; no action of this process is running then). Returns the networks removed.
   */
  async reap(): Promise<number> {
    const networks = await this.#docker.listNetworks({ filters: { label: [`${EGRESS_LABELS.egress}=1`, `${EGRESS_LABELS.owner}=${this.#options.owner}`] } });
    let removed = 0;
    for (const network of networks) {
      const id = network.Name.startsWith(EGRESS_NETWORK_PREFIX) ? network.Name.slice(EGRESS_NETWORK_PREFIX.length) : undefined;
      if (id !== undefined) await removeCommentedRules(`${RULE_COMMENT_PREFIX}${id}`);
      const ok = await this.#docker
        .getNetwork(network.Id)
        .remove()
        .then(
          () => true,
          () => false,
        );
      if (ok) removed += 1;
    }
    return removed;
  }
}

function firewallRules(id: string, bridge: string, gateway: string, port: number): { tool: string; spec: string[] }[] {
  const comment = ['-m', 'comment', '--comment', `${RULE_COMMENT_PREFIX}${id}`];
  return [
    { tool: 'iptables', spec: ['-i', bridge, ...comment, '-j', 'DROP'] },
    { tool: 'ip6tables', spec: ['-i', bridge, ...comment, '-j', 'DROP'] },
    { tool: 'iptables', spec: ['-i', bridge, '-p', 'tcp', '-d', gateway, '--dport', String(port), ...comment, '-j', 'ACCEPT'] },
  ];
}

/** Deletes every INPUT rule carrying `comment` (iptables and ip6tables). */
async function removeCommentedRules(comment: string): Promise<void> {
  for (const tool of ['iptables', 'ip6tables']) {
    const listed = await run(tool, ['-w', '-S', 'INPUT']).catch(() => ({ stdout: '' }));
    for (const line of listed.stdout.split('\n')) {
      if (!line.startsWith('-A INPUT ') || !line.includes(`--comment ${comment}`)) continue;
      const spec = line.slice('-A INPUT '.length).split(' ').filter((part) => part !== '');
      await run(tool, ['-w', '-D', 'INPUT', ...spec]).catch(() => undefined);
    }
  }
}
