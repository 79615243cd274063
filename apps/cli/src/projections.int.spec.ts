import { headers as natsHeaders, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { ProjectionRebuildJob, type ProjectionView } from '@writ/contracts';
import { NATS_URL, connectTestNats, uniqueName } from '@writ/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type FakeApi } from '../test/projection-api.fixture.js';
import { run, type CliIo } from './main.js';
import { operatorEnv } from '../test/service-process.fixture.js';

// `writ projections rebuild` and `status` against the real NATS on a test-unique
// subject root. A stand-in plays the projection service on
// `<root>.qry.projection.rebuild` and `.rebuild-status` (the CLI never imports a
// service), answering as it does: the job as it starts, then as it progresses.

const NOW = new Date('2031-05-01T12:30:00.000Z');
const root = uniqueName('t');
let nc: NatsConnection;
const subscriptions: Subscription[] = [];
const servers: FakeApi[] = [];

async function writ(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env: { ...operatorEnv(), WRIT_NATS_URL: NATS_URL, WRIT_SUBJECT_ROOT: root }, cwd: '/', stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), now: () => NOW };
  const code = await run(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

const checksum = (c: string) => c.repeat(32);

function job(changes: Partial<ProjectionRebuildJob>): ProjectionRebuildJob {
  return ProjectionRebuildJob.parse({
    job_id: 'rebuild-1',
    state: 'running',
    phase: 'preparing',
    views: ['tasks', 'actions'],
    keep_old: false,
    force: false,
    target_seq: 0,
    replayed: 0,
    skipped: 0,
    events_per_second: 0,
    comparisons: [],
    swapped_at_seq: null,
    old_schema: null,
    error: null,
    started_at: NOW.toISOString(),
    updated_at: NOW.toISOString(),
    finished_at: null,
    ...changes,
  });
}

const compared = (view: ProjectionView, match: boolean) => ({
  view,
  live: { rows: 3, checksum: checksum('a') },
  rebuilt: { rows: 3, checksum: checksum(match ? 'a' : 'b') },
  match,
});

/** Plays the projection service: `start` answers the rebuild request, `progress` the successive status polls (the last repeats). */
function standIn(start: (request: Record<string, unknown>) => Record<string, unknown>, progress: ProjectionRebuildJob[]) {
  const seen: { starts: Record<string, unknown>[]; polls: Record<string, unknown>[] } = { starts: [], polls: [] };
  const answer = (subject: string, handle: (request: Record<string, unknown>) => Record<string, unknown>) => {
    const sub = nc.subscribe(subject);
    subscriptions.push(sub);
    void (async () => {
      for await (const msg of sub as AsyncIterable<Msg>) {
        const reply = handle(msg.json<Record<string, unknown>>());
        if (typeof reply['code'] === 'string') {
          const headers = natsHeaders();
          headers.set('Writ-Error-Code', reply['code']);
          msg.respond(JSON.stringify(reply), { headers });
        } else {
          msg.respond(JSON.stringify(reply));
        }
      }
    })();
  };
  answer(`${root}.qry.projection.rebuild`, (request) => {
    seen.starts.push(request);
    return start(request);
  });
  answer(`${root}.qry.projection.rebuild-status`, (request) => {
    seen.polls.push(request);
    return (progress[Math.min(seen.polls.length - 1, progress.length - 1)] ?? job({})) as unknown as Record<string, unknown>;
  });
  return seen;
}

beforeAll(async () => {
  nc = await connectTestNats('cli-projections');
});

afterEach(() => {
  for (const sub of subscriptions.splice(0)) sub.unsubscribe();
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await nc.close();
});

describe('writ projections rebuild', () => {
  it('starts a rebuild of the views asked for, shows its progress on stderr, and prints live vs rebuilt per view once swapped', async () => {
    // given a projection service that replays, compares and swaps
    const service = standIn(
      () => job({}) as unknown as Record<string, unknown>,
      [
        job({ phase: 'replaying', target_seq: 10_000, replayed: 5_000, events_per_second: 2_500 }),
        job({ phase: 'comparing', target_seq: 10_000, replayed: 10_000, events_per_second: 2_500 }),
        job({ state: 'swapped', phase: 'done', target_seq: 10_000, replayed: 10_003, events_per_second: 2_400, comparisons: [compared('tasks', true), compared('actions', true)], swapped_at_seq: 10_003, old_schema: 'writ_old_20310501123000' }),
      ],
    );
    await nc.flush();
    // when an operator rebuilds two views, keeping the old tables
    const result = await writ(['projections', 'rebuild', '--view', 'tasks', '--view', 'actions', '--keep-old']);
    // then the request named them, the progress went to stderr, the proof and the swap to stdout
    expect(result.code, result.stderr).toBe(0);
    expect(service.starts).toEqual([{ views: ['tasks', 'actions'], keep_old: true }]);
    expect(service.polls.every((poll) => poll['job_id'] === 'rebuild-1')).toBe(true);
    expect(result.stderr).toContain('rebuild rebuild-1 started (tasks, actions); if interrupted: writ projections rebuild --follow rebuild-1');
    expect(result.stderr).toContain('replaying 5000/10000 events (2500 events/s)');
    expect(result.stderr).toContain('swapped: 10003 events replayed (2400 events/s)');
    expect(result.stdout.split('\n')).toEqual([
      'views at stream seq 10000, live vs rebuilt:',
      expect.stringMatching(/^VIEW\s+LIVE_ROWS\s+REBUILT_ROWS\s+LIVE_CHECKSUM\s+REBUILT_CHECKSUM\s+MATCH$/),
      expect.stringMatching(/^tasks\s+3\s+3\s+a{32}\s+a{32}\s+yes$/),
      expect.stringMatching(/^actions\s+3\s+3\s+a{32}\s+a{32}\s+yes$/),
      'swapped in at stream seq 10003; the replaced tables are kept in writ_old_20310501123000',
    ]);
  });

  it('exits 1 with PROJECTION_REBUILD_MISMATCH, naming the view that differs, when the service swapped nothing', async () => {
    standIn(
      () => job({ views: ['tasks', 'actions'] }) as unknown as Record<string, unknown>,
      [
        job({
          state: 'mismatch',
          phase: 'done',
          target_seq: 40,
          replayed: 40,
          comparisons: [compared('tasks', true), compared('actions', false)],
          error: { code: 'PROJECTION_REBUILD_MISMATCH', message: 'rebuilt actions differs from the live rows at stream seq 40; nothing was swapped (--force swaps anyway)' },
        }),
      ],
    );
    await nc.flush();
    const result = await writ(['projections', 'rebuild', '--json']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error PROJECTION_REBUILD_MISMATCH: rebuilt actions differs from the live rows at stream seq 40');
    const printed = ProjectionRebuildJob.parse(JSON.parse(result.stdout));
    expect(printed.comparisons.filter((c) => !c.match).map((c) => c.view)).toEqual(['actions']);
  });

  it("keeps the service's refusal code, follows a job by id, and refuses what it cannot ask for", async () => {
    standIn(() => ({ code: 'PROJECTION_REBUILD_RUNNING', message: 'a rebuild is running already (job rebuild-0)' }), [job({ state: 'swapped', phase: 'done', swapped_at_seq: 3, replayed: 3 })]);
    await nc.flush();
    expect(await writ(['projections', 'rebuild'])).toMatchObject({ code: 1, stderr: expect.stringContaining('error PROJECTION_REBUILD_RUNNING: a rebuild is running already (job rebuild-0)') });
    const followed = await writ(['projections', 'rebuild', '--follow', 'rebuild-1']);
    expect(followed.code, followed.stderr).toBe(0);
    expect(followed.stdout).toContain('swapped in at stream seq 3; the replaced tables were dropped');
    expect(await writ(['projections', 'rebuild', '--view', 'nope'])).toMatchObject({ code: 2, stderr: expect.stringContaining('error CLI_USAGE') });
    expect(await writ(['projections', 'rebuild', '--follow', 'rebuild-1', '--force'])).toMatchObject({ code: 2, stderr: expect.stringContaining('error CLI_USAGE') });
  });

  it('says so when no projection service answers', async () => {
    expect(await writ(['projections', 'rebuild'])).toMatchObject({ code: 1, stderr: expect.stringContaining('error CLI_SERVICE_UNAVAILABLE') });
  });
});

describe('writ projections status', () => {
  it('prints the checkpoint, the lag, rows and checksum per view, the last rebuild and what was quarantined, asking for checksums unless told not to', async () => {
    const server = await startApi({
      'GET /v1/projections/status': (request) => ({
        json: {
          checkpoint: 120,
          last_stream_seq: 125,
          events_behind: 5,
          lag_ms: 850,
          views: [
            { view: 'actions', rows: 7, checksum: request.query.get('checksums') === 'true' ? checksum('c') : null },
            { view: 'tasks', rows: 3, checksum: request.query.get('checksums') === 'true' ? checksum('d') : null },
          ],
          last_rebuild: job({ state: 'swapped', phase: 'done', swapped_at_seq: 118 }),
          quarantined: {
            total: 2,
            by_reason: { QUARANTINE_NOT_JSON: 1, QUARANTINE_WRONG_SUBJECT: 1 },
            latest: [
              { stream: 'WRIT_EVENTS', subject: 'writ.evt.task.t-1', stream_seq: 97, reason: 'QUARANTINE_NOT_JSON', sha256: 'e'.repeat(64), bytes: 4, detail: 'the bytes are not UTF-8 JSON' },
              { stream: 'WRIT_EVENTS', subject: 'writ.evt.junk.x', stream_seq: 12, reason: 'QUARANTINE_WRONG_SUBJECT', sha256: 'f'.repeat(64), bytes: 9, detail: 'not an aggregate' },
            ],
          },
        },
      }),
    });
    servers.push(server);
    const result = await writ(['projections', 'status', '--url', server.url]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split('\n')).toEqual([
      'checkpoint 120 of 125: 5 events behind, the oldest waiting 850 ms',
      expect.stringMatching(/^VIEW\s+ROWS\s+CHECKSUM$/),
      expect.stringMatching(/^actions\s+7\s+c{32}$/),
      expect.stringMatching(/^tasks\s+3\s+d{32}$/),
      `last rebuild: rebuild-1 swapped (2 views, started ${NOW.toISOString()}, swapped in at stream seq 118)`,
      'quarantined: 2 message(s) of the log passed over as not events (1 QUARANTINE_NOT_JSON, 1 QUARANTINE_WRONG_SUBJECT)',
      `  stream seq 97  QUARANTINE_NOT_JSON  writ.evt.task.t-1  4 bytes  sha256 ${'e'.repeat(16)}…`,
      `  stream seq 12  QUARANTINE_WRONG_SUBJECT  writ.evt.junk.x  9 bytes  sha256 ${'f'.repeat(16)}…`,
    ]);
    const cheap = await writ(['projections', 'status', '--no-checksums', '--json', '--url', server.url]);
    expect(JSON.parse(cheap.stdout)).toMatchObject({ views: [{ view: 'actions', checksum: null }, { view: 'tasks', checksum: null }] });
    expect(server.seen.map((r) => r.query.get('checksums'))).toEqual(['true', 'false']);
  });
});
