import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Id, hasErrorCode, parseContract, type NotAssertedStatement, type QuarantineRecord, type ReceiptBundle } from '@writ/contracts';
import { KeySet } from '@writ/crypto';
import { RegistrationAuthority, loadTrustAnchor, principalHistory } from '@writ/runtime';
import { collectBundle, liveLogChecks, parseWaitSeconds, taskEvents } from '../bundle-source.js';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { attachEventLog, connectNats } from '../event-log.js';
import { approvalAuthorityChecks, verifyBundle, verifyBundleText, type BundleCheck, type BundleVerification } from '../evidence/verify-bundle.js';
import { readJsonFile } from '../files.js';
import { cell } from '../format.js';

export interface VerifyOptions {
  /** A JWKS file obtained independently of the bundle: the keys the checks rely on must be in it. */
  readonly trust?: string;
  /**
   * The deployment's trust-anchor.json (`writ init`), obtained independently of the bundle: every
   * registration must chain to it. Default with --task: WRIT_TRUST_ANCHOR.
   */
  readonly trustAnchor?: string;
  /** Verify this task against the live log instead of a bundle file. */
  readonly task?: string;
  /** With --task: seconds to wait for receipts not sequenced yet. */
  readonly wait?: string;
  /** With a bundle: also check its tree head against the live transparency log (consistency proof). */
  readonly live?: boolean;
  readonly json?: boolean;
}

/** What `writ verify` prints with `--json`, and returns. */
export interface VerifyReport extends BundleVerification {
  readonly source: string;
  readonly not_asserted: readonly NotAssertedStatement[];
}

const LABEL: Readonly<Record<BundleCheck['status'], string>> = { pass: 'PASS', fail: 'FAIL', skip: 'SKIP', unanchored: 'UNANCHORED', quarantined: 'QUARANTINED' };

/**
 * One line per message of the task's subject that is not an event of its
 * chain (invariant 10): shown, never a break. An event whose author is
 * unproven (a forgery with a stolen service credential) says so: it was never
 * acted upon, and the task's evidence stands without it.
 */
function quarantineChecks(records: readonly QuarantineRecord[], subject: string): BundleCheck[] {
  return records.map((record) => ({
    check: record.reason === 'QUARANTINE_AUTHOR_UNPROVEN' ? 'events.author' : 'events.quarantine',
    subject,
    status: 'quarantined',
    detail:
      record.reason === 'QUARANTINE_AUTHOR_UNPROVEN'
        ? `stream seq ${record.stream_seq}: author unproven (${record.detail}; ${record.bytes} bytes, sha256 ${record.sha256.slice(0, 16)}…): written with a credential that may not write it, skipped by every reader, never acted upon`
        : `stream seq ${record.stream_seq}: ${record.reason}, ${record.detail} (${record.bytes} bytes, sha256 ${record.sha256.slice(0, 16)}…): not an event of this task, skipped by every reader`,
  }));
}

/** The checks grouped under their subject, one line each: `  PASS        receipt.hash        detail`. */
export function printChecks(checks: readonly BundleCheck[], io: CliIo): void {
  let subject: string | undefined;
  for (const entry of checks) {
    if (entry.subject !== subject) {
      subject = entry.subject;
      io.stdout(cell(subject, 200));
    }
    const code = entry.code === undefined ? '' : `${entry.code}: `;
    io.stdout(`  ${LABEL[entry.status].padEnd(10)}  ${entry.check.padEnd(19)}  ${code}${cell(entry.detail, 400)}`);
  }
}

/** Throws CLI_BUNDLE_UNVERIFIED naming the checks that did not pass. */
export function failUnverified(what: string, verification: BundleVerification): void {
  if (verification.ok) return;
  const failed = verification.checks.filter((entry) => entry.status === 'fail' || entry.status === 'skip');
  const named = failed.slice(0, 5).map((entry) => `${entry.check} (${entry.subject})${entry.code === undefined ? '' : ` ${entry.code}`}`);
  throw new CliError('CLI_BUNDLE_UNVERIFIED', `${what} does not verify: ${named.join(', ')}${failed.length > 5 ? `, and ${failed.length - 5} more` : ''}`, {
    details: { failed: failed.map((entry) => ({ check: entry.check, subject: entry.subject, code: entry.code ?? entry.status })) },
  });
}

/** A task without receipts has no bundle; anything else is an error. */
function noReceiptsYet(error: unknown): undefined {
  if (hasErrorCode(error, 'EVIDENCE_NO_RECEIPTS')) return undefined;
  throw error;
}

async function trustedKeys(io: CliIo, file: string | undefined): Promise<KeySet | undefined> {
  return file === undefined ? undefined : KeySet.fromJwks(await readJsonFile(io.cwd, file, 'JWKS'));
}

async function readBundleFile(io: CliIo, file: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(resolve(io.cwd, file)));
  } catch (cause) {
    throw new CliError('CLI_FILE_UNREADABLE', `cannot read the bundle ${file}: ${(cause as NodeJS.ErrnoException).code ?? 'error'}`, { cause });
  }
}

/**
 * `writ verify <bundle.json> [--trust <jwks.json>] [--live] [--json]`: checks a receipt
 * bundle offline (docs/verification.md lists every check) and prints each,
 * PASS / FAIL / SKIP, grouped by what it is about; without `--trust` the
 * keys come from the bundle and the trust check says so (UNANCHORED). Exit 1
 * (CLI_BUNDLE_UNVERIFIED) on any failure.
 *
 * `--live` adds what a bundle cannot show offline: the receipt service's
 * current signed tree head (`log.head`) and the consistency proof that the
 * bundle's tree is a prefix of it (`log.consistency`: no fork, no rewrite
 * since the export).
 *
 * `writ verify --task <id>`: the same checks on the task as the live log and
 * transparency log hold it now (its whole event chain, every receipt, their
 * inclusion against the current signed tree head).
 */
export async function verify(file: string | undefined, options: VerifyOptions, conn: Connection, io: CliIo): Promise<VerifyReport> {
  if ((file === undefined) === (options.task === undefined)) throw new CliError('CLI_USAGE', 'name a bundle file, or --task <task_id> to verify a task in the live log (not both)');
  if (options.live === true && file === undefined) throw new CliError('CLI_USAGE', '--live checks a bundle file against the live log; --task is live already');
  const trusted = await trustedKeys(io, options.trust);
  // The anchor the registrations must chain to: given, or (verifying the live log) this deployment's own.
  const anchorFile = options.trustAnchor ?? (options.task === undefined ? undefined : io.env['WRIT_TRUST_ANCHOR'] || undefined);
  const trustAnchor = anchorFile === undefined ? undefined : await loadTrustAnchor(resolve(io.cwd, anchorFile));
  const trustOptions = {
    ...(trusted === undefined ? {} : { trusted, trustSource: options.trust }),
    ...(trustAnchor === undefined ? {} : { trustAnchor, trustAnchorSource: `the trust anchor ${anchorFile}` }),
  };

  let source: string;
  let verification: BundleVerification;
  let notAsserted: readonly NotAssertedStatement[] = [];
  if (file !== undefined) {
    source = `bundle ${file}`;
    const bytes = await readBundleFile(io, file);
    verification = await verifyBundleText(bytes, trustOptions);
    if (verification.bundle !== undefined) {
      const bundle = JSON.parse(new TextDecoder().decode(bytes)) as ReceiptBundle;
      notAsserted = bundle.not_asserted;
      if (options.live === true) {
        const nc = await connectNats(conn);
        try {
          const live = await liveLogChecks(nc, await attachEventLog(nc, conn), conn, bundle, trusted);
          verification = { ...verification, ok: verification.ok && live.every((entry) => entry.status === 'pass'), checks: [...verification.checks, ...live] };
        } finally {
          await nc.drain().catch(() => undefined);
        }
      }
    }
  } else {
    const taskId = parseContract('--task', Id, options.task);
    source = `task ${taskId} (live log)`;
    const waitMs = parseWaitSeconds(options.wait) * 1000;
    const nc = await connectNats(conn);
    try {
      const store = await attachEventLog(nc, conn);
      // The whole stream, past the last receipt too: a break anywhere is reported, not thrown.
      const chain = await store.verifyChain(taskId);
      if (chain.length === 0) throw new CliError('CLI_TASK_NOT_FOUND', `the log holds no event of task ${taskId}`, { details: { task_id: taskId } });
      const skipped = chain.quarantined.length === 0 ? '' : `, ${chain.quarantined.length} other message(s) on it quarantined`;
      const live: BundleCheck = chain.ok
        ? { check: 'events.chain', subject: source, status: 'pass', detail: `${chain.length} events on ${chain.subject}: every hash recomputes and links to its predecessor (head task_seq ${chain.head.taskSeq})${skipped}` }
        : { check: 'events.chain', subject: source, status: 'fail', code: 'BUNDLE_CHAIN_BROKEN', detail: `${chain.reason} at task_seq ${chain.taskSeq} (stream seq ${chain.streamSeq}): ${chain.detail}` };
      const chainChecks = [live, ...quarantineChecks(chain.quarantined, source)];
      const bundle = chain.ok ? await collectBundle(nc, store, conn, taskId, { waitMs, io }).catch(noReceiptsYet) : undefined;
      // The directors' decisions past the last receipt (all of them, with no receipt yet), against the principals in the live log.
      const principalEvents = async (id: string) => (await store.readEntity('principal', id)).map(({ event }) => event);
      const lookup = async (id: string) => principalHistory(id, await principalEvents(id));
      // Each director's registration checked back to the trust anchor, as the bundle's are.
      const registrations = trustAnchor === undefined ? undefined : new RegistrationAuthority(principalEvents, trustAnchor).registrationCheck();
      const unreceipted = chain.ok
        ? await approvalAuthorityChecks(await taskEvents(store, taskId), lookup, { source: 'the live log', from: bundle?.events.length ?? 0, ...(registrations === undefined ? {} : { registrations }) })
        : [];
      if (!chain.ok) {
        verification = { ok: false, anchored: false, checks: chainChecks };
      } else if (bundle === undefined) {
        // Quarantined messages are reported, never a failure: only the chain itself and the approvals decide.
        const decisive = [live, ...unreceipted];
        const checks: BundleCheck[] = [...chainChecks, ...unreceipted, { check: 'receipts.complete', subject: source, status: 'pass', detail: 'the task has no receipt yet: its event chain and its approvals are all there is to check' }];
        verification = { ok: decisive.every((entry) => entry.status === 'pass'), anchored: false, checks };
      } else {
        const offline = await verifyBundle(bundle, trustOptions);
        verification = { ...offline, ok: offline.ok && unreceipted.every((entry) => entry.status === 'pass'), checks: [...chainChecks, ...offline.checks, ...unreceipted] };
        notAsserted = bundle.not_asserted;
      }
    } finally {
      await nc.drain().catch(() => undefined);
    }
  }

  const report: VerifyReport = { ...verification, source, not_asserted: notAsserted };
  if (options.json === true) {
    io.stdout(JSON.stringify(report));
  } else {
    const about = verification.bundle;
    io.stdout(
      about === undefined
        ? `${source}:`
        : `${source}: task ${about.task_id}, ${about.receipts} receipt(s), ${about.events} event(s), log ${about.log_id} at ${about.tree_size} leaves, bundle_hash ${about.bundle_hash}`,
    );
    printChecks(verification.checks, io);
    if (notAsserted.length > 0) {
      io.stdout('not asserted by this evidence:');
      for (const statement of notAsserted) io.stdout(`  - ${cell(statement.subject, 80)}: ${cell(statement.statement, 600)}`);
    }
    const passed = verification.checks.filter((entry) => entry.status === 'pass').length;
    if (verification.ok) {
      io.stdout(
        verification.anchored
          ? `verified: ${passed} checks passed; every key relied on is in ${options.trust ?? 'the trusted JWKS'}`
          : `verified: ${passed} checks passed, with keys taken from the evidence itself (UNANCHORED): pass --trust <jwks.json> to anchor them`,
      );
    }
  }
  failUnverified(source, verification);
  return report;
}
