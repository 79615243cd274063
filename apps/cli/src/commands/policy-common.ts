import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { WritError, hasErrorCode, parseContract, type PolicyProfileVersion } from '@writ/contracts';
import { canonicalContentVersion } from '@writ/crypto';
import { parsePolicyDocument, preparePolicyProfile, versionPolicyProfile, type PolicyProfileDocument, type PreparedPolicyProfile } from '@writ/kernel';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { CliError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';

/** The profile bucket's default name (the policy service's `WRIT_POLICY_BUCKET`). */
export const DEFAULT_POLICY_BUCKET = 'WRIT_POLICY';

/** How long a request to the policy service may take. */
const REQUEST_TIMEOUT_MS = 10_000;

/** `WRIT_POLICY_BUCKET` or `WRIT_POLICY`. */
export function policyBucketName(io: CliIo): string {
  return io.env['WRIT_POLICY_BUCKET'] || DEFAULT_POLICY_BUCKET;
}

/** `sha256:` + SHA-256 of the RFC 8785 canonical JSON of the document: the version the policy service derives. */
export function profileVersion(document: unknown): PolicyProfileVersion {
  return canonicalContentVersion(document);
}

/** `sha256:0123456789ab` — enough to tell versions apart in a table. */
export function shortVersion(version: unknown): string {
  return typeof version === 'string' ? version.slice(0, 'sha256:'.length + 12) : '-';
}

/** Reads a profile document: YAML (any extension but .json) or JSON; CLI_FILE_UNREADABLE when it cannot be read or parsed. */
export async function readProfileFile(cwd: string, path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(resolve(cwd, path), 'utf8');
  } catch (cause) {
    throw new CliError('CLI_FILE_UNREADABLE', `cannot read the policy profile ${path}: ${(cause as NodeJS.ErrnoException).code ?? 'error'}`, { cause });
  }
  try {
    return extname(path).toLowerCase() === '.json' ? (JSON.parse(text) as unknown) : (parseYaml(text) as unknown);
  } catch (cause) {
    throw new CliError('CLI_FILE_UNREADABLE', `the policy profile ${path} is not ${extname(path).toLowerCase() === '.json' ? 'JSON' : 'YAML'}: ${(cause as Error).message}`, { cause });
  }
}

export interface ProfileIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * Validates a profile document as the policy service will: the kernel's
 * PolicyProfileDocument and an id that is one subject token. Every issue
 * is printed on stderr as `path: message`, then POLICY_PROFILE_INVALID is
 * thrown (exit 1); nothing is sent.
 */
export function validateProfileLocally(input: unknown, file: string, io: CliIo): { document: PolicyProfileDocument; version: PolicyProfileVersion; prepared: PreparedPolicyProfile } {
  const issues: ProfileIssue[] = [];
  let document: PolicyProfileDocument | undefined;
  try {
    document = parsePolicyDocument(input);
  } catch (error) {
    if (!hasErrorCode(error, 'POLICY_PROFILE_INVALID')) throw error;
    const raw = (error.details as { issues?: unknown } | undefined)?.issues;
    for (const issue of Array.isArray(raw) ? raw : [{ path: '', message: error.message }]) {
      const { path, message } = issue as { path?: unknown; message?: unknown };
      issues.push({ path: Array.isArray(path) ? path.join('.') : String(path ?? ''), message: String(message ?? 'is invalid') });
    }
  }
  if (document === undefined || issues.length > 0) {
    for (const issue of issues) io.stderr(`${issue.path || '(root)'}: ${issue.message}`);
    throw new WritError('POLICY_PROFILE_INVALID', `${file} is not a valid policy profile: ${issues.length} issue${issues.length === 1 ? '' : 's'} (listed above)`, {
      details: { issues },
    });
  }
  const version = profileVersion(document);
  return { document, version, prepared: preparePolicyProfile(versionPolicyProfile(document, version)) };
}

/**
 * A request to the policy service over core NATS: the JSON reply parsed with
 * `schema`; a refusal (header Writ-Error-Code) is raised with the service's
 * own code; nobody answering is CLI_NATS_UNREACHABLE.
 */
export async function requestPolicyService<S extends z.ZodType>(nc: NatsConnection, subject: string, payload: unknown, schema: S, what: string): Promise<z.output<S>> {
  let reply;
  try {
    reply = await nc.request(subject, JSON.stringify(payload), { timeout: REQUEST_TIMEOUT_MS });
  } catch (cause) {
    throw new CliError('CLI_NATS_UNREACHABLE', `no policy service answered on ${subject} (is it running under this WRIT_SUBJECT_ROOT?)`, { cause });
  }
  let body: unknown;
  try {
    body = reply.json<unknown>();
  } catch (cause) {
    throw new CliError('CLI_FAILED', `the policy service answered ${subject} with something that is not JSON`, { cause });
  }
  const code = reply.headers?.get('Writ-Error-Code');
  if (code !== undefined && code !== '') {
    const message = typeof (body as { message?: unknown })?.message === 'string' ? (body as { message: string }).message : `${subject} refused the request`;
    throw new WritError(code, message);
  }
  return parseContract(what, schema, body);
}

/**
 * The profile bucket as deployed: never created by the CLI (the policy
 * service creates it); a missing bucket is CLI_POLICY_STORE_MISSING.
 */
export async function openPolicyBucket(nc: NatsConnection, bucket: string, natsUrl: string): Promise<KV> {
  try {
    await (await jetstreamManager(nc)).streams.info(`KV_${bucket}`);
  } catch (cause) {
    if (cause instanceof JetStreamApiError && cause.code === JetStreamApiCodes.StreamNotFound) {
      throw new CliError('CLI_POLICY_STORE_MISSING', `there is no policy profile bucket ${bucket} on ${natsUrl}: start the policy service first (or set WRIT_POLICY_BUCKET)`, { cause });
    }
    throw cause;
  }
  return new Kvm(nc).open(bucket);
}

/** The record under `key`, parsed as JSON (not trusted: the service validates it), or null when absent or deleted. */
export async function readBucketRecord(kv: KV, key: string): Promise<Record<string, unknown> | null> {
  const entry = await kv.get(key);
  if (entry === null || entry.operation !== 'PUT') return null;
  try {
    const value = entry.json<unknown>();
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : { invalid: true };
  } catch {
    return { invalid: true };
  }
}
