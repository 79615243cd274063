import type { CliIo, Connection } from '../cli-io.js';
import { connectNats } from '../event-log.js';
import { cell, table } from '../format.js';
import { openPolicyBucket, policyBucketName, readBucketRecord, shortVersion } from './policy-common.js';

/** One profile as the bucket holds it now (not validated here: the policy service ignores an invalid record). */
export interface PolicyListEntry {
  readonly profile_id: string;
  readonly version: string | null;
  readonly applied_by: string | null;
  readonly applied_at: string | null;
  readonly previous_version: string | null;
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/**
 * `writ policy list [--json]`: every profile in the bucket (`WRIT_POLICY_BUCKET`,
 * default WRIT_POLICY), sorted by id: id, version (short), applied_by, applied_at.
 */
export async function policyList(options: { json?: boolean }, conn: Connection, io: CliIo): Promise<PolicyListEntry[]> {
  const nc = await connectNats(conn);
  const entries: PolicyListEntry[] = [];
  try {
    const kv = await openPolicyBucket(nc, policyBucketName(io), conn.natsUrl);
    const keys: string[] = [];
    for await (const key of await kv.keys()) keys.push(key);
    for (const key of keys.sort()) {
      const record = await readBucketRecord(kv, key);
      if (record === null) continue;
      entries.push({
        profile_id: key,
        version: text(record['version']),
        applied_by: text(record['applied_by']),
        applied_at: text(record['applied_at']),
        previous_version: text(record['previous_version']),
      });
    }
  } finally {
    await nc.drain().catch(() => undefined);
  }
  if (options.json === true) {
    io.stdout(JSON.stringify(entries));
  } else {
    const rows = entries.map((entry) => [cell(entry.profile_id), entry.version === null ? '(invalid)' : shortVersion(entry.version), cell(entry.applied_by), cell(entry.applied_at)]);
    for (const line of table(['PROFILE', 'VERSION', 'APPLIED BY', 'APPLIED AT'], rows)) io.stdout(line);
  }
  return entries;
}
