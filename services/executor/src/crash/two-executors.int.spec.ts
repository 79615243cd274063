import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { ExecutionCompleted, type RunAction } from '@writ/contracts';
import { waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useIdFor } from '../application/event-drafts.js';
import { ExecutorRig, newIds, request, runAction, type Grant, type Ids } from '../../test/executor-rig.js';

/**
 * Two executor instances on the same root, streams, durable and cells root (in-process, as
 * two replicas of a deploy), receiving the same work: every RunAction is published twice
 * (a duplicate re-publish outside NATS dedupe: another Nats-Msg-Id), and each grant gets more
 * distinct uses than its max_uses. The claim through the log is the only guard: each grant is
 * used at most max_uses times, each claimed use completes exactly once, the uses beyond are
 * refused GRANT_EXHAUSTED, and no side effect runs twice (marker files, one line per run).
 */

const rig = new ExecutorRig();

beforeAll(async () => {
  await rig.start('executor-two', {
    cellsRoots: ['writ-executor-two-'],
    env: { WRIT_CELL_POOL_SIZE: '0', WRIT_EXECUTOR_CONCURRENCY: '4' },
    executorIds: ['executor-two-a', 'executor-two-b'],
    approval: { kid: 'approval-k1', displayName: 'approval (test)' },
  });
}, 300_000);

afterAll(() => rig.close(), 60_000);

const marker = (taskId: string, n: number) => rig.hostFile(taskId, `markers/${n}`);

interface Use {
  readonly n: number;
  readonly command: RunAction;
  readonly useId: string;
}

/** `uses` distinct uses of one grant (max_uses `maxUses`): each appends a line to its own marker. */
async function grantWithUses(maxUses: number, uses: number): Promise<{ ids: Ids; grant: Grant; maxUses: number; uses: Use[] }> {
  const ids = newIds('two');
  const grant = await rig.mint({ ids, maxUses });
  const list = Array.from({ length: uses }, (_, n) => {
    const command = runAction(ids, grant, request(ids, { params: { argv: ['sh', '-c', `mkdir -p markers && echo x >> markers/${n}`] }, target_resources: [`markers/${n}`] }));
    return { n, command, useId: useIdFor(command) };
  });
  return { ids, grant, maxUses, uses: list };
}

describe('two executors receiving the same work', () => {
  it('given grants with more uses than max_uses, each RunAction published twice to two competing instances, then each grant is used at most max_uses times, each claimed use completes once and runs once, the rest are refused GRANT_EXHAUSTED', async () => {
    const grants = [await grantWithUses(1, 3), await grantWithUses(2, 4), await grantWithUses(3, 5)];
    const all = grants.flatMap((g) => g.uses);

    // when: every command twice, interleaved across grants, under distinct message ids (no bus dedupe)
    let last = 0;
    for (const round of [0, 1]) {
      for (const use of all) last = await rig.publishRunAction(use.command, `${use.useId}-${round}`);
    }

    // then: every use ends (claimed and completed, or refused), and the durable has settled every copy
    await waitFor(
      async () => {
        for (const g of grants) {
          const log = await rig.events(g.ids.task_id);
          const settled = new Set(log.filter((e) => e.event_type === 'execution.completed' || e.event_type === 'grant.refused').map((e) => e.event_id.replace(/-(completed|refused)$/, '')));
          if (!g.uses.every((use) => settled.has(use.useId))) return undefined;
        }
        return true;
      },
      { what: 'every use completed or refused', timeoutMs: 240_000, intervalMs: 200 },
    );
    await rig.waitSettled(last, { what: 'the shared durable to settle every copy', timeoutMs: 120_000, intervalMs: 100 });

    for (const g of grants) {
      const log = await rig.events(g.ids.task_id);
      const claims = log.filter((e) => e.event_type === 'grant.use_claimed' && e.entity_id === g.grant.grant_id);
      const completions = log.filter((e) => e.event_type === 'execution.completed');
      const refusals = log.filter((e) => e.event_type === 'grant.refused');
      // at most max_uses (and, with more distinct uses than that, exactly), numbered 1..max_uses once each
      expect(claims).toHaveLength(g.maxUses);
      expect(claims.map((e) => (e.payload as { use_no: number }).use_no).sort()).toEqual(Array.from({ length: g.maxUses }, (_, i) => i + 1));
      // each claimed use completed exactly once, having run
      const claimedUses = claims.map((e) => e.event_id.replace(/-claimed$/, ''));
      expect(new Set(claimedUses).size).toBe(g.maxUses);
      expect(completions).toHaveLength(g.maxUses);
      for (const useId of claimedUses) {
        const mine = completions.filter((e) => e.event_id === `${useId}-completed`);
        expect(mine).toHaveLength(1);
        const done = ExecutionCompleted.parse(mine[0]?.payload);
        expect(done, JSON.stringify(done.error)).toMatchObject({ outcome: 'completed', exit_code: 0 });
      }
      // the other uses were refused, once each, and never ran
      expect(refusals).toHaveLength(g.uses.length - g.maxUses);
      for (const refusal of refusals) expect(refusal.payload).toMatchObject({ code: 'GRANT_EXHAUSTED' });
      for (const use of g.uses) {
        const ran = claimedUses.includes(use.useId);
        if (ran) expect(await readFile(marker(g.ids.task_id, use.n), 'utf8')).toBe('x\n');
        else expect(existsSync(marker(g.ids.task_id, use.n))).toBe(false);
      }
    }
  }, 400_000);
});
