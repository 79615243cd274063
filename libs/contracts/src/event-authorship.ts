import { z } from 'zod';
import type { EntityType } from './event-envelope.js';

/**
 * Who may write what in the log: every event type, on every aggregate's
 * subject, mapped to the Writ services allowed to append it. Task subjects
 * are shared by several services (the bus cannot tell a policy service's
 * `grant.issued` from the approval service's), so each event carries its
 * appending service's seal (`EventSeal`) and every reader checks it against
 * this table; an event whose author is unproven is quarantined
 * (`QUARANTINE_AUTHOR_UNPROVEN`) and never acted upon.
 *
 * Derived from the services' appends (grep `append(` / `appendToEntity(`);
 * an event appended on behalf of an agent or a director (ingress records a
 * request, approval a director's resolution) is sealed by the service that
 * appended it, its actor fields naming the party. Deny by default: a type
 * not listed for its aggregate has no author. A new event type is added
 * here in the same change that first appends it.
 */

/** The services that append to the log (the names of bus-permissions' `WritService`). */
export const AuthorService = z.enum(['ingress', 'orchestrator', 'policy', 'approval', 'executor', 'receipt', 'projection']);
export type AuthorService = z.infer<typeof AuthorService>;

/**
 * `self`: the event sits on a service principal's own subject
 * (`<events>.principal.<service principal>`) and is sealed by that principal
 * with a key its own chain registered before it (or, for its
 * `principal.registered`, the key it registers).
 */
export type EventAuthors = readonly AuthorService[] | 'self';

/** One row: an event type, or a family `<family>.*`, on an aggregate's subject. */
export interface AuthorshipRule {
  readonly aggregate: EntityType;
  /** An exact event type (`grant.issued`) or a family (`attempt.*`); the exact row wins. */
  readonly event: string;
  readonly authors: EventAuthors;
}

const ORCHESTRATION: readonly AuthorService[] = ['orchestrator', 'ingress'];

/** The table (docs/security.md, "Authorship"). */
export const EVENT_AUTHORSHIP: readonly AuthorshipRule[] = Object.freeze([
  // ---- writ.evt.task.<id>: shared by every service, so the seal is the only line between them.
  // Task, step and attempt state: the orchestrator's deciders; ingress opens a task and its first step and attempt.
  { aggregate: 'task', event: 'task.*', authors: ORCHESTRATION },
  { aggregate: 'task', event: 'step.*', authors: ORCHESTRATION },
  { aggregate: 'task', event: 'attempt.*', authors: ORCHESTRATION },
  { aggregate: 'task', event: 'claim.*', authors: ORCHESTRATION },
  { aggregate: 'task', event: 'question.*', authors: ORCHESTRATION },
  { aggregate: 'task', event: 'audit.*', authors: ORCHESTRATION },
  { aggregate: 'task', event: 'decision.recorded', authors: ['orchestrator', 'approval'] },
  // A task's working state and beliefs (issue 17): the orchestrator alone, from a signed request it verified.
  { aggregate: 'task', event: 'working_state.*', authors: ['orchestrator'] },
  { aggregate: 'task', event: 'belief.*', authors: ['orchestrator'] },
  // An attempt's context pack (issue 17): the orchestrator compiles it from the log and records where it is.
  { aggregate: 'task', event: 'context.*', authors: ['orchestrator'] },
  // Policy's verdict: the policy service alone.
  { aggregate: 'task', event: 'policy.*', authors: ['policy'] },
  // Approvals and grants: the approval service (the orchestrator records a refused resolution and revokes on drift).
  { aggregate: 'task', event: 'approval.*', authors: ['approval'] },
  { aggregate: 'task', event: 'approval.resolution_refused', authors: ['orchestrator', 'approval'] },
  { aggregate: 'task', event: 'grant.issued', authors: ['approval'] },
  { aggregate: 'task', event: 'grant.revoked', authors: ['approval', 'orchestrator'] },
  // A grant's use and refusal, and what ran: the executor alone.
  { aggregate: 'task', event: 'grant.use_claimed', authors: ['executor'] },
  { aggregate: 'task', event: 'grant.refused', authors: ['executor'] },
  { aggregate: 'task', event: 'grant.use_released', authors: ['executor'] },
  { aggregate: 'task', event: 'execution.*', authors: ['executor'] },
  // Receipts: the receipt service alone.
  { aggregate: 'task', event: 'receipt.*', authors: ['receipt'] },

  // ---- other aggregates, each written by its owner (bus permissions already keep the others off these subjects).
  { aggregate: 'ingress', event: 'ingress.*', authors: ['ingress'] },
  { aggregate: 'participant', event: 'participant.*', authors: ['ingress', 'policy'] },
  { aggregate: 'policy', event: 'policy.*', authors: ['policy'] },
  { aggregate: 'cell', event: 'cell.*', authors: ['executor'] },
  { aggregate: 'transparency_log', event: 'tlog.*', authors: ['receipt'] },
  // A memory record's stream (issue 17): the executor alone, performing a granted memory_write (the grant use it claimed on the task).
  { aggregate: 'memory', event: 'memory.*', authors: ['executor'] },
  // Agents, directors and operators are registered through ingress (an operator-signed request); a service registers itself.
  { aggregate: 'principal', event: 'principal.*', authors: ['ingress'] },
]);

type Table = ReadonlyMap<string, EventAuthors>;

function tableOf(rules: readonly AuthorshipRule[]): Table {
  const table = new Map<string, EventAuthors>();
  for (const rule of rules) {
    const key = `${rule.aggregate} ${rule.event}`;
    if (table.has(key)) throw new Error(`EVENT_AUTHORSHIP lists ${key} twice`);
    table.set(key, rule.authors);
  }
  return table;
}

const TABLE = tableOf(EVENT_AUTHORSHIP);
const NOBODY: EventAuthors = Object.freeze([]);

/**
 * The services allowed to append `eventType` on `aggregate`'s subject (the
 * subject's entity type, not the envelope's: a task's subject carries its
 * steps', attempts' and grants' events). `servicePrincipal`: the aggregate is a
 * service principal's own subject, whose events only that principal seals.
 * An empty list: nobody may.
 */
export function authorsOf(aggregate: string, eventType: string, options: { readonly servicePrincipal?: boolean } = {}): EventAuthors {
  if (aggregate === 'principal' && options.servicePrincipal === true) return eventType.startsWith('principal.') ? 'self' : NOBODY;
  const exact = TABLE.get(`${aggregate} ${eventType}`);
  if (exact !== undefined) return exact;
  const dot = eventType.indexOf('.');
  return dot < 0 ? NOBODY : (TABLE.get(`${aggregate} ${eventType.slice(0, dot)}.*`) ?? NOBODY);
}
