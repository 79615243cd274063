import { ProjectionView } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { VIEW_NAMES, VIEWS } from './index.js';

describe('the read models', () => {
  it('are exactly the views the contracts name (writ projections rebuild --view, GET /v1/projections/status)', () => {
    expect([...VIEW_NAMES].sort()).toEqual([...ProjectionView.options].sort());
  });

  it('each names itself and a primary key', () => {
    for (const name of VIEW_NAMES) {
      expect(VIEWS[name].name).toBe(name);
      expect(VIEWS[name].primaryKey.length).toBeGreaterThan(0);
    }
  });
});
