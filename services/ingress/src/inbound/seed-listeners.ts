import { Controller, Inject, type Type } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import type { CheckParticipantActionReply, SeedVerdict } from '@writ/contracts';
import { SeedVerificationHandler } from '../application/seed-verification.handler.js';
import { withConflictRetries } from './seed-retries.js';

export interface SeedSubjects {
  readonly spawnVerify: string;
  readonly heartbeatVerify: string;
  readonly retireIngest: string;
  readonly crashReport: string;
  readonly participantCheck: string;
}

/**
 * Request/reply listeners equivalent to the seed endpoints:
 * `<root>.qry.ingress.spawn-verify|heartbeat-verify|retire-ingest|crash-report`
 * answer a `SeedVerdict`, `<root>.qry.ingress.participant-check` a
 * `CheckParticipantActionReply`. A malformed command replies
 * `{ code: 'CONTRACT_INVALID', message }` (the bus's exception filter).
 */
export function seedListeners(subjects: SeedSubjects): Type<unknown> {
  @Controller()
  class SeedListeners {
    constructor(@Inject(SeedVerificationHandler) private readonly handler: SeedVerificationHandler) {}

    @MessagePattern(subjects.spawnVerify)
    spawn(@Payload() payload: unknown): Promise<SeedVerdict> {
      return withConflictRetries(() => this.handler.verifySpawn(payload));
    }

    @MessagePattern(subjects.heartbeatVerify)
    heartbeat(@Payload() payload: unknown): Promise<SeedVerdict> {
      return withConflictRetries(() => this.handler.verifyHeartbeat(payload));
    }

    @MessagePattern(subjects.retireIngest)
    retire(@Payload() payload: unknown): Promise<SeedVerdict> {
      return withConflictRetries(() => this.handler.ingestRetire(payload));
    }

    @MessagePattern(subjects.crashReport)
    crash(@Payload() payload: unknown): Promise<SeedVerdict> {
      return withConflictRetries(() => this.handler.reportCrash(payload));
    }

    @MessagePattern(subjects.participantCheck)
    check(@Payload() payload: unknown): Promise<CheckParticipantActionReply> {
      return this.handler.checkAction(payload);
    }
  }
  return SeedListeners;
}
