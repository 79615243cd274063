import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CliError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';

/**
 * apps/serve's built entry, beside this CLI in the repository (apps/cli/{src,dist}/commands → apps/serve/dist).
 * The CLI never imports the services (it stays light for agents): it runs the app as a child.
 */
export const SERVE_MAIN = fileURLToPath(new URL('../../../serve/dist/main.js', import.meta.url));

/**
 * `writ serve --all`: runs apps/serve (every service in one process) as a child with this
 * environment and this terminal, passes SIGTERM / SIGINT on (the services drain), and
 * resolves once it ended: CLI_SERVE_EXITED when it ended with a failure.
 */
export async function serveAll(options: { readonly all?: boolean }, io: CliIo, main: string = SERVE_MAIN): Promise<void> {
  if (options.all !== true) throw new CliError('CLI_USAGE', 'writ serve runs every service in one process: pass --all (one service alone runs as node services/<name>/dist/main.js)');
  if (!existsSync(main)) throw new CliError('CLI_SERVE_NOT_BUILT', `${main} is missing: build it first (npx nx run @writ/serve:build)`);
  const child = spawn(process.execPath, [main], { env: { ...io.env }, cwd: io.cwd, stdio: 'inherit' });
  const forward = (signal: NodeJS.Signals) => () => void child.kill(signal);
  const onTerm = forward('SIGTERM');
  const onInt = forward('SIGINT');
  process.on('SIGTERM', onTerm);
  process.on('SIGINT', onInt);
  try {
    const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (exitCode, exitSignal) => resolve({ code: exitCode, signal: exitSignal }));
    });
    if (code !== 0) throw new CliError('CLI_SERVE_EXITED', `the services' process ended with ${code === null ? `signal ${signal}` : `status ${code}`} (its log above names the service and the code)`);
  } finally {
    process.off('SIGTERM', onTerm);
    process.off('SIGINT', onInt);
  }
}
