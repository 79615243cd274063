import { Controller, Inject, type Type } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { busOptions, type ConsumerOptions, type JetStreamContext } from '@writ/bus';
import { EvaluatePolicy, parseContract } from '@writ/contracts';
import { METRICS, writMetrics } from '@writ/telemetry';
import { EvaluatePolicyHandler } from '../application/evaluate-policy.handler.js';

/**
 * How the bus treats each failure of the handler (one mapping table per
 * adapter). Not listed: the bus defaults (CONTRACT_INVALID dead-lettered at
 * once, EVENTSTORE_CONFLICT retried soon, anything else retried with backoff).
 */
export const POLICY_COMMAND_ERROR_ACTIONS = Object.freeze({
  POLICY_ATTEMPT_UNKNOWN: 'dead-letter',
  POLICY_REQUEST_MISMATCH: 'dead-letter',
  POLICY_RESULT_INVALID: 'dead-letter',
  EVENTSTORE_CHAIN_BROKEN: 'dead-letter',
} as const);

/**
 * The JetStream listener of `<root>.cmd.policy.evaluate`, made per app because
 * its subject comes from configuration: parse with the contract → handler →
 * ack (the bus maps a thrown code through the table above).
 */
export function createPolicyCommandsListener(pattern: string, consumer: ConsumerOptions): Type {
  @Controller()
  class PolicyCommandsListener {
    readonly #latency = writMetrics().histogram(METRICS.policyDecisionDuration);

    constructor(@Inject(EvaluatePolicyHandler) private readonly handler: EvaluatePolicyHandler) {}

    @EventPattern<string>(pattern, busOptions({ ...consumer, errorActions: { ...POLICY_COMMAND_ERROR_ACTIONS, ...consumer.errorActions } }))
    async onEvaluatePolicy(@Payload() body: unknown, @Ctx() _context: JetStreamContext): Promise<void> {
      const command = parseContract('EvaluatePolicy', EvaluatePolicy, body);
      const outcome = await this.handler.handle(command);
      // Only a decision made now: a redelivery that finds it made would count it twice.
      if (outcome.status === 'evaluated') {
        const seconds = Math.max(0, Date.parse(outcome.decided_at) - Date.parse(outcome.entered_at)) / 1000;
        this.#latency.record(seconds, { action_class: outcome.action_class, outcome: outcome.outcome });
      }
    }
  }
  return PolicyCommandsListener;
}
