import { Name, parseContract } from '@writ/contracts';
import { stringify as toYaml } from 'yaml';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { connectNats } from '../event-log.js';
import { cell, fields } from '../format.js';
import { openPolicyBucket, policyBucketName, readBucketRecord } from './policy-common.js';

export interface PolicyShowOptions {
  /** The whole record as JSON. */
  readonly json?: boolean;
  /** The document alone as YAML: edit it and `writ policy apply` it. */
  readonly yaml?: boolean;
}

/**
 * `writ policy show <id> [--json|--yaml]`: the profile's current record in the
 * bucket. Default: the record's fields, then the document as YAML;
 * `--json` the record; `--yaml` the document only (ready to edit and apply).
 */
export async function policyShow(id: string, options: PolicyShowOptions, conn: Connection, io: CliIo): Promise<Record<string, unknown>> {
  const profileId = parseContract('profile id', Name, id);
  const nc = await connectNats(conn);
  let record: Record<string, unknown> | null;
  try {
    const kv = await openPolicyBucket(nc, policyBucketName(io), conn.natsUrl);
    record = await readBucketRecord(kv, profileId);
  } finally {
    await nc.drain().catch(() => undefined);
  }
  if (record === null) throw new CliError('CLI_POLICY_NOT_FOUND', `the policy profile bucket holds no profile ${profileId} (writ policy list shows those it holds)`);
  if (options.json === true) {
    io.stdout(JSON.stringify(record));
  } else if (options.yaml === true) {
    io.stdout(toYaml(record['document'] ?? null).trimEnd());
  } else {
    io.stdout(profileId);
    for (const line of fields([
      ['version', record['version']],
      ['previous', record['previous_version'] ?? 'none'],
      ['applied_by', record['applied_by']],
      ['applied_at', record['applied_at']],
    ]))
      io.stdout(line);
    io.stdout('  document:');
    // The document is shown as data: control characters are escaped like every other cell.
    for (const line of toYaml(record['document'] ?? null).trimEnd().split('\n')) io.stdout(`    ${line === '' ? '' : cell(line, 10_000)}`);
  }
  return record;
}
