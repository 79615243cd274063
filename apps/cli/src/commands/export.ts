import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Id, parseContract } from '@writ/contracts';
import { collectBundle, parseWaitSeconds } from '../bundle-source.js';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { attachEventLog, connectNats } from '../event-log.js';
import { serializeBundle } from '../evidence/bundle-seal.js';
import { verifyBundleText } from '../evidence/verify-bundle.js';
import { failUnverified, printChecks } from './verify.js';

export interface ExportOptions {
  /** Where to write the bundle (default `writ-bundle-<task_id>.json`; `-` for stdout). */
  readonly out?: string;
  /** Replace an existing file. */
  readonly force?: boolean;
  /** Seconds to wait for receipts the transparency log has not sequenced yet. */
  readonly wait?: string;
  readonly json?: boolean;
}

export interface ExportResult {
  readonly file: string;
  readonly task_id: string;
  readonly receipts: number;
  readonly events: number;
  readonly log_id: string;
  readonly tree_size: number;
  readonly bundle_hash: string;
  readonly bytes: number;
}

/**
 * `writ export <task_id> [--out <file>] [--force] [--wait <s>] [--json]`: the
 * task's receipt bundle (docs/verification.md), from the live log: its events
 * through the last receipt, the key events of the receipt signer and of the
 * grant issuers, one signed tree head and each receipt's inclusion proof
 * against it (waiting, with progress on stderr, for receipts not sequenced
 * yet). The file is the RFC 8785 form of the bundle, sealed by bundle_hash;
 * an existing file is kept unless --force. The bundle is checked as
 * `writ verify` would before it is reported; if it does not verify it is
 * still written (it is the evidence) and the command exits 1 with
 * CLI_BUNDLE_UNVERIFIED.
 */
export async function exportBundle(taskIdArg: string, options: ExportOptions, conn: Connection, io: CliIo): Promise<ExportResult> {
  const taskId = parseContract('task id', Id, taskIdArg);
  const waitMs = parseWaitSeconds(options.wait) * 1000;
  const out = options.out ?? `writ-bundle-${taskId}.json`;
  const nc = await connectNats(conn);
  let text: string;
  try {
    const store = await attachEventLog(nc, conn);
    text = serializeBundle(await collectBundle(nc, store, conn, taskId, { waitMs, io }));
  } finally {
    await nc.drain().catch(() => undefined);
  }

  if (out === '-') {
    io.stdout(text);
  } else {
    try {
      await writeFile(resolve(io.cwd, out), text, { flag: options.force === true ? 'w' : 'wx', mode: 0o644 });
    } catch (cause) {
      const code = (cause as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw new CliError('CLI_FILE_EXISTS', `${out} exists; choose another --out or pass --force`, { cause });
      throw new CliError('CLI_FILE_UNREADABLE', `cannot write the bundle to ${out}: ${code ?? 'error'}`, { cause });
    }
  }

  const verification = await verifyBundleText(text);
  const about = verification.bundle;
  const result: ExportResult = {
    file: out,
    task_id: taskId,
    receipts: about?.receipts ?? 0,
    events: about?.events ?? 0,
    log_id: about?.log_id ?? '',
    tree_size: about?.tree_size ?? 0,
    bundle_hash: about?.bundle_hash ?? '',
    bytes: Buffer.byteLength(text),
  };
  // With `--out -` the bundle owns stdout: the report goes to stderr.
  const report = out === '-' ? io.stderr : io.stdout;
  if (options.json === true && out !== '-') report(JSON.stringify({ ...result, ok: verification.ok }));
  else report(`wrote ${out === '-' ? 'the bundle to stdout' : out}: task ${taskId}, ${result.receipts} receipt(s), ${result.events} event(s), log ${result.log_id} at ${result.tree_size} leaves, ${result.bytes} bytes, bundle_hash ${result.bundle_hash}`);
  if (!verification.ok) {
    if (options.json !== true) printChecks(verification.checks.filter((entry) => entry.status === 'fail' || entry.status === 'skip'), { ...io, stdout: report });
    failUnverified(`the bundle of task ${taskId} (written to ${out})`, verification);
  }
  return result;
}
