import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { PolicyProfileRecord } from '@writ/contracts';
import { ApprovalServiceError } from '../application/approval-errors.js';
import type { PolicyProfiles } from '../application/ports.js';

function unavailable(message: string, details: Record<string, unknown>, cause?: unknown): ApprovalServiceError {
  return new ApprovalServiceError('APPROVAL_POLICY_UNAVAILABLE', message, { ...(cause === undefined ? {} : { cause }), details });
}

/**
 * The policy service's profile bucket (`WRIT_POLICY_BUCKET`), read only: key = profile id,
 * value = a PolicyProfileRecord as JSON. A key that is absent, deleted or purged is a profile
 * no longer stored (null). A missing bucket means the policy service is not deployed (or not
 * started yet): APPROVAL_POLICY_UNAVAILABLE, as for a bucket that cannot be read or a value that
 * is not a PolicyProfileRecord of that profile — a version that cannot be compared never lets a
 * grant through.
 */
export class NatsPolicyProfiles implements PolicyProfiles {
  #kv: Promise<KV> | undefined;

  constructor(
    private readonly nc: NatsConnection,
    readonly bucket: string,
  ) {}

  async currentVersion(profileId: string): Promise<string | null> {
    let entry;
    try {
      // Binding does not touch the server; the first read finds out whether the bucket exists.
      this.#kv ??= new Kvm(this.nc).open(this.bucket);
      entry = await (await this.#kv).get(profileId);
    } catch (cause) {
      this.#kv = undefined;
      const missing = cause instanceof JetStreamApiError && cause.code === JetStreamApiCodes.StreamNotFound;
      throw unavailable(
        missing
          ? `the policy profile bucket ${this.bucket} does not exist (is the policy service deployed?); the approval stays pending`
          : `the policy profile bucket ${this.bucket} cannot be read now; retry`,
        { bucket: this.bucket, profile_id: profileId, reason: missing ? 'bucket_missing' : 'unreadable' },
        cause,
      );
    }
    if (entry === null || entry.operation !== 'PUT') return null;
    let value: unknown;
    try {
      value = entry.json();
    } catch (cause) {
      throw unavailable(`the policy profile record of ${profileId} is not JSON`, { bucket: this.bucket, profile_id: profileId, reason: 'record_invalid' }, cause);
    }
    const record = PolicyProfileRecord.safeParse(value);
    if (!record.success || record.data.profile_id !== profileId) {
      throw unavailable(`the policy profile record of ${profileId} is not a PolicyProfileRecord of that profile`, {
        bucket: this.bucket,
        profile_id: profileId,
        reason: 'record_invalid',
      });
    }
    return record.data.version;
  }
}
