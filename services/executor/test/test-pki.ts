import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createSecureContext, type SecureContext } from 'node:tls';

/**
 * Certificates made at test time with the `openssl` CLI (P-256, valid one day): a CA and
 * server certificates it issues, so that https tests verify real chains and never ship keys.
 */

export interface TestCa {
  readonly name: string;
  readonly certPem: string;
  readonly certFile: string;
  readonly keyFile: string;
}

export interface ServerCert {
  readonly certPem: string;
  readonly keyPem: string;
  readonly context: SecureContext;
}

function openssl(args: readonly string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A scratch directory for one test file's PKI; `remove()` it afterwards. */
export class TestPki {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'writ-pki-'));

  createCa(name: string): TestCa {
    const keyFile = path.join(this.dir, `${name}.key`);
    const certFile = path.join(this.dir, `${name}.pem`);
    openssl([
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
      '-subj', `/CN=${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
      '-keyout', keyFile, '-out', certFile,
    ]);
    return { name, certPem: readFileSync(certFile, 'utf8'), certFile, keyFile };
  }

  /** A server certificate for `dnsNames` (subjectAltName), issued by `ca`. */
  issueServerCert(ca: TestCa, dnsNames: readonly string[]): ServerCert {
    const base = path.join(this.dir, `leaf-${randomBytes(4).toString('hex')}`);
    const ext = `${base}.ext`;
    writeFileSync(ext, `basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=${dnsNames.map((name) => `DNS:${name}`).join(',')}\n`);
    openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', `/CN=${dnsNames[0] ?? 'server'}`, '-keyout', `${base}.key`, '-out', `${base}.csr`]);
    openssl(['x509', '-req', '-in', `${base}.csr`, '-CA', ca.certFile, '-CAkey', ca.keyFile, '-set_serial', `0x${randomBytes(8).toString('hex')}`, '-days', '1', '-extfile', ext, '-out', `${base}.pem`]);
    const certPem = readFileSync(`${base}.pem`, 'utf8');
    const keyPem = readFileSync(`${base}.key`, 'utf8');
    return { certPem, keyPem, context: createSecureContext({ cert: certPem, key: keyPem }) };
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
