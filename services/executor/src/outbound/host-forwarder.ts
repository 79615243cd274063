import type { NatsConnection } from '@nats-io/transport-node';
import { BusClient } from '@writ/bus';
import { executorHostSubject, WorkspaceObserved, type CloseCell, type ObserveWorkspace, type RunAction } from '@writ/contracts';
import { FORWARD_HOPS_HEADER, type CommandForwarder, type ObserveRelay } from '../application/cell-routing.js';
import type { ExecutorSubjects } from '../config.js';

/**
 * The executor's side of routing over NATS: commands go to a host's own subject through JetStream
 * (resolves once the commands stream has stored the copy: the caller acks the original only then),
 * observations to its own request subject. The connection is the service's (not closed here).
 */
export class HostForwarder implements CommandForwarder, ObserveRelay {
  readonly #client: BusClient;

  constructor(
    nc: NatsConnection,
    private readonly subjects: Pick<ExecutorSubjects, 'run' | 'closeCell' | 'observe'>,
    private readonly observeTimeoutMs: number,
  ) {
    this.#client = new BusClient(nc);
  }

  async forward(work: 'run' | 'close-cell', hostId: string, payload: RunAction | CloseCell, options: { readonly msgId: string; readonly hops: number }): Promise<void> {
    const base = work === 'run' ? this.subjects.run : this.subjects.closeCell;
    await this.#client.publish(executorHostSubject(base, hostId), payload, { msgId: options.msgId, headers: { [FORWARD_HOPS_HEADER]: String(options.hops) } });
  }

  async observe(hostId: string, request: ObserveWorkspace): Promise<WorkspaceObserved> {
    const reply = await this.#client.request(executorHostSubject(this.subjects.observe, hostId), request, { timeoutMs: this.observeTimeoutMs });
    // The holder's reply is passed on only as the contract: a relay never widens what the caller gets.
    return WorkspaceObserved.parse(reply);
  }
}
