import { HeldTimer, type HeldTimerOptions, type HeldTimerOutcome } from '@writ/bus';
import { ExpireParticipant, hasErrorCode, parseContract } from '@writ/contracts';
import type { ParticipantExpiryScheduler } from '../application/participant-ports.js';
import type { SeedVerificationHandler } from '../application/seed-verification.handler.js';

type Labels = { seed_id: string };

/** What one delivery of a timer message came to: `expired` (appended), `settled` (ended already), or how it was held, retried or dead-lettered. */
export type ParticipantTimerOutcome = HeldTimerOutcome<'expired' | 'settled', Labels>;

/** The participant TTL timer: a `HeldTimer` (@writ/bus) over `<root>.cmd.ingress.participant-expire`. */
export type ParticipantExpiryTimer = HeldTimer<ExpireParticipant, 'expired' | 'settled', Labels>;

/** The held timer's options, its job made from the seed handler and scheduler. */
export interface ParticipantExpiryTimerOptions extends Omit<HeldTimerOptions<ExpireParticipant, 'expired' | 'settled', Labels>, 'job'> {
  readonly handler: Pick<SeedVerificationHandler, 'expire'>;
  readonly scheduler: ParticipantExpiryScheduler;
}

/**
 * The participant TTL watchdog (seed 002 "Watchdog tracks expires_at, terminates
 * and marks expired"), held on the NATS server until due: each delivery folds
 * the participant from the log: ended → ack; due → `participant.expired` → ack;
 * not due → held until `expires_at`. So expiry happens without any further
 * heartbeat, across restarts, crashes and several ingress instances, and is
 * appended once (the log decides). A refreshed timer is re-published with msg
 * id `<seed_id>:expire:<old stream seq>`.
 */
export function participantExpiryTimer(options: ParticipantExpiryTimerOptions): ParticipantExpiryTimer {
  const { handler, scheduler, ...rest } = options;
  return new HeldTimer({
    ...rest,
    job: {
      name: 'participant TTL',
      parse: (body) => parseContract('ExpireParticipant', ExpireParticipant, body),
      labels: (command) => ({ seed_id: command.seed_id }),
      fire: (command) => handler.expire(command),
      reschedule: (command, msgId) => scheduler.schedule(command, msgId),
      refreshMsgId: (command, seq) => `${command.seed_id}:expire:${seq}`,
      terminalCode: (error) => (hasErrorCode(error, 'INGRESS_PARTICIPANT_UNKNOWN') ? error.code : undefined),
      unavailableCode: 'INGRESS_UNAVAILABLE',
    },
  });
}
