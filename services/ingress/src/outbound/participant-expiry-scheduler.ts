import type { NatsConnection } from '@nats-io/transport-node';
import { BusClient } from '@writ/bus';
import { ExpireParticipant } from '@writ/contracts';
import type { ParticipantExpiryScheduler } from '../application/participant-ports.js';

/**
 * Publishes a participant's TTL timer on `<root>.cmd.ingress.participant-expire`
 * through JetStream: acknowledged by the commands stream before `schedule`
 * returns, so a scheduled timer survives any restart. The message id
 * (`participant:<seed_id>:expire:<expires_at>`) dedupes a timer scheduled twice.
 */
export class BusParticipantExpiryScheduler implements ParticipantExpiryScheduler {
  readonly #client: BusClient;

  constructor(
    nc: NatsConnection,
    private readonly subject: string,
  ) {
    this.#client = new BusClient(nc);
  }

  async schedule(command: ExpireParticipant, msgId = `participant:${command.seed_id}:expire:${command.expires_at}`): Promise<void> {
    await this.#client.publish(this.subject, ExpireParticipant.parse(command), { msgId, headers: { 'Writ-Correlation-Id': command.seed_id } });
  }
}
