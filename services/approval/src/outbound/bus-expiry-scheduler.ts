import { BusClient } from '@writ/bus';
import { ExpireApproval } from '@writ/contracts';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ExpiryScheduler } from '../application/ports.js';

/**
 * Publishes the expiry timer on `<root>.cmd.approval.expire` through JetStream (the commands
 * stream keeps it; the timer consumer holds it until `expires_at`). The publish is acknowledged
 * by the stream before `schedule` returns, so a scheduled timer survives any restart.
 */
export class BusExpiryScheduler implements ExpiryScheduler {
  readonly #client: BusClient;

  constructor(
    nc: NatsConnection,
    private readonly subject: string,
  ) {
    this.#client = new BusClient(nc);
  }

  async schedule(command: ExpireApproval, msgId = `${command.approval_id}:expire`): Promise<void> {
    await this.#client.publish(this.subject, ExpireApproval.parse(command), { msgId, headers: { 'Writ-Correlation-Id': command.task_id } });
  }
}
