import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseReceipt, type Receipt } from '@writ/contracts';
import { canonicalJson, sha256Hex, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { ServiceKeyring } from '@writ/runtime';

/** The BUILT receipt service (the CLI never imports a service): build it first with `npx nx run @writ/receipt:build`. */
export const RECEIPT_MAIN = fileURLToPath(new URL('../../../services/receipt/dist/main.js', import.meta.url));

/** The parent's environment without anything Writ or Node would read in place of a test's own. */
function inherited(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('WRIT_') || key.startsWith('OTEL_') || key.startsWith('VITEST') || key === 'NODE_OPTIONS' || key === 'LOG_LEVEL') continue;
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * The receipt service as a child process, with the test's environment (its
 * subject root, streams, key file, log id) on top of quiet defaults (a free
 * port, no telemetry, warnings only), its output appended to `logFile`.
 */
export class ReceiptServiceProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly logFile: string,
  ) {}

  static start(env: Readonly<Record<string, string>>, logFile: string): ReceiptServiceProcess {
    if (!existsSync(RECEIPT_MAIN)) throw new Error(`${RECEIPT_MAIN} is missing: build the receipt service first (npx nx run @writ/receipt:build)`);
    const fd = openSync(logFile, 'a');
    const child = spawn(process.execPath, [RECEIPT_MAIN], {
      env: {
        ...inherited(),
        WRIT_HTTP_HOST: '127.0.0.1',
        WRIT_HTTP_PORT: '0',
        OTEL_SDK_DISABLED: 'true',
        LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', fd, fd],
    });
    closeSync(fd);
    return new ReceiptServiceProcess(child, logFile);
  }

  /** Throws, with the end of its log, when the process has exited (a `waitFor` probe calls it first). */
  assertRunning(): void {
    if (this.child.exitCode !== null) throw new Error(`the receipt service exited (${this.child.exitCode}): ${readFileSync(this.logFile, 'utf8').slice(-2_000)}`);
  }

  /** SIGTERM (a graceful stop: the bus drains), then waits for the exit. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }
}

/**
 * The key the receipt service signs with now, read from its key directory
 * (the key file's path without `.jwk.json`, as its config derives it): tests
 * that append a `receipt.issued` around the service sign it as the service
 * would, since the transparency log admits only receipts signed by the
 * receipt principal's keys.
 */
export async function receiptServiceKey(keyFile: string): Promise<Ed25519SigningKey> {
  const { keyring } = await ServiceKeyring.open({ dir: keyFile.replace(/\.jwk\.json$/, ''), newKid: () => 'never-generated' });
  return keyring.active;
}

/** Seals a receipt body as the receipt service does (RFC 8785 body hashed, compact EdDSA JWS, detached signature), signed by `key`. */
export async function sealTestReceipt(body: Readonly<Record<string, unknown>>, key: Ed25519SigningKey): Promise<{ receipt: Receipt; jws: string }> {
  const canonical = canonicalJson({ ...body, signer_ref: key.kid });
  const jws = await signJws(canonical, key, { typ: 'writ-receipt+jws' });
  const [header, , signature] = jws.split('.');
  return { receipt: parseReceipt({ ...body, signer_ref: key.kid, receipt_hash: sha256Hex(canonical), signature: `${header}..${signature}` }), jws };
}
