import { PolicyProfileRecord, hasErrorCode, parseContract } from '@writ/contracts';
import { canonicalJson } from '@writ/crypto';
import { BUILTIN_POLICY_DOCUMENTS } from '@writ/kernel';
import { derivedId, serviceDraft } from '@writ/runtime';
import type { Logger } from '@writ/telemetry';
import { PolicyServiceError } from './policy-service.errors.js';
import type { Clock, ProfileBucket, ProfileLog } from './ports.js';
import { validateDocument } from './profile-documents.js';

export interface ProfileSyncOptions {
  readonly log: ProfileLog;
  readonly bucket: ProfileBucket;
  readonly clock: Clock;
  /** The policy service's principal: `applied_by` of the seeded built-ins, `actor_id` of the events. */
  readonly principalId: string;
  readonly logger?: Logger;
  /** Rounds of converge before POLICY_STORE_UNAVAILABLE (default 5), and the first delay between failed rounds (default 50 ms, doubling). */
  readonly rounds?: number;
  readonly retryDelayMs?: number;
}

export type ConvergeOutcome = 'in_sync' | 'written' | 'not_in_log';

/** The event recording one applied version (`policy.profile_applied` on `<events>.policy.<id>`). */
export function profileAppliedDraft(record: PolicyProfileRecord, input: { principalId: string; cause: string; occurredAt: string }) {
  const key = `${record.profile_id}:policy.profile_applied:${record.version}:${input.cause}`;
  return serviceDraft({
    key,
    eventId: derivedId('ppa', key),
    eventType: 'policy.profile_applied',
    entityType: 'policy',
    entityId: record.profile_id,
    occurredAt: input.occurredAt,
    actorId: input.principalId,
    payload: record,
    causationId: null,
    correlationId: record.profile_id,
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Keeps the profile bucket a view of the log. The log is the truth: every
 * applied version is a `policy.profile_applied` event first, and the bucket
 * is then brought to the log's latest record (`converge`), guarded by the
 * bucket revision read BEFORE the log, so a slower writer can never put an
 * older version back over a newer one. On start, `seedBuiltins` records the
 * built-ins the log has never seen and `reconcile` converges every profile
 * (a put lost to a crash between the event and the bucket is redone).
 */
export class ProfileSync {
  constructor(private readonly options: ProfileSyncOptions) {}

  /**
   * Brings the bucket's record of `profileId` to the log's latest. Retries a
   * lost race or a failed write (bounded); POLICY_STORE_UNAVAILABLE after that
   * (the event stays in the log: the next apply or start converges it).
   */
  async converge(profileId: string): Promise<ConvergeOutcome> {
    const rounds = this.options.rounds ?? 5;
    let delay = this.options.retryDelayMs ?? 50;
    let lastError: unknown;
    for (let round = 0; round < rounds; round++) {
      try {
        // The bucket first: its revision guards the write against anyone who read the log later than we do.
        const entry = await this.options.bucket.get(profileId);
        const head = await this.options.log.head(profileId);
        if (head.record === null) return 'not_in_log';
        if (entry !== null && sameRecord(entry.value, head.record)) return 'in_sync';
        if (await this.options.bucket.write(profileId, head.record, entry?.revision ?? null)) return 'written';
        continue; // someone wrote between our read and write: look again at once
      } catch (error) {
        lastError = error;
        this.options.logger?.warn({ err: error, profile_id: profileId, round }, 'policy profile bucket not updated; retrying');
      }
      await sleep(delay);
      delay *= 2;
    }
    throw new PolicyServiceError('POLICY_STORE_UNAVAILABLE', `the profile bucket could not be brought to the log's version of ${profileId}; it converges on the next apply or start`, {
      cause: lastError,
      details: { profile_id: profileId },
    });
  }

  /**
   * Records each built-in the log has never seen as applied by the policy
   * service (appended at sequence 0: of two services starting at once, one
   * appends and the other finds it there). Returns the ids seeded.
   */
  async seedBuiltins(): Promise<string[]> {
    const seeded: string[] = [];
    for (const [id, builtin] of Object.entries(BUILTIN_POLICY_DOCUMENTS)) {
      const head = await this.options.log.head(id);
      if (head.record !== null) continue;
      const { document, version } = validateDocument(builtin);
      const at = this.options.clock().toISOString();
      const record = parseContract('PolicyProfileRecord', PolicyProfileRecord, {
        profile_id: id,
        version,
        document,
        applied_by: this.options.principalId,
        applied_at: at,
        previous_version: null,
      });
      try {
        await this.options.log.append(id, profileAppliedDraft(record, { principalId: this.options.principalId, cause: 'seed', occurredAt: at }), 0);
        seeded.push(id);
      } catch (error) {
        // Another instance seeded it first: its record is the one to converge to.
        if (!hasErrorCode(error, 'EVENTSTORE_CONFLICT')) throw error;
      }
    }
    return seeded;
  }

  /** Converges every profile the log holds; returns those whose bucket record was (re)written. */
  async reconcile(): Promise<string[]> {
    const written: string[] = [];
    for (const profileId of (await this.options.log.latestOfAll()).keys()) {
      if ((await this.converge(profileId)) === 'written') written.push(profileId);
    }
    if (written.length > 0) this.options.logger?.info({ profiles: written }, 'policy profile bucket reconciled with the log');
    return written;
  }
}

/** Whether the bucket holds exactly the log's record (a damaged record claiming the right version is rewritten too). */
function sameRecord(value: unknown, record: PolicyProfileRecord): boolean {
  try {
    return canonicalJson(value) === canonicalJson(record);
  } catch {
    return false;
  }
}
