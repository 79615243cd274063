import { headers as natsHeaders, type Msg, type Subscription } from '@nats-io/transport-node';
import { durableName, ERROR_CODE_HEADER } from '@writ/bus';
import { generateEd25519Key, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { registerServicePrincipal } from '@writ/runtime';
import { uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  actionRequest,
  approvalPath,
  approvalResolved,
  fakeJws,
  happyPath,
  storyIds,
  type StoryIds,
} from '../test/governed-path.fixture.js';
import { createRig, http, type Rig } from '../test/projection-rig.js';
import type { ProjectionApp } from './bootstrap.js';
import { rebuildIntoFreshSchema } from './bootstrap.js';
import { SERVICE_NAME } from './config.js';

/**
 * The projection service in-process against the real NATS (JetStream) and
 * Postgres: each describe owns a subject root, its streams and a schema. The
 * test plays the other services by appending their events to the log (the
 * event store, as they do) and answering requests on the command subjects.
 */

const decoder = new TextDecoder();

/** Collects what arrives on a core NATS subject. */
function collect(rig: Rig, subject: string): { messages: Array<Record<string, unknown>>; sub: Subscription } {
  const messages: Array<Record<string, unknown>> = [];
  const sub = rig.nc.subscribe(subject, { callback: (_error, msg) => {
      messages.push(JSON.parse(decoder.decode(msg.data)) as Record<string, unknown>);
    },
  });
  return { messages, sub };
}

async function signedRequest(ids: StoryIds, key: Ed25519SigningKey): Promise<string> {
  return signJws(JSON.stringify(actionRequest(ids)), key);
}

/** md5 of every view table, for "nothing changed" assertions. */
async function tableChecksums(rig: Rig): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of ['actions', 'tasks', 'task_events', 'approvals', 'grants', 'receipts', 'principals']) {
    const result = await rig.db.query(`SELECT md5(coalesce(string_agg(row_to_json(t)::text, ',' ORDER BY row_to_json(t)::text), '')) AS sum FROM ${rig.table(name)} t`);
    out[name] = String((result.rows[0] as { sum: string }).sum);
  }
  return out;
}

describe('projection service: the governed path end to end', () => {
  let rig: Rig;
  let app: ProjectionApp;
  let agentKey: Ed25519SigningKey;

  beforeAll(async () => {
    rig = await createRig();
    app = await rig.start();
    agentKey = await generateEd25519Key({ kid: 'agent-k1' });
  });

  afterAll(async () => {
    await rig?.dispose();
  });

  it('is healthy, and ready once its consumer is bound', async () => {
    expect(await http(app, '/healthz')).toMatchObject({ status: 200, body: { status: 'ok', version: expect.any(String) } });
    const ready = await http(app, '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', consumers: [durableName(SERVICE_NAME, rig.config.subjects.projectorPattern)] });
  });

  it('folds a direct allow into the views, publishes the action row, and serves it over HTTP', async () => {
    // given a dashboard subscribed to the action's topic and a service principal with its key in the log
    const ids = storyIds(uniqueName('happy'));
    const topic = collect(rig, `${rig.root}.proj.actions.${ids.actionRequest}`);
    const receiptKey = await generateEd25519Key({ kid: uniqueName('receipt-k') });
    await registerServicePrincipal(rig.store, { principalId: uniqueName('receipt'), displayName: 'receipt', key: receiptKey });
    // when the services append the whole governed path of a signed request
    const story = happyPath(ids, await signedRequest(ids, agentKey));
    const last = await rig.append(story);
    await rig.caughtUp(last);

    // then the action reports succeeded with the ids of what decided and ran it
    const action = await http(app, `/v1/actions/${ids.actionRequest}`);
    expect(action.status).toBe(200);
    expect(action.body).toMatchObject({
      action_request_id: ids.actionRequest,
      status: 'succeeded',
      task_id: ids.task,
      step_id: ids.step,
      attempt_id: ids.attempt,
      policy_result_id: ids.policyResult,
      approval_id: null,
      grant_id: ids.grant,
      receipt_id: ids.receipt,
      reason_code: null,
    });
    // and every change of the row was published, the last one succeeded
    await waitFor(() => (topic.messages.at(-1)?.['status'] === 'succeeded' ? true : undefined), { what: 'the succeeded action on its topic' });
    expect(topic.messages.map((m) => m['status'])).toEqual(expect.arrayContaining(['received', 'awaiting_policy', 'authorized', 'executing', 'receipt_pending', 'succeeded']));
    topic.sub.unsubscribe();

    // and the task carries its whole timeline, the receipt its JWS, the keys the service key
    const task = await http(app, `/v1/tasks/${ids.task}`);
    expect(task.body).toMatchObject({ task_id: ids.task, status: 'completed', next_after: null });
    expect((task.body['events'] as Array<{ event_type: string }>).map((e) => e.event_type)).toEqual(
      story.filter((e) => e.aggregate === 'task').map((e) => e.draft.event_type),
    );
    const receipt = await http(app, `/v1/receipts/${ids.receipt}`);
    expect(receipt.body).toMatchObject({ receipt_id: ids.receipt, result_code: 'succeeded', jws: story.find((e) => e.draft.event_type === 'receipt.issued')?.draft.payload['jws'] });
    const grant = await http(app, `/v1/grants/${ids.grant}`);
    expect(grant).toMatchObject({ status: 200, body: { grant_id: ids.grant, task_id: ids.task } });
    const keys = await http(app, '/v1/keys');
    expect(keys.body['keys']).toEqual(expect.arrayContaining([expect.objectContaining({ kid: receiptKey.kid, kty: 'OKP', crv: 'Ed25519', x: receiptKey.publicJwk.x })]));
    expect(JSON.stringify(keys.body)).not.toContain('"d"');

    // and each event is stored once
    const rows = await rig.db.query(`SELECT count(*)::int AS n FROM ${rig.table('task_events')} WHERE task_id = $1`, [ids.task]);
    expect(rows.rows[0]).toEqual({ n: 19 });
  });

  it('answers a missing or malformed id with a stable code', async () => {
    expect(await http(app, '/v1/actions/ar-nobody')).toMatchObject({ status: 404, body: { code: 'PROJECTION_NOT_FOUND' } });
    expect(await http(app, '/v1/receipts/r-nobody')).toMatchObject({ status: 404, body: { code: 'PROJECTION_NOT_FOUND' } });
    expect(await http(app, '/v1/actions/not.an.id')).toMatchObject({ status: 400, body: { code: 'PROJECTION_REQUEST_INVALID' } });
    expect(await http(app, '/v1/nothing-here')).toMatchObject({ status: 404, body: { code: 'PROJECTION_ROUTE_NOT_FOUND' } });
  });

  it('lists a pending approval, and folds its resolution in one transaction with the checkpoint', async () => {
    // given an action waiting for approval
    const ids = storyIds(uniqueName('appr'));
    const pending = await rig.append(approvalPath(ids, await signedRequest(ids, agentKey)));
    await rig.caughtUp(pending);
    const inbox = await http(app, '/v1/approvals?status=pending');
    expect(inbox.status).toBe(200);
    expect(inbox.body['approvals']).toEqual(
      expect.arrayContaining([expect.objectContaining({ approval_id: ids.approval, task_id: ids.task, attempt_id: ids.attempt, status: 'pending', requested_by: ids.principal })]),
    );
    expect((await http(app, `/v1/actions/${ids.actionRequest}`)).body).toMatchObject({ status: 'awaiting_approval', approval_id: ids.approval });

    // when Postgres refuses the checkpoint update of the next event (a crash between the row writes and the commit)
    const target = pending + 1;
    await rig.db.query(
      `CREATE FUNCTION ${rig.table('refuse_checkpoint')}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.last_seq = ${target} THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$`,
    );
    await rig.db.query(`CREATE TRIGGER refuse_checkpoint BEFORE UPDATE ON ${rig.table('checkpoints')} FOR EACH ROW EXECUTE FUNCTION ${rig.table('refuse_checkpoint')}()`);
    expect(await rig.append([approvalResolved(ids, 'granted', 7)])).toBe(target);
    const durable = durableName(SERVICE_NAME, rig.config.subjects.projectorPattern);
    await waitFor(async () => ((await rig.jsm.consumers.info(rig.config.streams.events, durable)).num_redelivered > 0 ? true : undefined), {
      what: 'a failed and redelivered event',
    });
    // then neither the rows nor the checkpoint moved
    expect(await rig.checkpoint()).toBe(pending);
    expect((await rig.db.query(`SELECT status FROM ${rig.table('approvals')} WHERE approval_id = $1`, [ids.approval])).rows).toEqual([{ status: 'pending' }]);
    expect((await rig.db.query(`SELECT count(*)::int AS n FROM ${rig.table('task_events')} WHERE task_id = $1`, [ids.task])).rows).toEqual([{ n: 10 }]);

    // when Postgres accepts again, the redelivery applies it exactly once
    await rig.db.query(`DROP TRIGGER refuse_checkpoint ON ${rig.table('checkpoints')}`);
    await rig.caughtUp(target);
    expect((await rig.db.query(`SELECT status FROM ${rig.table('approvals')} WHERE approval_id = $1`, [ids.approval])).rows).toEqual([{ status: 'granted' }]);
    expect((await rig.db.query(`SELECT count(*)::int AS n FROM ${rig.table('task_events')} WHERE task_id = $1`, [ids.task])).rows).toEqual([{ n: 11 }]);
    expect((await http(app, '/v1/approvals?status=pending')).body['approvals']).not.toEqual(expect.arrayContaining([expect.objectContaining({ approval_id: ids.approval })]));
  });

  it('forwards POST /v1/actions to ingress and returns its answer', async () => {
    // given a stand-in for ingress answering on the submit-action subject, as ingress replies
    const ids = storyIds(uniqueName('post'));
    const seen: Array<Record<string, unknown>> = [];
    const ingress = rig.nc.subscribe(rig.config.subjects.submitAction, {
      queue: 'ingress',
      callback: (_error, msg: Msg) => {
        const command = JSON.parse(decoder.decode(msg.data)) as Record<string, unknown>;
        seen.push(command);
        const key = command['idempotency_key'];
        if (key === 'broken-me') {
          const headers = natsHeaders();
          headers.set(ERROR_CODE_HEADER, 'CONTRACT_INVALID');
          msg.respond(JSON.stringify({ code: 'CONTRACT_INVALID', message: 'SubmitAction is invalid' }), { headers });
        } else if (key === 'reject-me') {
          msg.respond(JSON.stringify({ ingress_id: 'ing-stub', status: 'rejected', reason_code: 'INGRESS_SIGNATURE_INVALID', message: 'the signature does not verify' }));
        } else {
          msg.respond(JSON.stringify({ ingress_id: 'ing-stub', status: seen.length > 1 ? 'duplicate' : 'accepted', action_request_id: ids.actionRequest, task_id: ids.task }));
        }
      },
    });
    await rig.nc.flush();
    const jws = await signedRequest(ids, agentKey);
    try {
      // when an agent posts its signed request as text
      const accepted = await http(app, '/v1/actions', { method: 'POST', body: jws, headers: { 'content-type': 'application/jose' } });
      // then ingress got the JWS keyed by the request's id, and its answer comes back as 202
      expect(accepted).toEqual({ status: 202, contentType: expect.stringMatching(/^application\/json/), body: { ingress_id: 'ing-stub', status: 'accepted', action_request_id: ids.actionRequest, task_id: ids.task } });
      expect(seen[0]).toEqual({ jws, idempotency_key: ids.actionRequest });
      // and a resubmission that ingress recognises is a 200 duplicate
      expect(await http(app, '/v1/actions', { method: 'POST', body: jws, headers: { 'content-type': 'text/plain' } })).toMatchObject({ status: 200, body: { status: 'duplicate' } });

      // and refusals keep ingress's codes: a rejection in the reply, an error reply
      const refused = await http(app, '/v1/actions', {
        method: 'POST',
        body: JSON.stringify({ jws }),
        headers: { 'content-type': 'application/json', 'idempotency-key': 'reject-me' },
      });
      expect(refused).toMatchObject({ status: 401, body: { code: 'INGRESS_SIGNATURE_INVALID' } });
      const broken = await http(app, '/v1/actions', { method: 'POST', body: jws, headers: { 'content-type': 'text/plain', 'idempotency-key': 'broken-me' } });
      expect(broken).toMatchObject({ status: 400, body: { code: 'CONTRACT_INVALID' } });
      // and a body with nothing to forward never reaches ingress
      const forwarded = seen.length;
      expect(await http(app, '/v1/actions', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).toMatchObject({
        status: 400,
        body: { code: 'PROJECTION_REQUEST_INVALID' },
      });
      expect(seen).toHaveLength(forwarded);
    } finally {
      ingress.unsubscribe();
    }
    // and with ingress gone, the caller learns it with a code
    await rig.nc.flush();
    expect(await http(app, '/v1/actions', { method: 'POST', body: jws, headers: { 'content-type': 'text/plain' } })).toMatchObject({
      status: 503,
      body: { code: 'PROJECTION_UPSTREAM_UNAVAILABLE' },
    });
  });

  it('forwards an approval resolution to the approval service, after checking the URL agrees with the signed decision', async () => {
    const seen: Array<Record<string, unknown>> = [];
    const approval = rig.nc.subscribe(rig.config.subjects.resolveApproval, {
      callback: (_error, msg: Msg) => {
        const command = JSON.parse(decoder.decode(msg.data)) as Record<string, unknown>;
        seen.push(command);
        msg.respond(JSON.stringify({ approval_id: command['approval_id'], task_id: command['task_id'], status: 'granted', resolved_by: 'director-1', event_id: 'evt-1' }));
      },
    });
    await rig.nc.flush();
    const director = await generateEd25519Key({ kid: 'director-k1' });
    const resolution = await signJws(JSON.stringify({ approval_id: 'approval-9', decision: 'grant', resolved_by: 'director-1', resolved_at: new Date().toISOString() }), director);
    try {
      const granted = await http(app, '/v1/approvals/approval-9/grant', {
        method: 'POST',
        body: JSON.stringify({ task_id: 'task-9', resolution_jws: resolution }),
        headers: { 'content-type': 'application/json' },
      });
      expect(granted).toEqual({ status: 200, contentType: expect.stringMatching(/^application\/json/), body: { approval_id: 'approval-9', task_id: 'task-9', status: 'granted', resolved_by: 'director-1', event_id: 'evt-1' } });
      expect(seen).toEqual([{ approval_id: 'approval-9', task_id: 'task-9', resolution_jws: resolution }]);
      const contradicted = await http(app, '/v1/approvals/approval-9/deny', {
        method: 'POST',
        body: JSON.stringify({ task_id: 'task-9', resolution_jws: resolution }),
        headers: { 'content-type': 'application/json' },
      });
      expect(contradicted).toMatchObject({ status: 400, body: { code: 'PROJECTION_DECISION_MISMATCH' } });
      expect(seen).toHaveLength(1);
    } finally {
      approval.unsubscribe();
    }
  });

  it('a rebuild from the log alone yields identical views (invariant 2)', async () => {
    const report = await rebuildIntoFreshSchema(rig.config);
    expect(report.lastSeq).toBe(await rig.checkpoint());
    expect(report.views.filter((v) => !v.match)).toEqual([]);
    expect(report.identical).toBe(true);
    expect(report.views.find((v) => v.view === 'task_events')?.live.rows).toBeGreaterThan(19);
  });
});

describe('projection service: stopped half way, restarted, redelivered', () => {
  let rig: Rig;

  beforeAll(async () => {
    rig = await createRig();
  });

  afterAll(async () => {
    await rig?.dispose();
  });

  it('resumes after a restart with no duplicate rows and the same final state, and skips a full redelivery', async () => {
    const ids = storyIds(uniqueName('restart'));
    const story = happyPath(ids, fakeJws(actionRequest(ids)));

    // given the service stopped after folding the first half of the path
    const first = await rig.start();
    const half = await rig.append(story.slice(0, 10));
    await rig.caughtUp(half);
    await first.close();

    // when the rest of the path is appended while it is down, and it starts again
    const last = await rig.append(story.slice(10));
    const second = await rig.start();
    await rig.caughtUp(last);

    // then the final state is the whole path's, each event stored once
    expect((await http(second, `/v1/actions/${ids.actionRequest}`)).body).toMatchObject({ status: 'succeeded', receipt_id: ids.receipt });
    expect((await rig.db.query(`SELECT count(*)::int AS n FROM ${rig.table('task_events')}`)).rows).toEqual([{ n: 19 }]);
    expect((await rig.db.query(`SELECT count(*)::int AS n FROM ${rig.table('actions')}`)).rows).toEqual([{ n: 1 }]);
    expect((await rebuildIntoFreshSchema(rig.config)).identical).toBe(true);
    await second.close();

    // when its durable consumer is lost and a new one redelivers the whole log from the start
    const durable = durableName(SERVICE_NAME, rig.config.subjects.projectorPattern);
    await rig.jsm.consumers.delete(rig.config.streams.events, durable);
    const before = await tableChecksums(rig);
    const updates = collect(rig, `${rig.root}.proj.>`);
    await rig.start();
    await waitFor(
      async () => {
        const info = await rig.jsm.consumers.info(rig.config.streams.events, durable).catch(() => undefined);
        return info !== undefined && info.ack_floor.stream_seq >= last && info.num_ack_pending === 0 ? true : undefined;
      },
      { what: 'the redelivered log acknowledged' },
    );
    // then every event is skipped at the checkpoint: no row changes, nothing published
    await rig.nc.flush();
    expect(await tableChecksums(rig)).toEqual(before);
    expect(await rig.checkpoint()).toBe(last);
    expect(updates.messages).toEqual([]);
    updates.sub.unsubscribe();
  });
});
