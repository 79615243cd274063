import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@writ/telemetry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP, consoleHandler, loadConsoleBundle, type ConsoleMiddleware } from './console-static.js';

/** What the middleware answered: status, headers and body, or that it passed the request on. */
interface Answer {
  status?: number;
  headers: Record<string, string>;
  body?: string;
  redirect?: string;
  passed: boolean;
}

function ask(handler: ConsoleMiddleware, requestPath: string, method = 'GET'): Answer {
  const answer: Answer = { headers: {}, passed: false };
  const res = {
    status(code: number) {
      answer.status = code;
      return res;
    },
    set(headers: Record<string, string>) {
      Object.assign(answer.headers, headers);
      return res;
    },
    send(body: Buffer | string) {
      answer.body = body.toString();
    },
    redirect(status: number, url: string) {
      answer.status = status;
      answer.redirect = url;
    },
  };
  handler({ method, path: requestPath, originalUrl: requestPath }, res, () => {
    answer.passed = true;
  });
  return answer;
}

const logger = createLogger('projection-test', { level: 'silent' });
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'writ-console-'));
  await mkdir(path.join(dir, 'assets'));
  await writeFile(path.join(dir, 'index.html'), '<script type="module" src="assets/console-ABC.js"></script>');
  await writeFile(path.join(dir, 'assets', 'console-ABC.js'), 'export {}');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the console static files', () => {
  it('given a built bundle, when the page and an asset are asked, then both carry the strict CSP; the asset is cached for good and the page revalidated', async () => {
    // given
    const handler = (await consoleHandler({ enabled: true, dir }, { audience: 'writ-http:writ' }, logger))!;
    // when
    const page = ask(handler, '/console/');
    const asset = ask(handler, '/console/assets/console-ABC.js');
    // then
    expect(page).toMatchObject({ status: 200, body: expect.stringContaining('console-ABC.js') });
    expect(page.headers).toMatchObject({ 'content-security-policy': CONSOLE_CSP, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' });
    expect(CONSOLE_CSP).not.toMatch(/unsafe-(inline|eval)/);
    expect(asset).toMatchObject({ status: 200, body: 'export {}' });
    expect(asset.headers).toMatchObject({ 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=31536000, immutable' });
  });

  it('given the bundle, when other paths are asked, then the API passes through, /console redirects, settings name the audience, and no path escapes the assets', async () => {
    const handler = (await consoleHandler({ enabled: true, dir }, { audience: 'writ-http:e2e' }, logger))!;
    expect(ask(handler, '/v1/tasks/tsk-1').passed).toBe(true);
    expect(ask(handler, '/console/', 'POST').passed).toBe(true);
    expect(ask(handler, '/console')).toMatchObject({ status: 301, redirect: '/console/' });
    expect(ask(handler, '/console/tasks')).toMatchObject({ status: 302, redirect: '/console/' });
    expect(JSON.parse(ask(handler, '/console/settings.json').body ?? '')).toEqual({ audience: 'writ-http:e2e' });
    for (const escape of ['/console/assets/../index.html', '/console/assets/..%2F..%2Fpackage.json', '/console/assets/missing.js']) {
      expect(ask(handler, escape)).toMatchObject({ status: 404, body: expect.stringContaining('CONSOLE_ASSET_NOT_FOUND') });
    }
  });

  it('given no bundle, when /console/ is asked, then 404 CONSOLE_NOT_BUILT says how to build it, and the API still passes through', async () => {
    const handler = (await consoleHandler({ enabled: true, dir: path.join(dir, 'nowhere') }, { audience: 'a' }, logger))!;
    expect(ask(handler, '/console/')).toMatchObject({ status: 404, body: expect.stringContaining('CONSOLE_NOT_BUILT') });
    expect(ask(handler, '/readyz').passed).toBe(true);
    expect((await loadConsoleBundle(undefined)).missing).toContain('@writ/console');
  });

  it('given WRIT_CONSOLE=off, when the handler is made, then there is none', async () => {
    expect(await consoleHandler({ enabled: false, dir }, { audience: 'a' }, logger)).toBeUndefined();
  });
});
