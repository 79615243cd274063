import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildInfo } from './build-info.js';

describe('buildInfo', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'writ-build-info-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('given a service started from its dist/main.js, when asked, then it names the package and version above the entry', async () => {
    await mkdir(join(root, 'services', 'policy', 'dist'), { recursive: true });
    await writeFile(join(root, 'package.json'), JSON.stringify({ name: 'writ', version: '9.9.9' }));
    await writeFile(join(root, 'services', 'policy', 'package.json'), JSON.stringify({ name: '@writ/policy', version: '0.4.2' }));

    expect(buildInfo(join(root, 'services', 'policy', 'dist', 'main.js'), { WRIT_COMMIT: 'abc1234' })).toEqual({ service: '@writ/policy', version: '0.4.2', commit: 'abc1234' });
  });

  it('given a package.json without a version on the way up, when asked, then the next one up that has both answers', async () => {
    await mkdir(join(root, 'app', 'dist'), { recursive: true });
    await writeFile(join(root, 'package.json'), JSON.stringify({ name: 'writ', version: '1.0.0' }));
    await writeFile(join(root, 'app', 'package.json'), '{ not json');

    expect(buildInfo(join(root, 'app', 'dist', 'main.js'), {})).toEqual({ service: 'writ', version: '1.0.0' });
  });

  it('given no entry script, when asked, then it reports unknown instead of failing', () => {
    expect(buildInfo(null, {})).toEqual({ service: 'unknown', version: 'unknown' });
  });
});
