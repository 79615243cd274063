import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Logger } from '@writ/telemetry';

/**
 * The supervision console (apps/console) served at `/console/`: static files
 * the console's build wrote to `dist/public`, read once at start and held in
 * memory (a few hundred KiB), so no request touches the disk and no path a
 * client sends is ever joined onto a directory.
 *
 * Plain Express middleware ahead of Nest's router, outside the bearer-token
 * guard on purpose: the files are public (the console holds no secret; every
 * API call it makes carries the user's own token). Every answer carries a
 * strict Content-Security-Policy: scripts and styles from this origin only,
 * no inline script, no eval, connections to this origin only, no framing.
 */

export const CONSOLE_PATH = '/console';

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

/** Asset names the build writes (`console-<hash>.js`): nothing with a slash or `..` can match. */
const ASSET_NAME = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;

interface StaticFile {
  readonly body: Buffer;
  readonly contentType: string;
}

export interface ConsoleBundle {
  readonly dir: string;
  readonly index: Buffer;
  readonly assets: ReadonlyMap<string, StaticFile>;
}

/**
 * Where the built console is: `WRIT_CONSOLE_DIR` when set, else the
 * `dist/public` of the `@writ/console` package as Node resolves it from here
 * (the workspace link in a checkout and in the service image alike).
 */
export function consoleDir(configured: string | undefined): string | undefined {
  if (configured !== undefined) return path.resolve(configured);
  try {
    return path.join(path.dirname(createRequire(import.meta.url).resolve('@writ/console/package.json')), 'dist', 'public');
  } catch {
    return undefined;
  }
}

/** Reads `index.html` and every file of `assets/`; undefined (with the reason) when the bundle is not there. */
export async function loadConsoleBundle(dir: string | undefined): Promise<{ readonly bundle?: ConsoleBundle; readonly missing?: string }> {
  if (dir === undefined) return { missing: 'the @writ/console package is not installed next to this service' };
  let index: Buffer;
  try {
    index = await readFile(path.join(dir, 'index.html'));
  } catch {
    return { missing: `${path.join(dir, 'index.html')} does not exist` };
  }
  const assets = new Map<string, StaticFile>();
  const names = await readdir(path.join(dir, 'assets')).catch(() => [] as string[]);
  for (const name of names) {
    if (!ASSET_NAME.test(name)) continue;
    assets.set(name, { body: await readFile(path.join(dir, 'assets', name)), contentType: CONTENT_TYPES[path.extname(name)] ?? 'application/octet-stream' });
  }
  return { bundle: { dir, index, assets } };
}

interface Request {
  readonly method: string;
  readonly path: string;
  readonly originalUrl: string;
}

interface Response {
  status(code: number): Response;
  set(headers: Readonly<Record<string, string>>): Response;
  send(body: Buffer | string): void;
  redirect(status: number, url: string): void;
}

type Next = () => void;

function notFound(res: Response, code: string, message: string): void {
  res.status(404).set({ ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).send(JSON.stringify({ code, message }));
}

/** What the page needs to know about the deployment it is served by: the audience its bearer tokens must name. */
export interface ConsoleSettings {
  /** `writ-http:<subject root>` (`httpAudience`). */
  readonly audience: string;
}

/**
 * The middleware: `/console` → `/console/`; `/console/` → the page, never
 * cached (it names the current hashed assets); `/console/settings.json` → the
 * deployment's `ConsoleSettings` (public: an audience is no secret);
 * `/console/assets/<name>` → that file, cached for a year (its name changes
 * with its content); any other path under `/console/` → `/console/` (the
 * console routes with `#/…`).
 */
export function consoleMiddleware(bundle: ConsoleBundle, settings: ConsoleSettings): (req: Request, res: Response, next: Next) => void {
  const settingsBody = JSON.stringify(settings);
  return (req, res, next) => {
    if (req.path !== CONSOLE_PATH && !req.path.startsWith(`${CONSOLE_PATH}/`)) return next();
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    if (req.path === CONSOLE_PATH) return res.redirect(301, `${CONSOLE_PATH}/`);
    const rest = req.path.slice(CONSOLE_PATH.length + 1);
    if (rest === 'settings.json') {
      res.status(200).set({ ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache' }).send(settingsBody);
      return;
    }
    if (rest !== '' && !rest.startsWith('assets/')) return res.redirect(302, `${CONSOLE_PATH}/`);
    if (rest.startsWith('assets/')) {
      const name = rest.slice('assets/'.length);
      const file = ASSET_NAME.test(name) ? bundle.assets.get(name) : undefined;
      if (file === undefined) return notFound(res, 'CONSOLE_ASSET_NOT_FOUND', `no console asset ${name}: reload the console`);
      res.status(200).set({ ...SECURITY_HEADERS, 'content-type': file.contentType, 'cache-control': 'public, max-age=31536000, immutable' }).send(file.body);
      return;
    }
    res.status(200).set({ ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' }).send(bundle.index);
  };
}

export type ConsoleMiddleware = (req: Request, res: Response, next: Next) => void;

/**
 * The console's middleware for the projection's HTTP server, or undefined
 * with `WRIT_CONSOLE=off`. Read before the server starts (the bundle is
 * loaded once). A missing bundle is not a failure of the API: it is logged
 * once, clearly, and `/console/` answers 404 CONSOLE_NOT_BUILT saying how to
 * build it.
 */
export async function consoleHandler(
  options: { readonly enabled: boolean; readonly dir: string | undefined },
  settings: ConsoleSettings,
  logger: Logger,
): Promise<ConsoleMiddleware | undefined> {
  if (!options.enabled) {
    logger.info('console disabled (WRIT_CONSOLE=off): /console/ is not served');
    return undefined;
  }
  const dir = consoleDir(options.dir);
  const { bundle, missing } = await loadConsoleBundle(dir);
  if (bundle === undefined) {
    const message = `the console is not built (${missing}): build it with \`npx nx run @writ/console:build\`, or set WRIT_CONSOLE_DIR, then restart`;
    logger.warn({ dir }, `console bundle missing: ${message}`);
    return (req, res, next) => {
      if (req.path !== CONSOLE_PATH && !req.path.startsWith(`${CONSOLE_PATH}/`)) return next();
      notFound(res, 'CONSOLE_NOT_BUILT', message);
    };
  }
  logger.info({ dir: bundle.dir, assets: bundle.assets.size }, `console served at ${CONSOLE_PATH}/`);
  return consoleMiddleware(bundle, settings);
}
