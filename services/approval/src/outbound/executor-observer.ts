import type { NatsConnection } from '@nats-io/transport-node';
import { BusClient } from '@writ/bus';
import { ObserveWorkspace as ObserveRequest, WorkspaceObserved as ObserveReply } from '@writ/contracts';
import { ApprovalServiceError } from '../application/approval-errors.js';
import type { WorkspaceObservation, WorkspaceWitness } from '../application/ports.js';

/**
 * Asks `<root>.qry.executor.observe` over core NATS (request/reply, one executor of the
 * queue group answers). No answer in time, no responder, an error reply (the executor
 * found the workspace changing: EXECUTOR_OBSERVE_UNSTABLE) or a reply that is not the
 * contract, or one missing a resource: for a request command (`wait`), asked again with a backoff
 * (250 ms doubling to 5 s) for up to `waitMs`, the command's message held in progress meanwhile, because an executor
 * restarting is the usual cause (chaos run, issue 13: a request failed five times within
 * 15 s while the executor restarted, was dead-lettered, and its action waited for an
 * approval that was never asked). Past it, or at once for a director's resolution waiting on its
 * reply: APPROVAL_WITNESS_UNAVAILABLE (the bus retries the command; the director asks again).
 */
export class ExecutorWorkspaceWitness implements WorkspaceWitness {
  readonly #client: BusClient;

  constructor(
    nc: NatsConnection,
    private readonly subject: string,
    private readonly timeoutMs: number,
    private readonly waitMs = 0,
  ) {
    this.#client = new BusClient(nc, { timeoutMs });
  }

  async observe(taskId: string, resources: readonly string[], options: { readonly wait?: boolean } = {}): Promise<WorkspaceObservation> {
    const deadline = Date.now() + (options.wait === true ? this.waitMs : 0);
    let pause = 250;
    for (;;) {
      try {
        return await this.#observeOnce(taskId, resources);
      } catch (error) {
        if (Date.now() + pause > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, pause));
        pause = Math.min(5_000, pause * 2);
      }
    }
  }

  async #observeOnce(taskId: string, resources: readonly string[]): Promise<WorkspaceObservation> {
    const request = ObserveRequest.parse({ task_id: taskId, resources: [...resources] });
    let reply: unknown;
    try {
      reply = await this.#client.request(this.subject, request, { timeoutMs: this.timeoutMs });
    } catch (cause) {
      throw new ApprovalServiceError('APPROVAL_WITNESS_UNAVAILABLE', `the executor did not observe the workspace of task ${taskId}; the state witness cannot be had now`, {
        cause,
        details: { task_id: taskId, subject: this.subject },
      });
    }
    const parsed = ObserveReply.safeParse(reply);
    const missing = parsed.success ? resources.filter((resource) => !Object.hasOwn(parsed.data.fingerprints, resource)) : [];
    if (!parsed.success || missing.length > 0) {
      throw new ApprovalServiceError('APPROVAL_WITNESS_UNAVAILABLE', `the executor's observation of task ${taskId} is not a complete ObserveReply`, {
        ...(parsed.success ? {} : { cause: parsed.error }),
        details: { task_id: taskId, missing: missing.slice(0, 8) },
      });
    }
    // Only what was asked: a reply never widens the witness.
    const fingerprints = Object.fromEntries(resources.map((resource) => [resource, parsed.data.fingerprints[resource] as string]));
    return { fingerprints, observed_at: parsed.data.observed_at };
  }
}
