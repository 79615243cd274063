import { describe, expect, it } from 'vitest';
import { grantIssued, grantUseClaimed, happyPath, storyIds, toProjectedEvents, withPayload } from '../../../test/governed-path.fixture.js';
import { foldStory } from '../../../test/memory-store.js';

const ids = storyIds('g1');
const untilGrant = () => happyPath(ids).slice(0, 12);

describe('grants view', () => {
  it('records the claims of an issued grant, never its JWS', async () => {
    const store = await foldStory(toProjectedEvents(untilGrant()));
    const row = store.row('grants', ids.grant);
    expect(row).toMatchObject({
      grant_id: ids.grant,
      task_id: ids.task,
      attempt_id: ids.attempt,
      action_class: 'write_local',
      issued_to: ids.executor,
      issued_by: 'policy',
      issued_at: '2030-01-01T00:00:06.000Z',
      expires_at: '2030-01-01T00:05:06.000Z',
      max_uses: 1,
      uses: 0,
      status: 'active',
    });
    expect(JSON.stringify(row)).not.toContain('jws');
  });

  it('counts claimed uses by use number and reports an exhausted grant', async () => {
    const store = await foldStory(toProjectedEvents([...untilGrant(), grantUseClaimed(ids, 8), grantUseClaimed(ids, 9)]));
    expect(store.row('grants', ids.grant)).toMatchObject({ uses: 1, status: 'exhausted' });
  });

  it('given its only use released (proven never started), then the grant is active again; the next use exhausts it (issue 13)', async () => {
    const claimed = grantUseClaimed(ids, 8);
    const release = withPayload(grantUseClaimed(ids, 9), { use_id: 'use-1', use_no: 1, reason_code: 'CELL_USE_FENCED', reason: 'never started', at: '2030-01-01T00:00:09Z' });
    const released = { ...release, draft: { ...release.draft, event_type: 'grant.use_released' } };
    const afterRelease = await foldStory(toProjectedEvents([...untilGrant(), claimed, released]));
    expect(afterRelease.row('grants', ids.grant)).toMatchObject({ uses: 1, status: 'active' });
    const afterSecond = await foldStory(toProjectedEvents([...untilGrant(), claimed, released, grantUseClaimed(ids, 10, 2)]));
    expect(afterSecond.row('grants', ids.grant)).toMatchObject({ uses: 2, status: 'exhausted' });
  });

  it('stays active while uses remain', async () => {
    const story = [...happyPath(ids).slice(0, 11), grantIssued(ids, 6, 3), grantUseClaimed(ids, 8, 1), grantUseClaimed(ids, 9, 2)];
    const store = await foldStory(toProjectedEvents(story));
    expect(store.row('grants', ids.grant)).toMatchObject({ uses: 2, max_uses: 3, status: 'active' });
  });

  it('finds the grant of a use that names none through its attempt, and a revocation by the entity id', async () => {
    const use = grantUseClaimed(ids, 8);
    const anonymous = { ...use, draft: { ...use.draft, entity_type: 'attempt' as const, entity_id: ids.attempt } };
    const revoke = withPayload(grantUseClaimed(ids, 9), { revoked_by: 'director-1', reason: 'stop', at: '2030-01-01T00:00:09Z' });
    const revoked = { ...revoke, draft: { ...revoke.draft, event_type: 'grant.revoked' } };
    const afterUse = await foldStory(toProjectedEvents([...happyPath(ids).slice(0, 11), grantIssued(ids, 6, 2), anonymous]));
    expect(afterUse.row('grants', ids.grant)).toMatchObject({ uses: 1, status: 'active' });
    const afterRevoke = await foldStory(toProjectedEvents([...happyPath(ids).slice(0, 11), grantIssued(ids, 6, 2), anonymous, revoked]));
    expect(afterRevoke.row('grants', ids.grant)?.status).toBe('revoked');
  });
});
