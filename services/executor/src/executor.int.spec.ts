import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DeadLetterHeaders } from '@writ/bus';
import { ExecutionCompleted, type ActionRequest } from '@writ/contracts';
import { generateEd25519Key, sha256Hex } from '@writ/crypto';
import { registerServicePrincipal } from '@writ/runtime';
import { uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useIdFor } from './application/event-drafts.js';
import { paramsSha256 } from './application/grant-verification.js';
import type { ExecutorApp } from './bootstrap.js';
import { ExecutorRig, newIds, ofType, request, runAction, type Grant, type Ids } from '../test/executor-rig.js';

/**
 * The executor service started in-process (twice: two instances competing for
 * one durable, as in a deploy) against the real NATS and the real Docker
 * Engine. Every subject lives under a test-unique root, every stream and the
 * artifact bucket have test-unique names and are deleted afterwards; cells carry
 * `writ.test=<run>` and live under a temporary cells root. Tests publish a
 * RunAction and wait for its events in the log, never on sleeps.
 */

/** An environment value no artifact or event may ever contain (invariant 6). */
const SECRET = `s3cr3t-${randomBytes(8).toString('hex')}`;
const rig = new ExecutorRig();
let executors: ExecutorApp[] = [];

beforeAll(async () => {
  process.env['WRIT_TEST_EXECUTOR_SECRET'] = SECRET;
  executors = await rig.start('executor-int', { cellsRoots: ['writ-executor-'], executorIds: ['executor-test-a', 'executor-test-b'], approval: { kid: 'approval-k1', displayName: 'approval (test)' } });
}, 300_000);

afterAll(async () => {
  await rig.close();
  delete process.env['WRIT_TEST_EXECUTOR_SECRET'];
}, 60_000);

// ---- fixtures -------------------------------------------------------------------------------

/** Appends `grant.issued` as the approval service does (`{ claims, jws, at }`, about the grant), and optionally its revocation. */
async function recordIssued(ids: Ids, grant: Grant, options: { revoke?: boolean; claimsOf?: Grant } = {}): Promise<void> {
  const claims = JSON.parse(Buffer.from((options.claimsOf ?? grant).jws.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
  const at = new Date().toISOString();
  const draft = (type: string, payload: Record<string, unknown>) => ({
    event_id: uniqueName('evt'),
    schema_version: 1,
    event_type: type,
    entity_type: 'grant' as const,
    entity_id: grant.grant_id,
    step_id: ids.step_id,
    attempt_id: ids.attempt_id,
    occurred_at: at,
    actor_type: 'service' as const,
    actor_id: rig.config.grant.issuer,
    payload,
    causation_id: null,
    correlation_id: ids.task_id,
    idempotency_key: `${grant.grant_id}:${type}`,
  });
  const drafts = [draft('grant.issued', { claims, jws: grant.jws, at })];
  if (options.revoke === true) drafts.push(draft('grant.revoked', { revoked_by: 'writ-orchestrator', reason: 'witness drift', at }));
  const head = (await rig.store.read(ids.task_id)).length;
  await rig.store.append(ids.task_id, drafts, head);
}

// ---- tests ----------------------------------------------------------------------------------

describe('executor service', () => {
  it('given both instances started, then /healthz and /readyz answer 200 with every check ok', async () => {
    for (const executor of executors) {
      expect((await fetch(`${executor.url}/healthz`)).status).toBe(200);
      const ready = await fetch(`${executor.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({
        ready: true,
        checks: { nats: { ok: true }, streams: { ok: true }, artifacts: { ok: true }, consumer: { ok: true }, cell_image: { ok: true } },
      });
    }
  });

  it('given a valid grant for `echo hello > out.txt`, when RunAction arrives, then grant.use_claimed, then execution.completed with exit 0, out.txt added, retrievable artifacts and no host path or secret in them', async () => {
    const ids = newIds('valid');
    const grant = await rig.mint({ ids });
    await rig.publishRunAction(runAction(ids, grant, request(ids)));

    const completed = await rig.waitForTaskEvent(ids.task_id, 'execution.completed', ofType('execution.completed'));
    const log = await rig.events(ids.task_id);
    const claimed = log.find(ofType('grant.use_claimed'));
    expect(claimed).toMatchObject({ entity_type: 'grant', entity_id: grant.grant_id, actor_type: 'service', actor_id: 'writ-executor', correlation_id: ids.task_id });
    expect(claimed?.payload).toMatchObject({ use_no: 1, task_id: ids.task_id, attempt_id: ids.attempt_id, action_class: 'execute_command' });
    expect(log.findIndex((event) => event.event_id === claimed?.event_id)).toBeLessThan(log.findIndex((event) => event.event_id === completed.event_id));
    expect(completed.causation_id).toBe(claimed?.event_id);

    const payload = ExecutionCompleted.parse(completed.payload);
    expect(payload).toMatchObject({ grant_id: grant.grant_id, use_no: 1, outcome: 'completed', exit_code: 0, timed_out: false });
    expect(['executor-test-a', 'executor-test-b']).toContain(payload.executor_id);
    expect(payload.changed_files).toEqual([{ path: 'out.txt', change: 'added', before_sha256: null, after_sha256: sha256Hex('hello\n') }]);
    expect(payload.environment).toMatchObject({ network_mode: 'none', readonly_rootfs: true, cap_drop: ['ALL'], mounts: [{ destination: '/run/writ', read_only: false }, { destination: '/workspace', read_only: false }] });
    expect(await readFile(rig.hostFile(ids.task_id, 'out.txt'), 'utf8')).toBe('hello\n');

    // the stdout artifact is in the object store under its hash
    const stdout = payload.artifacts.find((artifact) => artifact.task_local_alias === 'stdout');
    expect(stdout).toMatchObject({ content_hash: payload.stdout_sha256, kind: 'command.transcript', producer: 'writ-executor', trust_tier: 'observed' });
    expect(stdout?.uri).toBe(`nats-obj://${rig.config.artifacts.bucket}/sha256-${payload.stdout_sha256}`);
    expect(Buffer.from((await rig.objectBytes(payload.stdout_sha256)) ?? [1]).toString()).toBe('');
    // and so is the changed file's content, by the hash the diff reports
    expect(Buffer.from((await rig.objectBytes(sha256Hex('hello\n'))) ?? []).toString()).toBe('hello\n');
    expect(payload.artifacts.map((artifact) => artifact.kind).sort()).toEqual(['command.transcript', 'command.transcript', 'diff', 'environment.snapshot', 'file.snapshot']);

    // no artifact, and no event, carries a host path or a value of the executor's environment
    for (const artifact of payload.artifacts) {
      const bytes = Buffer.from((await rig.objectBytes(artifact.content_hash)) ?? []);
      expect(sha256Hex(bytes)).toBe(artifact.content_hash);
      expect(bytes.toString('latin1')).not.toContain(rig.cellsRoot);
      expect(bytes.toString('latin1')).not.toContain(SECRET);
    }
    expect(JSON.stringify(log)).not.toContain(rig.cellsRoot);
    expect(JSON.stringify(log)).not.toContain(SECRET);
  });

  it('given the same RunAction published twice (two instances competing), when both are handled, then it ran once: one claim, one completion, one line written', async () => {
    const ids = newIds('twice');
    const grant = await rig.mint({ ids, maxUses: 2 });
    const command = runAction(ids, grant, request(ids, { params: { argv: ['sh', '-c', 'echo ran >> count.txt'] }, target_resources: ['count.txt'] }));
    await rig.publishRunAction(command);
    const last = await rig.publishRunAction(command);
    await rig.waitSettled(last);

    const log = await rig.events(ids.task_id);
    expect(log.filter(ofType('grant.use_claimed'))).toHaveLength(1);
    expect(log.filter(ofType('execution.completed'))).toHaveLength(1);
    expect(log.filter(ofType('grant.refused'))).toHaveLength(0);
    expect(await readFile(rig.hostFile(ids.task_id, 'count.txt'), 'utf8')).toBe('ran\n');
  });

  it('given a grant (max_uses 1) already used, when it is replayed for a second execution, then grant.refused GRANT_EXHAUSTED and the marker command never runs', async () => {
    const ids = newIds('replay');
    const grant = await rig.mint({ ids });
    await recordIssued(ids, grant);
    await rig.publishRunAction(runAction(ids, grant, request(ids)));
    await rig.waitForTaskEvent(ids.task_id, 'the first execution', ofType('execution.completed'));

    await rig.publishRunAction(runAction(ids, grant, request(ids, { params: { argv: ['sh', '-c', 'touch marker.txt'] } })));
    const refused = await rig.waitForTaskEvent(ids.task_id, 'grant.refused', ofType('grant.refused'));
    expect(refused.payload).toMatchObject({ code: 'GRANT_EXHAUSTED' });
    expect(refused).toMatchObject({ entity_type: 'grant', entity_id: grant.grant_id });
    const log = await rig.events(ids.task_id);
    expect(log.map((event) => event.event_type)).toEqual(['grant.issued', 'grant.use_claimed', 'execution.started', 'execution.completed', 'grant.refused']);
    expect(existsSync(rig.hostFile(ids.task_id, 'marker.txt'))).toBe(false);
  });

  it('given grant.issued and then grant.revoked in the log, when RunAction arrives with the (still unexpired) JWS, then grant.refused GRANT_REVOKED and nothing runs', async () => {
    const ids = newIds('revoked');
    const grant = await rig.mint({ ids });
    await recordIssued(ids, grant, { revoke: true });
    await rig.publishRunAction(runAction(ids, grant, request(ids, { params: { argv: ['sh', '-c', 'touch marker.txt'] }, target_resources: ['marker.txt'] })));

    const refused = await rig.waitForTaskEvent(ids.task_id, 'grant.refused', ofType('grant.refused'));
    expect(refused.payload).toMatchObject({ code: 'GRANT_REVOKED' });
    expect(existsSync(rig.hostFile(ids.task_id, 'marker.txt'))).toBe(false);
  });

  it('given grant.issued in the log with other claims than the JWS carries, then grant.refused GRANT_CLAIMS_INVALID', async () => {
    const ids = newIds('mismatch');
    const presented = await rig.mint({ ids, maxUses: 5 });
    // the log records the presented grant's id with the claims of another grant (one use, another jti)
    await recordIssued(ids, presented, { claimsOf: await rig.mint({ ids }) });
    await rig.publishRunAction(runAction(ids, presented, request(ids)));

    const refused = await rig.waitForTaskEvent(ids.task_id, 'grant.refused', ofType('grant.refused'));
    expect(refused.payload).toMatchObject({ code: 'GRANT_CLAIMS_INVALID' });
    expect(existsSync(rig.hostFile(ids.task_id, 'out.txt'))).toBe(false);
  });

  const refusals: { note: string; code: string; make: (ids: Ids) => Promise<Grant> }[] = [
    {
      note: 'an expired grant',
      code: 'GRANT_EXPIRED',
      make: (ids) => rig.mint({ ids, issuedAt: new Date(Date.now() - 3_600_000), expiresAt: new Date(Date.now() - 1_800_000) }),
    },
    { note: 'a grant for another task', code: 'GRANT_WRONG_TASK', make: (ids) => rig.mint({ ids: { ...ids, task_id: uniqueName('task-other') } }) },
    { note: 'a grant for another attempt', code: 'GRANT_WRONG_ATTEMPT', make: (ids) => rig.mint({ ids: { ...ids, attempt_id: uniqueName('attempt-other') } }) },
    {
      note: 'a JWS signed by a key not in the log under the issuer kid (forged)',
      code: 'GRANT_SIGNATURE_INVALID',
      make: async (ids) => rig.mint({ ids, signer: await generateEd25519Key({ kid: 'approval-k1' }) }),
    },
    {
      note: 'a JWS signed by an unknown kid',
      code: 'GRANT_SIGNATURE_INVALID',
      make: async (ids) => rig.mint({ ids, signer: await generateEd25519Key({ kid: 'intruder-k9' }) }),
    },
    {
      note: 'a JWS signed by a key the issuer "registered" on its own principal with no operator enrollment (a stolen approval bus credential)',
      code: 'GRANT_ISSUER_UNAUTHORIZED',
      make: async (ids) => {
        const rogue = await generateEd25519Key({ kid: uniqueName('rogue') });
        // What a holder of the approval service's bus credential can append: principal.key_added, with no authorization.
        expect(await registerServicePrincipal(rig.store, { principalId: rig.config.grant.issuer, displayName: 'approval (test)', key: rogue })).toBe('key_added');
        return rig.mint({ ids, signer: rogue });
      },
    },
    {
      note: 'params changed after the grant was minted (params_sha256)',
      code: 'GRANT_PARAMS_MISMATCH',
      make: (ids) => rig.mint({ ids, paramsSha256: paramsSha256({ argv: ['sh', '-c', 'echo harmless'] }) }),
    },
    { note: 'a target escaping the grant scope with ..', code: 'GRANT_OUT_OF_SCOPE', make: (ids) => rig.mint({ ids, paths: ['src'] }) },
  ];

  it.each(refusals)('given $note, when RunAction arrives, then grant.refused $code and nothing runs', async ({ make, code }) => {
    const ids = newIds('refused');
    const grant = await make(ids);
    const actionRequest = request(ids, { params: { argv: ['sh', '-c', 'touch marker.txt'] }, target_resources: code === 'GRANT_OUT_OF_SCOPE' ? ['src/../marker.txt'] : ['marker.txt'] });
    await rig.publishRunAction(runAction(ids, grant, actionRequest));

    const refused = await rig.waitForTaskEvent(ids.task_id, 'grant.refused', ofType('grant.refused'));
    expect(refused.payload).toMatchObject({ code, use_id: useIdFor(runAction(ids, grant, actionRequest)) });
    const log = await rig.events(ids.task_id);
    expect(log.map((event) => event.event_type)).toEqual(['grant.refused']);
    expect(existsSync(rig.hostFile(ids.task_id, 'marker.txt'))).toBe(false);
  });

  it('given a claim in the log without a completion (a crash between claim and completion), when the RunAction is delivered again, then execution.completed outcome unknown and the command is not run', async () => {
    const ids = newIds('crash');
    const grant = await rig.mint({ ids });
    const command = runAction(ids, grant, request(ids, { params: { argv: ['sh', '-c', 'touch marker.txt'] }, target_resources: ['marker.txt'] }));
    const useId = useIdFor(command);
    const claimedAt = new Date(Date.now() - 3_600_000).toISOString();
    await rig.store.append(
      ids.task_id,
      [
        {
          event_id: `${useId}-claimed`,
          schema_version: 1,
          event_type: 'grant.use_claimed',
          entity_type: 'grant',
          entity_id: grant.grant_id,
          step_id: ids.step_id,
          attempt_id: ids.attempt_id,
          occurred_at: claimedAt,
          actor_type: 'service',
          actor_id: 'writ-executor',
          payload: { use_id: useId, use_no: 1, task_id: ids.task_id, attempt_id: ids.attempt_id, action_class: 'execute_command', at: claimedAt },
          causation_id: useId,
          correlation_id: ids.task_id,
          idempotency_key: `${useId}:grant.use_claimed`,
        },
      ],
      0,
    );
    await rig.publishRunAction(command);

    const completed = await rig.waitForTaskEvent(ids.task_id, 'execution.completed', ofType('execution.completed'));
    expect(completed.payload).toMatchObject({ grant_id: grant.grant_id, use_no: 1, outcome: 'unknown', exit_code: null, error: { code: 'EXECUTOR_OUTCOME_UNKNOWN' } });
    expect(existsSync(rig.hostFile(ids.task_id, 'marker.txt'))).toBe(false);
    expect((await rig.events(ids.task_id)).filter(ofType('grant.use_claimed'))).toHaveLength(1);
  });

  it('given grants for write_local, read_local and delete_local, when run in turn, then the file is written, read back as stdout, and deleted, each recorded with its diff', async () => {
    const taskId = uniqueName('task-files');
    const run = async (actionClass: ActionRequest['action_class'], params: ActionRequest['params']) => {
      const ids = newIds('files', taskId);
      const grant = await rig.mint({ ids, actionClass, paths: ['notes'] });
      await rig.publishRunAction(runAction(ids, grant, request(ids, { action_class: actionClass, params, target_resources: ['notes/a.txt'] })));
      const done = await rig.waitForTaskEvent(taskId, `${actionClass} completed`, (event) => event.event_type === 'execution.completed' && event.payload['grant_id'] === grant.grant_id);
      return ExecutionCompleted.parse(done.payload);
    };

    const written = await run('write_local', { path: 'notes/a.txt', content: 'hi there\n' });
    expect(written).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(written.changed_files).toEqual([{ path: 'notes/a.txt', change: 'added', before_sha256: null, after_sha256: sha256Hex('hi there\n') }]);
    expect(await readFile(rig.hostFile(taskId, 'notes/a.txt'), 'utf8')).toBe('hi there\n');

    const read = await run('read_local', { path: 'notes/a.txt' });
    expect(read).toMatchObject({ outcome: 'completed', exit_code: 0, changed_files: [], stdout_sha256: sha256Hex('hi there\n') });
    expect(Buffer.from((await rig.objectBytes(read.stdout_sha256)) ?? []).toString()).toBe('hi there\n');

    const deleted = await run('delete_local', { path: 'notes/a.txt' });
    expect(deleted).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(deleted.changed_files).toEqual([{ path: 'notes/a.txt', change: 'deleted', before_sha256: sha256Hex('hi there\n'), after_sha256: null }]);
    expect(existsSync(rig.hostFile(taskId, 'notes/a.txt'))).toBe(false);
  });

  it('given a symlink in the workspace pointing out of it, when write_local targets a path through it, then execution.completed errored EXECUTOR_PATH_ESCAPE and nothing is written', async () => {
    const ids = newIds('symlink');
    await executors[0]?.cells.openCell(ids.task_id);
    const outside = await mkdtemp(path.join(tmpdir(), 'writ-outside-'));
    try {
      await mkdir(rig.hostFile(ids.task_id, ''), { recursive: true });
      await symlink(outside, rig.hostFile(ids.task_id, 'escape'));
      const grant = await rig.mint({ ids, actionClass: 'write_local', paths: ['escape'] });
      await rig.publishRunAction(runAction(ids, grant, request(ids, { action_class: 'write_local', params: { path: 'escape/pwned.txt', content: 'x' }, target_resources: ['escape/pwned.txt'] })));

      const completed = await rig.waitForTaskEvent(ids.task_id, 'execution.completed', ofType('execution.completed'));
      expect(completed.payload).toMatchObject({ outcome: 'errored', exit_code: null, error: { code: 'EXECUTOR_PATH_ESCAPE' } });
      expect(existsSync(path.join(outside, 'pwned.txt'))).toBe(false);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('given a grant for an action class the executor cannot run, then the use is claimed and execution.completed says errored EXECUTOR_ACTION_UNSUPPORTED', async () => {
    const ids = newIds('unsupported');
    const grant = await rig.mint({ ids, actionClass: 'publication', paths: [], hosts: ['example.com'] });
    await rig.publishRunAction(runAction(ids, grant, request(ids, { action_class: 'publication', params: { url: 'https://example.com/' }, target_resources: ['https://example.com/'] })));

    const completed = await rig.waitForTaskEvent(ids.task_id, 'execution.completed', ofType('execution.completed'));
    expect(completed.payload).toMatchObject({ outcome: 'errored', error: { code: 'EXECUTOR_ACTION_UNSUPPORTED' }, artifacts: [] });
  });

  it('given a task whose cell ran an action, when close-cell arrives, then its cell closes (final checkpoint) into the graveyard: container stopped and kept, workspace kept; a second close is a no-op', async () => {
    const ids = newIds('close');
    const grant = await rig.mint({ ids });
    await rig.publishRunAction(runAction(ids, grant, request(ids)));
    await rig.waitForTaskEvent(ids.task_id, 'execution.completed', ofType('execution.completed'));
    // By name: a cell claimed from the warm pool carries the task's name, not its task label.
    const containersOf = async () => rig.docker.listContainers({ all: true, filters: { name: [`^/writ-cell-${ids.task_id}$`] } });
    expect(await containersOf()).toHaveLength(1);
    const headBefore = (await rig.events(ids.task_id)).length;

    const closeDurable = `${rig.config.durable}-close-cell`;
    const close = async (msgId: string) => (await rig.client.publish(rig.config.subjects.closeCell, { task_id: ids.task_id, reason: 'task.completed' }, { msgId })).seq;
    await rig.waitSettled(await close(`${ids.task_id}:cmd:executor.close-cell`), { durable: closeDurable });
    expect((await containersOf()).map((container) => container.State)).toEqual(['exited']);
    expect(await readFile(rig.hostFile(ids.task_id, 'out.txt'), 'utf8')).toBe('hello\n');
    const cellTypes = async () => (await rig.store.readEntity('cell', ids.task_id)).map((stored) => stored.event.event_type);
    expect((await cellTypes()).slice(-3)).toEqual(['cell.checkpoint_started', 'cell.checkpoint_completed', 'cell.closed']);

    // a second close (another msg id, so the bus does not dedupe it) finds it closed and is acked
    await rig.waitSettled(await close(uniqueName('close-again')), { durable: closeDurable });
    expect((await containersOf()).map((container) => container.State)).toEqual(['exited']);
    expect(existsSync(rig.hostFile(ids.task_id, 'out.txt'))).toBe(true);
    expect(await cellTypes()).toHaveLength(7);
    // nothing is appended to the task stream
    expect(await rig.events(ids.task_id)).toHaveLength(headBefore);
  });

  it('given a payload that is not a RunAction, then it is dead-lettered on <root>.dlq.executor.run at once', async () => {
    const before = (await rig.jsm.streams.info(rig.config.streams.dlq)).state.messages;
    const seq = await rig.publishRunAction({ task_id: 'nope' });
    await rig.waitSettled(seq);
    const letters = await waitFor(async () => {
      const info = await rig.jsm.streams.info(rig.config.streams.dlq);
      return info.state.messages > before ? info.state.messages : undefined;
    });
    expect(letters).toBe(before + 1);
    const letter = await rig.jsm.streams.getMessage(rig.config.streams.dlq, { last_by_subj: rig.config.subjects.runDeadLetter });
    expect(letter?.header.get(DeadLetterHeaders.REASON)).toBe('terminal');
    expect(letter?.header.get(DeadLetterHeaders.ERROR_CODE)).toBe('CONTRACT_INVALID');
    expect(letter?.header.get(DeadLetterHeaders.DELIVERY_COUNT)).toBe('1');
  });
});
