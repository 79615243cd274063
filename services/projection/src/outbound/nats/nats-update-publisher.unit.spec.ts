import { PROJECTION_HEADERS } from '@writ/contracts/projection-rows';
import { describe, expect, it } from 'vitest';
import { projectionHeaders } from './nats-update-publisher.js';

describe('the headers of a published row', () => {
  it('given a change, then it carries the message id, view, schema version, row version, previous version and the version\'s row count', () => {
    // when
    const headers = projectionHeaders({ view: 'artifacts', id: 'art-1', row: {}, rowVersion: 19, prevVersion: 7, versionRows: 2 });
    // then
    expect(headers.get(PROJECTION_HEADERS.msgId)).toBe('artifacts.art-1.19');
    expect(headers.get(PROJECTION_HEADERS.view)).toBe('artifacts');
    expect(headers.get(PROJECTION_HEADERS.schemaVersion)).toBe('1');
    expect(headers.get(PROJECTION_HEADERS.rowVersion)).toBe('19');
    expect(headers.get(PROJECTION_HEADERS.prevVersion)).toBe('7');
    expect(headers.get(PROJECTION_HEADERS.versionRows)).toBe('2');
  });

  it('given the same change twice (a redelivery), then the message id is the same; another version of the row, then it differs', () => {
    const change = { view: 'tasks' as const, id: 't-1', row: {}, rowVersion: 3, prevVersion: 0, versionRows: 1 };
    expect(projectionHeaders(change).get(PROJECTION_HEADERS.msgId)).toBe(projectionHeaders({ ...change }).get(PROJECTION_HEADERS.msgId));
    expect(projectionHeaders({ ...change, rowVersion: 4 }).get(PROJECTION_HEADERS.msgId)).not.toBe(projectionHeaders(change).get(PROJECTION_HEADERS.msgId));
  });
});
