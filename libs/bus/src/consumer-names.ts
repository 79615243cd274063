import { createHash } from 'node:crypto';
import { subjects } from '@writ/contracts';
import { BusError } from './bus-errors.js';

/** A service name is a subject token and part of durable names: `orchestrator`, `executor-eu1`. */
const SERVICE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function assertServiceName(name: string): void {
  if (!SERVICE_NAME.test(name)) {
    throw new BusError('BUS_CONFIG_INVALID', `serviceName ${JSON.stringify(name)} must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-"`);
  }
}

/**
 * Checks that `pattern` is a NATS subject filter: non-empty tokens without
 * whitespace, `*` only as a whole token, `>` only as the last token.
 */
export function assertSubjectFilter(pattern: unknown): asserts pattern is string {
  const fail = (why: string): never => {
    throw new BusError('BUS_PATTERN_INVALID', `handler pattern ${safeString(pattern)} is not a NATS subject: ${why}`, {
      details: { pattern: safeString(pattern) },
    });
  };
  if (typeof pattern !== 'string') fail('patterns must be subject strings, not objects');
  const tokens = (pattern as string).split('.');
  tokens.forEach((token, index) => {
    if (token === '') fail('empty token');
    if (/\s/.test(token)) fail('whitespace');
    if (token.includes('>') && (token !== '>' || index !== tokens.length - 1)) fail('">" must be the whole last token');
    if (token.includes('*') && token !== '*') fail('"*" must be a whole token');
  });
}

function safeString(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : typeof value;
}

const MAX_TOKEN_LENGTH = 96;

/**
 * A readable, collision-free token for a subject filter, usable in durable
 * names and as one subject token: `writ.cmd.executor.run` →
 * `writ_cmd_executor_run-1f0c2a9e`. Wildcards become `any` (`*`) and `all`
 * (`>`); the hash suffix keeps `a_b.c` and `a.b_c` apart.
 */
export function patternToken(pattern: string): string {
  const readable = pattern
    .split('.')
    .map((token) => (token === '*' ? 'any' : token === '>' ? 'all' : token.replace(/[^A-Za-z0-9_-]/g, '_')))
    .join('_')
    .slice(0, MAX_TOKEN_LENGTH);
  const hash = createHash('sha256').update(pattern).digest('hex').slice(0, 8);
  return `${readable}-${hash}`;
}

/** The durable consumer shared by every instance of `serviceName` bound to `pattern` (competing consumers). */
export function durableName(serviceName: string, pattern: string): string {
  return `${serviceName}__${patternToken(pattern)}`;
}

/** Default dead-letter subject: `writ.dlq.<service>.<pattern token>`, so `writ.dlq.<service>.>` is one service's letters. */
export function defaultDeadLetterSubject(serviceName: string, pattern: string, prefix?: string): string {
  const tail = `${serviceName}.${patternToken(pattern)}`;
  return prefix === undefined ? subjects.deadLetter(tail) : `${prefix}.${tail}`;
}
