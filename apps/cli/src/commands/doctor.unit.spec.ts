import { describe, expect, it } from 'vitest';
import { releaseCheck } from './doctor.js';

describe('writ doctor: release check', () => {
  it('given every answering service on one version and commit, then the check passes and names it', () => {
    const check = releaseCheck({
      ingress: { url: 'http://127.0.0.1:8081', version: '0.1.0', commit: 'abc1234' },
      policy: { url: 'http://127.0.0.1:8083', version: '0.1.0', commit: 'abc1234' },
      receipt: { url: 'http://127.0.0.1:8086' },
    });

    expect(check).toMatchObject({ check: 'release', ok: true, detail: 'every answering service runs 0.1.0 (abc1234)' });
  });

  it('given a half-finished upgrade, when services report two commits, then the check fails, names who runs what and how to finish', () => {
    const check = releaseCheck({
      ingress: { url: 'http://127.0.0.1:8081', version: '0.1.0', commit: 'abc1234' },
      policy: { url: 'http://127.0.0.1:8083', version: '0.1.0', commit: 'def5678' },
      approval: { url: 'http://127.0.0.1:8084', version: '0.1.0', commit: 'abc1234' },
    });

    expect(check.ok).toBe(false);
    expect(check.detail).toBe('services run different releases: 0.1.0 (abc1234): ingress, approval; 0.1.0 (def5678): policy');
    expect(check.fix).toMatch(/restart every service from one build/);
  });
});
