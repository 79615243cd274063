import { isIP } from 'node:net';

/**
 * The egress allowlist of one action, from its grant's `resource_scope.hosts`: the same
 * patterns the kernel checks a use against (`hostInScope`), read as what the proxy may
 * connect to. `host` or `*.suffix`, optionally `:port`; without a port a pattern allows
 * 80 and 443 (plain HTTP and TLS through CONNECT), with one it allows that port only.
 * `*` alone, an empty pattern or anything that is not a host name / IP literal allows
 * nothing (policy-only wildcards never reach a cell).
 */
export interface EgressRule {
  /** Lower-case host name or IP literal; for a wildcard the suffix with its dot (`.example.com`). */
  readonly host: string;
  readonly wildcard: boolean;
  readonly ports: readonly number[];
}

/** Ports a pattern without an explicit port allows. */
export const EGRESS_DEFAULT_PORTS: readonly number[] = Object.freeze([80, 443]);

const HOST_NAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** `host`, `host:port`, `[v6]:port` → parts, or undefined when it is not one of those. */
export function splitHostPort(value: string): { readonly host: string; readonly port?: number } | undefined {
  const text = value.trim().toLowerCase();
  if (text === '') return undefined;
  const bracketed = /^\[([0-9a-f:.]+)\](?::(\d{1,5}))?$/.exec(text);
  if (bracketed !== null) return withPort(bracketed[1] ?? '', bracketed[2]);
  if (isIP(text) === 6) return { host: text };
  const colon = text.lastIndexOf(':');
  if (colon === -1) return { host: text };
  return withPort(text.slice(0, colon), text.slice(colon + 1));
}

function withPort(host: string, port: string | undefined): { readonly host: string; readonly port?: number } | undefined {
  if (port === undefined) return { host };
  if (!/^\d{1,5}$/.test(port)) return undefined;
  const n = Number(port);
  return n >= 1 && n <= 65_535 ? { host, port: n } : undefined;
}

function validHost(host: string): boolean {
  return isIP(host) !== 0 || HOST_NAME.test(host);
}

/** The rules of a grant's hosts; patterns that allow nothing are dropped (never widened). */
export function egressRules(patterns: readonly string[]): EgressRule[] {
  const rules: EgressRule[] = [];
  for (const pattern of patterns) {
    const parts = splitHostPort(pattern);
    if (parts === undefined) continue;
    const wildcard = parts.host.startsWith('*.');
    const host = wildcard ? parts.host.slice(1) : parts.host;
    if (!validHost(wildcard ? host.slice(1) : host) || (wildcard && isIP(host.slice(1)) !== 0)) continue;
    rules.push({ host, wildcard, ports: parts.port === undefined ? EGRESS_DEFAULT_PORTS : [parts.port] });
  }
  return rules;
}

/** True when `host:port` is allowed: an exact name, or a name strictly below a `*.` suffix. Never a substring match. */
export function egressAllowed(rules: readonly EgressRule[], host: string, port: number): boolean {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (!validHost(name)) return false;
  return rules.some((rule) => rule.ports.includes(port) && (rule.wildcard ? name.length > rule.host.length && name.endsWith(rule.host) && isIP(name) === 0 : name === rule.host));
}
