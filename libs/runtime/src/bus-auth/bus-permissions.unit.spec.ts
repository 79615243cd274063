import { describe, expect, it } from 'vitest';
import { WRIT_SERVICES, agentPermissions, busLayout, dashboardPermissions, directorPermissions, servicePermissions } from './bus-permissions.js';

const layout = busLayout();
const OPERATOR_ONLY_CALLS = ['$JS.API.STREAM.DELETE.WRIT_EVENTS', '$JS.API.STREAM.PURGE.WRIT_EVENTS', '$JS.API.STREAM.UPDATE.WRIT_EVENTS', '$JS.API.CONSUMER.DELETE.WRIT_EVENTS.x', '$JS.API.STREAM.MSG.DELETE.WRIT_EVENTS'];

/** NATS subject matching: `*` one token, `>` the rest. */
function matches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length || (p[i] !== '*' && p[i] !== s[i])) return false;
  }
  return p.length === s.length;
}

const allows = (side: { allow: readonly string[]; deny: readonly string[] }, subject: string) =>
  side.allow.some((pattern) => matches(pattern, subject)) && !side.deny.some((pattern) => matches(pattern, subject));

describe('bus permissions', () => {
  it.each(WRIT_SERVICES)('given the %s service, then no stream or consumer can be deleted, purged or reconfigured with its credential', (service) => {
    const permissions = servicePermissions(service, layout);
    for (const call of OPERATOR_ONLY_CALLS) expect(allows(permissions.pub, call), call).toBe(false);
    expect(allows(permissions.pub, '$SYS.REQ.CLAIMS.UPDATE')).toBe(false);
  });

  it.each(WRIT_SERVICES)('given the %s service, then it reads its own inbox only and writes no other service principal', (service) => {
    const permissions = servicePermissions(service, layout);
    expect(allows(permissions.sub, `_INBOX.svc-${service}.abc.1`)).toBe(true);
    expect(allows(permissions.sub, '_INBOX.>')).toBe(false);
    expect(allows(permissions.sub, '_INBOX.svc-other.abc')).toBe(false);
    expect(allows(permissions.sub, 'writ.evt.>')).toBe(false);
    for (const [other, id] of Object.entries(layout.servicePrincipals)) {
      if (other !== service) expect(allows(permissions.pub, `writ.evt.principal.${id}`), `${service} → ${id}`).toBe(false);
    }
    expect(allows(permissions.pub, `writ.evt.principal.${layout.servicePrincipals[service]}`)).toBe(true);
  });

  it('given the policy service, then it cannot write a cell, a transparency log or a principal, and answers requests without reading inboxes', () => {
    const policy = servicePermissions('policy', layout);
    expect(allows(policy.pub, 'writ.evt.cell.c1')).toBe(false);
    expect(allows(policy.pub, 'writ.evt.transparency_log.main')).toBe(false);
    expect(allows(policy.pub, 'writ.evt.principal.agent-1')).toBe(false);
    expect(allows(policy.pub, 'writ.evt.policy.p1')).toBe(true);
    expect(policy.responses).toMatchObject({ max: 1 });
  });

  it("given a memory record's stream, then only the executor (which performs a granted memory_write) may publish on it", () => {
    expect(allows(servicePermissions('executor', layout).pub, 'writ.evt.memory.mem-1')).toBe(true);
    for (const service of ['ingress', 'orchestrator', 'policy', 'approval', 'receipt', 'projection'] as const) {
      expect(allows(servicePermissions(service, layout).pub, 'writ.evt.memory.mem-1'), service).toBe(false);
    }
  });

  it('given ingress, then it may append operator-signed registrations of any principal but a service', () => {
    const ingress = servicePermissions('ingress', layout);
    expect(allows(ingress.pub, 'writ.evt.principal.agent-1')).toBe(true);
    expect(allows(ingress.pub, 'writ.evt.principal.writ-approval')).toBe(false);
    expect(allows(ingress.pub, 'writ.evt.principal.writ-receipt')).toBe(false);
  });

  it('given an agent, then it may publish its own ingress subject and nothing else', () => {
    const agent = agentPermissions('agent-1', layout);
    expect(allows(agent.pub, 'writ.ingress.action.agent-1')).toBe(true);
    for (const subject of ['writ.ingress.action.agent-2', 'writ.evt.task.t1', 'writ.cmd.executor.run', 'writ.qry.ingress.register-principal', '$JS.API.STREAM.DELETE.WRIT_EVENTS', '$KV.WRIT_POLICY.x']) {
      expect(allows(agent.pub, subject), subject).toBe(false);
    }
  });

  it('given a dashboard, then it only reads projections', () => {
    const dashboard = dashboardPermissions(layout);
    expect(allows(dashboard.sub, 'writ.proj.actions.a1')).toBe(true);
    expect(allows(dashboard.sub, 'writ.evt.task.t1')).toBe(false);
    expect(allows(dashboard.pub, 'writ.proj.actions.a1')).toBe(false);
    expect(allows(dashboard.pub, 'writ.qry.approval.resolve')).toBe(false);
  });

  it('given a director, then it sends signed requests and reads, but writes no event, command or bucket and creates no stream', () => {
    const director = directorPermissions('dir-1', layout);
    expect(allows(director.pub, 'writ.qry.approval.resolve')).toBe(true);
    for (const subject of ['writ.evt.task.t1', 'writ.cmd.executor.run', '$KV.WRIT_POLICY.p', '$JS.API.STREAM.CREATE.X', ...OPERATOR_ONLY_CALLS]) {
      expect(allows(director.pub, subject), subject).toBe(false);
    }
    expect(allows(director.sub, '_INBOX.dir-1.x')).toBe(true);
    expect(allows(director.sub, '_INBOX.>')).toBe(false);
  });

  it('given another subject root, then every subject follows it', () => {
    const other = busLayout({ root: 't_1', eventsPrefix: 't_1.evt' });
    expect(allows(servicePermissions('executor', other).pub, 't_1.evt.cell.c')).toBe(true);
    expect(allows(servicePermissions('executor', other).pub, 'writ.evt.cell.c')).toBe(false);
    expect(allows(agentPermissions('a', other).pub, 't_1.ingress.action.a')).toBe(true);
  });
});
