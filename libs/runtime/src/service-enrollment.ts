import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PrincipalRole } from '@writ/contracts';
import { importEd25519PrivateJwk, type Ed25519SigningKey, type JwsSigner } from '@writ/crypto';
import { RuntimeError } from './runtime-errors.js';
import { SIGNED_REQUESTS, claimedSignedRequest, signRequest } from './signed-request.js';

/**
 * A service principal's enrollment (contracts `ServiceEnrollment`): the operator's signed
 * statement that this service principal may register and rotate its own signing keys. `writ
 * init` signs one per Writ service principal into `<WRIT_HOME>/services/<principal>.enrollment.jws`;
 * the service attaches it as `authorization` to every key it appends on its own principal
 * subject, and readers (registration-authority.ts) accept such a key only with a valid
 * enrollment whose signer chains to the trust anchor. Not a secret.
 */

/** Where `writ init` writes the enrollment of `principalId`. */
export function serviceEnrollmentPath(home: string, principalId: string): string {
  return join(home, 'services', `${principalId}.enrollment.jws`);
}

/** Signs an enrollment of `principalId` as the operator `by`. */
export async function signServiceEnrollment(principalId: string, by: { readonly principalId: string; readonly key: JwsSigner; readonly now: Date }, roles: readonly PrincipalRole[] = []): Promise<string> {
  return (await signRequest(SIGNED_REQUESTS.serviceEnrollment, { principal_id: principalId, roles: [...roles] }, by)).jws;
}

/**
 * The enrollment a service attaches to its key registrations: the file `WRIT_SERVICE_ENROLLMENT`
 * names, else `<WRIT_HOME>/services/<principalId>.enrollment.jws` when it exists; undefined when
 * there is none (its keys are then appended unauthorized, and every reader refuses them). An
 * enrollment for another principal is RUNTIME_CONFIG_INVALID: the service would never be trusted.
 */
export async function loadServiceEnrollment(principalId: string, env: Readonly<Record<string, string | undefined>> = process.env): Promise<string | undefined> {
  const named = env['WRIT_SERVICE_ENROLLMENT'];
  const file = named !== undefined && named !== '' ? named : env['WRIT_HOME'] ? serviceEnrollmentPath(env['WRIT_HOME'], principalId) : undefined;
  if (file === undefined) return undefined;
  let text: string;
  try {
    text = (await readFile(file, 'utf8')).trim();
  } catch (cause) {
    if (named === undefined && (cause as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new RuntimeError('RUNTIME_CONFIG_INVALID', `the service enrollment ${file} cannot be read: run \`writ init\` (it signs one per service) or fix WRIT_SERVICE_ENROLLMENT`, { cause });
  }
  const invalid = (message: string) => new RuntimeError('RUNTIME_CONFIG_INVALID', `the service enrollment ${file} ${message}`, { details: { file, principal_id: principalId } });
  const claimed = claimedSignedRequest(text, SIGNED_REQUESTS.serviceEnrollment, (_reason, message) => invalid(`is not a signed ServiceEnrollment: ${message}`));
  if (claimed.principal_id !== principalId) throw invalid(`enrolls ${claimed.principal_id}, not ${principalId}`);
  return text;
}

/**
 * The operator `writ init` made, as its environment names it (`. <WRIT_HOME>/writ.env`:
 * WRIT_OPERATOR_ID and WRIT_OPERATOR_KEY, its PRIVATE JWK): for the CLI and for tests that sign
 * as the operator. Undefined when WRIT_OPERATOR_KEY is not set.
 */
export async function loadOperatorSigner(env: Record<string, string | undefined> = process.env): Promise<{ readonly principalId: string; readonly key: Ed25519SigningKey } | undefined> {
  const file = env['WRIT_OPERATOR_KEY'];
  if (file === undefined || file === '') return undefined;
  try {
    return { principalId: env['WRIT_OPERATOR_ID'] || 'operator', key: await importEd25519PrivateJwk(JSON.parse(await readFile(file, 'utf8'))) };
  } catch (cause) {
    throw new RuntimeError('RUNTIME_CONFIG_INVALID', `the operator's key ${file} (WRIT_OPERATOR_KEY) cannot be read as a private Ed25519 JWK`, { cause });
  }
}
