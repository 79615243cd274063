import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { TrustAnchor } from '@writ/contracts';
import { natsConnectOptions, serverList } from '@writ/runtime';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { postgresAuthCheck } from './doctor-postgres.js';
import { describeReplicas, streamReplicas, writStreams } from './streams-replicas.js';

export interface DoctorOptions {
  /** Host of the services' HTTP ports (default 127.0.0.1). */
  readonly host?: string;
  readonly json?: boolean;
}

/** One finding: what was checked, whether it holds, what was seen, and the next step when it does not. */
export interface DoctorCheck {
  readonly check: string;
  readonly ok: boolean;
  readonly detail: string;
  readonly fix?: string;
}

/** What one service said about itself on `/healthz` (absent when it did not answer). */
export interface ServiceBuild {
  readonly url: string;
  readonly version?: string;
  readonly commit?: string;
}

export interface DoctorReport {
  readonly ok: boolean;
  readonly nats_url: string;
  readonly api_url: string;
  readonly services: Readonly<Record<string, ServiceBuild>>;
  readonly checks: readonly DoctorCheck[];
}

/** The services in the order of their HTTP ports: `scripts/writ-up.sh` gives each WRIT_HTTP_PORT_BASE (8080) + its index. */
const SERVICES_BY_PORT = ['projection', 'ingress', 'orchestrator', 'policy', 'approval', 'executor', 'receipt'] as const;

/**
 * `writ doctor`: the stack as a new user meets it, checked from outside:
 * Writ's NATS reachable with this credential and refusing anonymous clients,
 * the log and bus streams present (and their replicas), each service ready,
 * the trust anchor readable. Every failure names its next step; any failed
 * check ends in CLI_DOCTOR_FAILED (exit 1). Reads only; changes nothing.
 */
export async function doctor(options: DoctorOptions, conn: Connection, io: CliIo): Promise<DoctorReport> {
  const host = options.host ?? '127.0.0.1';
  const base = Number(io.env['WRIT_HTTP_PORT_BASE'] || 8080);
  if (!Number.isInteger(base) || base < 1 || base > 65535 - SERVICES_BY_PORT.length) throw new CliError('CLI_USAGE', `WRIT_HTTP_PORT_BASE=${io.env['WRIT_HTTP_PORT_BASE']}: a port number (the projection's; the other services follow it)`);
  const apiUrl = (io.env['WRIT_URL'] || `http://${host}:${base}`).replace(/\/+$/, '');
  const checks: DoctorCheck[] = [];
  checks.push(...(await natsChecks(conn)));
  const services: Record<string, ServiceBuild> = {};
  for (const [index, service] of SERVICES_BY_PORT.entries()) {
    const url = service === 'projection' ? apiUrl : `http://${host}:${base + index}`;
    services[service] = { url, ...(await serviceBuild(url)) };
    checks.push(await serviceCheck(service, url, services[service]));
  }
  checks.push(releaseCheck(services));
  checks.push(await trustAnchorCheck(io));
  checks.push(await postgresAuthCheck(io));
  const report: DoctorReport = { ok: checks.every((check) => check.ok), nats_url: conn.natsUrl, api_url: apiUrl, services, checks };
  if (options.json === true) {
    io.stdout(JSON.stringify(report));
  } else {
    io.stdout(`NATS ${conn.natsUrl}   API ${apiUrl}`);
    for (const check of checks) io.stdout(`  ${check.ok ? 'ok  ' : 'FAIL'}  ${check.check.padEnd(22)} ${check.detail}${check.ok || check.fix === undefined ? '' : `\n        next: ${check.fix}`}`);
    io.stdout(report.ok ? 'all checks passed' : `${checks.filter((check) => !check.ok).length} check(s) failed`);
  }
  if (!report.ok) {
    const failed = checks.filter((check) => !check.ok).map((check) => check.check);
    throw new CliError('CLI_DOCTOR_FAILED', `${failed.length} check(s) failed: ${failed.join(', ')}`, { details: { failed } });
  }
  return report;
}

async function natsChecks(conn: Connection): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  let options;
  try {
    options = natsConnectOptions(conn.env);
  } catch (error) {
    return [{ check: 'nats_credential', ok: false, detail: (error as Error).message, fix: 'point WRIT_NATS_CREDS at a credential writ init or writ principal add wrote (. var/writ/writ.env)' }];
  }
  // Deliberately without a credential: the probe that Writ's server refuses anonymous clients.
  const anonymous = await connect({ servers: serverList(conn.natsUrl), reconnect: false, timeout: 3_000, name: 'writ-doctor-anonymous' }).then(
    async (nc) => {
      await nc.close();
      return true;
    },
    () => false,
  );
  checks.push(
    anonymous
      ? { check: 'nats_auth', ok: false, detail: `${conn.natsUrl} accepts anonymous connections: it is not Writ's server, or its auth is off`, fix: "start Writ's own server (scripts/writ-nats.sh) and set WRIT_NATS_URL to it (default nats://127.0.0.1:4223)" }
      : { check: 'nats_auth', ok: true, detail: 'anonymous connections refused (decentralized JWT auth)' },
  );
  let nc;
  try {
    nc = await connect({ servers: serverList(conn.natsUrl), reconnect: false, timeout: 5_000, name: 'writ-doctor', ...options });
  } catch (error) {
    checks.push({ check: 'nats_connect', ok: false, detail: `cannot connect with ${conn.env['WRIT_NATS_CREDS'] ? `WRIT_NATS_CREDS=${conn.env['WRIT_NATS_CREDS']}` : 'no credential'}: ${(error as Error).message}`, fix: "run scripts/writ-nats.sh, then . var/writ/writ.env" });
    return checks;
  }
  try {
    checks.push({ check: 'nats_connect', ok: true, detail: `nats-server ${nc.info?.version ?? '?'}${nc.info?.tls_required === true ? ', TLS' : ''}, as ${conn.env['WRIT_NATS_CREDS'] ?? 'the given credential'}` });
    const jsm = await jetstreamManager(nc, { checkAPI: false });
    for (const stream of writStreams(conn)) {
      try {
        const info = await jsm.streams.info(stream);
        const copies = 1 + (info.cluster?.replicas?.length ?? 0);
        checks.push({ check: `stream ${stream}`, ok: copies >= info.config.num_replicas, detail: `${info.state.messages} messages, replicas ${info.config.num_replicas} configured / ${copies} running` });
        if (copies > 1) checks.push(await replicasCheck(nc, stream));
      } catch (error) {
        checks.push({ check: `stream ${stream}`, ok: false, detail: (error as Error).message, fix: 'start the services once (scripts/writ-up.sh): they create the streams; a credential that may not read them shows here too' });
      }
    }
  } finally {
    await nc.close().catch(() => undefined);
  }
  return checks;
}

/**
 * Every peer of a replicated stream holds the same last messages. A peer that
 * does not serves its own log to every consumer it leads: chains break for
 * their readers (quarantines, a stalled projection) although the quorum's
 * copy is whole.
 */
async function replicasCheck(nc: NatsConnection, stream: string): Promise<DoctorCheck> {
  const check = `replicas ${stream}`;
  try {
    const report = await streamReplicas(nc, stream);
    if (report.error === undefined && report.diverged.length === 0) return { check, ok: true, detail: describeReplicas(report) };
    return report.error !== undefined
      ? { check, ok: false, detail: describeReplicas(report), fix: 'run writ doctor again; if it persists, read the nats-server logs of the peers' }
      : { check, ok: false, detail: describeReplicas(report), fix: `writ streams replicas --repair --stream ${stream} (replaces the diverged copy with the quorum's), then writ projections rebuild --force` };
  } catch (error) {
    return { check, ok: false, detail: `cannot compare its peers: ${(error as Error).message}`, fix: 'run writ doctor again; if it persists, read the nats-server logs of the peers' };
  }
}

/** The version a service reports on `/healthz` (empty when it does not answer: serviceCheck says why). */
async function serviceBuild(url: string): Promise<{ version?: string; commit?: string }> {
  try {
    const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(3_000) });
    const body = (await response.json()) as { version?: unknown; commit?: unknown };
    return { ...(typeof body.version === 'string' ? { version: body.version } : {}), ...(typeof body.commit === 'string' ? { commit: body.commit } : {}) };
  } catch {
    return {};
  }
}

/** One release runs everywhere: services of different versions (a half-finished upgrade) disagree on contracts. */
export function releaseCheck(services: Readonly<Record<string, ServiceBuild>>): DoctorCheck {
  const releases = new Map<string, string[]>();
  for (const [service, build] of Object.entries(services)) {
    if (build.version === undefined) continue;
    const release = build.commit === undefined ? build.version : `${build.version} (${build.commit})`;
    releases.set(release, [...(releases.get(release) ?? []), service]);
  }
  if (releases.size <= 1) return { check: 'release', ok: true, detail: releases.size === 0 ? 'no service reported its version' : `every answering service runs ${[...releases.keys()][0]}` };
  const detail = [...releases].map(([release, names]) => `${release}: ${names.join(', ')}`).join('; ');
  return { check: 'release', ok: false, detail: `services run different releases: ${detail}`, fix: 'finish the upgrade: restart every service from one build (scripts/writ-up.sh restarts them all)' };
}

async function serviceCheck(service: string, url: string, build: ServiceBuild): Promise<DoctorCheck> {
  const version = build.version === undefined ? '' : ` (${build.version}${build.commit === undefined ? '' : ` ${build.commit}`})`;
  try {
    const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(3_000) });
    const body = (await response.json().catch(() => ({}))) as { checks?: Record<string, unknown> };
    const failing = Object.entries(body.checks ?? {})
      .filter(([, value]) => value === false || (typeof value === 'object' && value !== null && (value as { ok?: unknown }).ok === false))
      .map(([name]) => name);
    return response.ok
      ? { check: `service ${service}`, ok: true, detail: `ready at ${url}${version}` }
      : { check: `service ${service}`, ok: false, detail: `not ready at ${url} (${response.status}${failing.length > 0 ? `: ${failing.join(', ')}` : ''})`, fix: `read var/log/${service}.log` };
  } catch (error) {
    return { check: `service ${service}`, ok: false, detail: `no answer at ${url}/readyz (${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message})`, fix: 'start the stack: scripts/writ-up.sh' };
  }
}

async function trustAnchorCheck(io: CliIo): Promise<DoctorCheck> {
  const file = resolve(io.cwd, io.env['WRIT_TRUST_ANCHOR'] || resolve(io.env['WRIT_HOME'] || 'var/writ', 'trust-anchor.json'));
  try {
    const anchor = TrustAnchor.parse(JSON.parse(await readFile(file, 'utf8')));
    return { check: 'trust_anchor', ok: true, detail: `${file}: operator ${anchor.principal_id}, keys ${anchor.keys.map((key) => key.kid).join(', ')}` };
  } catch (error) {
    return { check: 'trust_anchor', ok: false, detail: `${file}: ${(error as Error).message.split('\n')[0]}`, fix: 'run writ init (scripts/writ-nats.sh does), or set WRIT_TRUST_ANCHOR' };
  }
}
