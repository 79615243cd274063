import { describe, expect, it } from 'vitest';
import { grantIssued, happyPath, storyIds, toProjectedEvents, withPayload } from '../../../test/governed-path.fixture.js';
import { foldStory } from '../../../test/memory-store.js';

const ids = storyIds('te1');

describe('task_events view (the timeline)', () => {
  it('holds every event of the task stream, in task_seq order, and nothing of the ingress stream', async () => {
    const store = await foldStory(toProjectedEvents(happyPath(ids)));
    const rows = store.rows('task_events').sort((a, b) => a.task_seq - b.task_seq);
    expect(rows.map((r) => r.task_seq)).toEqual(Array.from({ length: 19 }, (_, i) => i + 1));
    expect(rows[0]).toMatchObject({ event_type: 'task.created', stream_seq: 2, actor_id: 'ingress', occurred_at: '2030-01-01T00:00:02.000Z' });
    expect(rows.some((r) => r.event_type.startsWith('ingress.'))).toBe(false);
  });

  it('redacts secret-shaped values: a grant JWS carried in grant.issued never reaches the timeline', async () => {
    const jws = 'eyJhbGciOiJFZERTQSJ9.eyJqdGkiOiJncmFudC0xIn0.c2lnbmF0dXJl';
    const issued = grantIssued(ids, 6);
    const story = happyPath(ids).map((e) => (e.draft.event_type === 'grant.issued' ? withPayload(issued, { ...issued.draft.payload, jws, token: 'abc' }) : e));
    const store = await foldStory(toProjectedEvents(story));
    const row = store.rows('task_events').find((r) => r.event_type === 'grant.issued');
    expect(row?.payload).toMatchObject({ jws: '[WITHHELD]', token: '[REDACTED]', claims: { jti: ids.grant } });
    expect(JSON.stringify(row)).not.toContain(jws);
  });
});
