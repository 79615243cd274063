import type { BusClient } from '@writ/bus';
import type { OrchestratorSubjects } from '../config.js';
import type { CommandPublisher, PublishedCommand } from '../application/ports.js';
import type { CommandName } from '../application/plan-task.js';

/** Publishes commands through JetStream on the configured subjects, `Nats-Msg-Id` = the command's msg id. */
export class BusCommandPublisher implements CommandPublisher {
  constructor(
    private readonly bus: BusClient,
    private readonly subjects: OrchestratorSubjects,
  ) {}

  async publish(
    command: CommandName,
    payload: unknown,
    options: { readonly msgId: string; readonly causationId: string; readonly correlationId: string },
  ): Promise<PublishedCommand> {
    const ack = await this.bus.publish(this.subjects[command], payload, {
      msgId: options.msgId,
      headers: { 'Writ-Causation-Id': options.causationId, 'Writ-Correlation-Id': options.correlationId },
    });
    return { duplicate: ack.duplicate };
  }
}
