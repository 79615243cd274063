import type { ActionRequest, RunAction } from '@writ/contracts';
import { signClaims, type Ed25519SigningKey } from '@writ/crypto';
import { uniqueName } from '@writ/testing';
import { ExecutorEnv, toExecutorConfig, type ExecutorConfig } from '../src/config.js';

const MiB = 1024 ** 2;

/** A config of its own for one test file: unique subject root, streams and bucket, small streams, HTTP on a free port. */
export function testConfig(cellsRoot: string, env: Record<string, string> = {}): ExecutorConfig {
  return toExecutorConfig(
    ExecutorEnv.parse({
      WRIT_SUBJECT_ROOT: uniqueName('t'),
      WRIT_EVENTS_STREAM: uniqueName('EXEC_EV'),
      WRIT_INGRESS_STREAM: uniqueName('EXEC_IN'),
      WRIT_COMMANDS_STREAM: uniqueName('EXEC_CMD'),
      WRIT_DLQ_STREAM: uniqueName('EXEC_DLQ'),
      WRIT_EVENTS_MAX_BYTES: String(64 * MiB),
      WRIT_BUS_STREAMS_MAX_BYTES: String(64 * MiB),
      WRIT_ARTIFACTS_BUCKET: uniqueName('EXEC_ART'),
      WRIT_ARTIFACTS_MAX_BYTES: String(64 * MiB),
      WRIT_HTTP_PORT: '0',
      WRIT_CELLS_ROOT: cellsRoot,
      WRIT_BUS_PULL_EXPIRES_MS: '1000',
      WRIT_ACTION_TIMEOUT_MS: '20000',
      ...env,
    }),
  );
}

/** Every stream the config names, plus the artifact bucket's stream: what a test deletes afterwards. */
export function testStreams(config: ExecutorConfig): string[] {
  return [config.streams.events, config.streams.ingress, config.streams.commands, config.streams.dlq, `OBJ_${config.artifacts.bucket}`];
}

export interface Ids {
  readonly task_id: string;
  readonly step_id: string;
  readonly attempt_id: string;
}

export function newIds(label: string, taskId?: string): Ids {
  return { task_id: taskId ?? uniqueName(`task-${label}`), step_id: uniqueName('step'), attempt_id: uniqueName('attempt') };
}

/** `sh -c 'echo hello > out.txt'` as an agent would propose it, unless overridden. */
export function request(ids: Ids, overrides: Partial<ActionRequest> = {}): ActionRequest {
  return {
    action_request_id: uniqueName('ar'),
    task_id: ids.task_id,
    action_class: 'execute_command',
    target_resources: ['out.txt'],
    params: { argv: ['sh', '-c', 'echo hello > out.txt'] },
    expected_effects: ['out.txt holds hello'],
    reversibility_hint: 'reversible',
    reason: 'integration test',
    proposed_by: 'agent-test',
    proposed_at: new Date().toISOString(),
    ...overrides,
  };
}

export interface GrantSpec {
  readonly ids: Ids;
  readonly signer: Ed25519SigningKey;
  readonly actionClass?: ActionRequest['action_class'];
  readonly paths?: string[];
  readonly hosts?: string[];
  readonly maxUses?: number;
  readonly issuedAt?: Date;
  readonly expiresAt?: Date;
  readonly paramsSha256?: string;
}

export interface Grant {
  readonly grant_id: string;
  readonly jws: string;
}

/** A grant minted with the real crypto, as the approval service mints one (typ writ-grant+jwt, iss and aud from the config). */
export async function mintGrant(config: ExecutorConfig, spec: GrantSpec): Promise<Grant> {
  const grantId = uniqueName('grant');
  const issuedAt = spec.issuedAt ?? new Date();
  const claims = {
    task_id: spec.ids.task_id,
    step_id: spec.ids.step_id,
    attempt_id: spec.ids.attempt_id,
    action_class: spec.actionClass ?? 'execute_command',
    resource_scope: { paths: spec.paths ?? ['.'], hosts: spec.hosts ?? [] },
    max_uses: spec.maxUses ?? 1,
    issued_by_principal_id: 'writ-policy',
    policy_result_ref: `policy_result:${uniqueName('pr')}`,
    ...(spec.paramsSha256 === undefined ? {} : { constraints: { params_sha256: spec.paramsSha256 } }),
  };
  const jws = await signClaims(claims, spec.signer, {
    issuer: config.grant.issuer,
    audience: config.grant.audience,
    subject: config.principalId,
    jwtId: grantId,
    issuedAt,
    expiresAt: spec.expiresAt ?? new Date(issuedAt.getTime() + 300_000),
    typ: 'writ-grant+jwt',
  });
  return { grant_id: grantId, jws };
}

export function runAction(ids: Ids, grant: Grant, actionRequest: ActionRequest): RunAction {
  return { ...ids, grant_id: grant.grant_id, grant_jws: grant.jws, action_request: actionRequest };
}
