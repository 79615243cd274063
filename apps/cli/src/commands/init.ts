import { join, resolve } from 'node:path';
import { initWritHome, type WritHome } from '@writ/runtime';
import { CliError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';

export interface InitOptions {
  /** The deployment's directory; default WRIT_HOME, else `./var/writ`. */
  readonly home?: string;
  /** Writ's NATS port (default 4223) and listen address (default 127.0.0.1). */
  readonly port?: string;
  readonly host?: string;
  /** Writ's NATS monitoring port (default 8223; loopback only). */
  readonly monitorPort?: string;
  /** The first operator's principal id (default `operator`). */
  readonly operator?: string;
  /** TLS for client connections: the server's certificate and key (PEM). */
  readonly tlsCert?: string;
  readonly tlsKey?: string;
  readonly json?: boolean;
}

/**
 * `writ init`: the deployment's trust material, made once (a re-run keeps
 * every file and creates only what is missing): Writ's NATS authority and
 * server configuration, the credentials of the operator, the dashboard and
 * each service, the first operator's Ed25519 key (0600) and the trust anchor
 * that names it. Prints where each is; never a secret.
 */
export async function init(options: InitOptions, io: CliIo): Promise<WritHome> {
  const home = resolve(io.cwd, options.home ?? (io.env['WRIT_HOME'] || 'var/writ'));
  const port = tcpPort('--port', options.port);
  const monitorPort = tcpPort('--monitor-port', options.monitorPort);
  if ((options.tlsCert === undefined) !== (options.tlsKey === undefined)) throw new CliError('CLI_USAGE', '--tls-cert and --tls-key go together');
  const result = await initWritHome({
    home,
    server: {
      ...(port === undefined ? {} : { port }),
      ...(monitorPort === undefined ? {} : { monitorPort }),
      ...(options.host === undefined ? {} : { host: options.host }),
      ...(options.tlsCert === undefined || options.tlsKey === undefined ? {} : { tls: { certFile: resolve(io.cwd, options.tlsCert), keyFile: resolve(io.cwd, options.tlsKey) } }),
    },
    ...(options.operator === undefined ? {} : { operatorId: options.operator }),
  });
  if (options.json === true) {
    io.stdout(JSON.stringify(result));
    return result;
  }
  io.stdout(
    [
      `Writ home        ${result.home} (${result.created.length === 0 ? 'unchanged: every file existed' : `${result.created.length} files created`})`,
      `NATS server      ${result.natsUrl}  (config ${result.serverConfig}; start it with scripts/writ-nats.sh)`,
      `operator         ${result.operatorId}: private key ${result.operatorKey} (0600, keep it secret), trust anchor ${result.trustAnchor}`,
      `operator bus     ${result.creds.operator}`,
      `dashboard bus    ${result.creds.dashboard} (read-only on writ.proj.>)`,
      `dashboard HTTP   ${result.dashboardId} (observer): private key ${result.dashboardKey} (0600); scripts/writ-up.sh registers it; its token: writ http token --principal ${result.dashboardId} --key ${result.dashboardKey}`,
      `service creds    ${Object.values(result.creds.services).join(', ')}`,
      `postgres         schema ${result.pg.schema}, projection role ${result.pg.roles.projection}: password ${result.pg.passwordFiles.projection} (0600; writ pg setup creates the role)`,
      `enrollments      ${join(result.home, 'services')} (the operator's signed enrollment of each service principal: its keys chain to the trust anchor)`,
      `environment      . ${result.envFile}`,
    ].join('\n'),
  );
  return result;
}

function tcpPort(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new CliError('CLI_USAGE', `${flag} ${text} is not a TCP port`);
  return port;
}
