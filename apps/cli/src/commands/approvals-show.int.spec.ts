import { afterAll, describe, expect, it } from 'vitest';
import { approvalRow, startApi, type FakeApi, type Routes } from '../../test/projection-api.fixture.js';
import { run, type CliIo } from '../main.js';

// `writ approvals show` against a real HTTP server playing the projection's API with canned JSON.

const servers: FakeApi[] = [];

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

async function api(routes: Routes): Promise<FakeApi> {
  const server = await startApi(routes);
  servers.push(server);
  return server;
}

async function writ(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env: {}, cwd: process.cwd(), stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), now: () => new Date('2031-05-01T12:30:00.000Z') };
  const code = await run(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

const PACKET_REF = `artifact:sha256:${'f'.repeat(64)}`;

function detail(overrides: Record<string, unknown> = {}) {
  return {
    ...approvalRow('apr-7', { status: 'invalidated', resolved_by: 'director-1', resolution_note: 'policy_drift' }),
    packet_ref: PACKET_REF,
    state_witness: { ref: `sha256:${'c'.repeat(64)}`, fingerprints: { 'src/build': 'dir:abc' }, observed_at: '2031-05-01T12:00:00.000Z' },
    policy_result_ref: 'policy_result:pr-7',
    resolution: {
      event_type: 'approval.invalidated',
      status: 'invalidated',
      resolved_by: 'director-1',
      resolved_at: '2031-05-01T12:10:00.000Z',
      note: 'the profile changed',
      cause: 'policy_drift',
      drifted_resources: [],
      witness_validated: null,
      event_id: 'evt-1',
      task_seq: 12,
    },
    decisions: [{ decision_id: 'dec-1', summary: 'approval apr-7 invalidated by director-1', decision_type: 'safety', decided_by: 'director-1', rationale: 'policy_drift: the profile changed' }],
    ...overrides,
  };
}

describe('writ approvals show <id>', () => {
  it('prints the packet, its artifact ref, the witness, the resolution with resolver and cause, and the decisions; --json prints the document', async () => {
    const document = detail();
    const server = await api({ 'GET /v1/approvals/apr-7': () => ({ json: document }) });
    const shown = await writ(['approvals', 'show', 'apr-7', '--url', server.url]);
    const json = await writ(['approvals', 'show', 'apr-7', '--url', server.url, '--json']);

    expect(shown.code).toBe(0);
    expect(shown.stdout.split('\n')[0]).toBe('approval apr-7: invalidated');
    expect(shown.stdout).toMatch(/^ {2}action: +rm -rf build\/$/m);
    expect(shown.stdout).toMatch(new RegExp(`^ {2}packet: +${PACKET_REF}$`, 'm'));
    expect(shown.stdout).toMatch(/^ {2}expires_at: +2031-05-01T13:00:00.000Z$/m);
    expect(shown.stdout).toMatch(/^ {4}src\/build {2}dir:abc$/m);
    expect(shown.stdout).toMatch(/^ {2}resolution: invalidated by director-1 at 2031-05-01T12:10:00.000Z$/m);
    expect(shown.stdout).toMatch(/^ {4}cause: +policy_drift$/m);
    expect(shown.stdout).toMatch(/^ {2}decision dec-1: approval apr-7 invalidated by director-1$/m);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(document);
    expect(server.seen.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/approvals/apr-7', 'GET /v1/approvals/apr-7']);
  });

  it('shows a pending approval as pending; the inbox listing still works beside the subcommand', async () => {
    const server = await api({
      'GET /v1/approvals/apr-8': () => ({ json: detail({ ...approvalRow('apr-8'), resolution: null, decisions: [], state_witness: null }) }),
      'GET /v1/approvals': () => ({ json: { items: [approvalRow('apr-8')], next_cursor: null } }),
    });
    const shown = await writ(['approvals', 'show', 'apr-8', '--url', server.url]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^ {2}resolution: - \(pending\)$/m);
    expect(shown.stdout).not.toMatch(/state witness/);
    const listed = await writ(['approvals', '--url', server.url]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/apr-8/);
  });

  it('exits 1 with the API code for an unknown approval, and refuses a malformed id before asking', async () => {
    const server = await api({ 'GET /v1/approvals/apr-x': () => ({ status: 404, json: { code: 'PROJECTION_NOT_FOUND', message: 'no approval apr-x in the projection' } }) });
    const unknown = await writ(['approvals', 'show', 'apr-x', '--url', server.url]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error PROJECTION_NOT_FOUND: /);
    const malformed = await writ(['approvals', 'show', 'not.an/id', '--url', server.url]);
    expect(malformed.code).not.toBe(0);
    expect(malformed.stderr).toMatch(/CONTRACT_INVALID/);
    expect(server.seen.map((r) => r.path)).toEqual(['/v1/approvals/apr-x']);
  });
});
