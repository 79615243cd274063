import { describe, expect, it } from 'vitest';
import { AuthorService, EVENT_AUTHORSHIP, authorsOf } from './event-authorship.js';
import { EntityType, EventType } from './event-envelope.js';

describe('EVENT_AUTHORSHIP: who may append what (docs/security.md, Authorship)', () => {
  const cases: { note: string; aggregate: string; event: string; servicePrincipal?: boolean; want: readonly string[] | 'self' }[] = [
    { note: 'a grant is minted by the approval service alone', aggregate: 'task', event: 'grant.issued', want: ['approval'] },
    { note: "policy's verdict is the policy service's alone", aggregate: 'task', event: 'policy.evaluated', want: ['policy'] },
    { note: 'what ran is the executor\'s alone', aggregate: 'task', event: 'execution.completed', want: ['executor'] },
    { note: 'a grant use is claimed by the executor alone', aggregate: 'task', event: 'grant.use_claimed', want: ['executor'] },
    { note: 'receipts are the receipt service\'s alone', aggregate: 'task', event: 'receipt.issued', want: ['receipt'] },
    { note: 'a director\'s resolution is recorded by the approval service', aggregate: 'task', event: 'approval.granted', want: ['approval'] },
    { note: 'the exact row wins over its family', aggregate: 'task', event: 'approval.resolution_refused', want: ['orchestrator', 'approval'] },
    { note: 'task state: the orchestrator and ingress (which opens a task)', aggregate: 'task', event: 'attempt.awaiting_policy', want: ['orchestrator', 'ingress'] },
    { note: 'a type no service appends: nobody (deny by default)', aggregate: 'task', event: 'grant.minted_by_anyone', want: [] },
    { note: 'a family on the wrong aggregate: nobody', aggregate: 'cell', event: 'grant.issued', want: [] },
    { note: 'a cell is the executor\'s', aggregate: 'cell', event: 'cell.ttl_renewed', want: ['executor'] },
    { note: 'an agent\'s registration is appended by ingress', aggregate: 'principal', event: 'principal.registered', want: ['ingress'] },
    { note: 'a service principal\'s own subject is sealed by itself', aggregate: 'principal', event: 'principal.key_added', servicePrincipal: true, want: 'self' },
    { note: 'a service principal\'s subject carries principal events only', aggregate: 'principal', event: 'grant.issued', servicePrincipal: true, want: [] },
    { note: "a task's working state is the orchestrator's alone", aggregate: 'task', event: 'working_state.revised', want: ['orchestrator'] },
    { note: "a task's beliefs are the orchestrator's alone", aggregate: 'task', event: 'belief.asserted', want: ['orchestrator'] },
    { note: "memory events live on the record's own stream, never a task's: nobody there", aggregate: 'task', event: 'memory.promoted', want: [] },
    { note: "a memory record's stream is the executor's alone (a granted memory_write)", aggregate: 'memory', event: 'memory.promoted', want: ['executor'] },
    { note: 'an orchestrator cannot invalidate memory by appending', aggregate: 'memory', event: 'memory.invalidated', want: ['executor'] },
    { note: "a memory stream carries memory events only", aggregate: 'memory', event: 'working_state.revised', want: [] },
    { note: 'no dot, no family', aggregate: 'task', event: 'grant', want: [] },
  ];
  it.each(cases)('$note', ({ aggregate, event, servicePrincipal, want }) => {
    expect(authorsOf(aggregate, event, { servicePrincipal: servicePrincipal ?? false })).toEqual(want);
  });

  it('given the table, then every row names a known aggregate, a valid event type or family, and known services', () => {
    for (const rule of EVENT_AUTHORSHIP) {
      expect(EntityType.safeParse(rule.aggregate).success, rule.aggregate).toBe(true);
      const type = rule.event.endsWith('.*') ? `${rule.event.slice(0, -2)}.any` : rule.event;
      expect(EventType.safeParse(type).success, rule.event).toBe(true);
      if (rule.authors !== 'self') for (const service of rule.authors) expect(AuthorService.safeParse(service).success, service).toBe(true);
    }
  });

  it('given the security-critical types, then no row lets a second service write them', () => {
    for (const [event, only] of [['grant.issued', 'approval'], ['policy.evaluated', 'policy'], ['execution.completed', 'executor'], ['receipt.issued', 'receipt'], ['approval.granted', 'approval']] as const) {
      expect(authorsOf('task', event)).toEqual([only]);
    }
  });
});
