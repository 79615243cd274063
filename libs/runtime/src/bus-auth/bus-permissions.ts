/**
 * Who may publish and subscribe to what on Writ's bus: a pure function of the
 * deployment's names (subject root, event prefix, streams) and the party,
 * never written by hand per deployment. `writ init` and `writ principal add`
 * put these into the NATS user JWTs they issue; the server enforces them.
 *
 * The shape is NATS's own (user JWT `pub` / `sub` allow and deny lists):
 * anything not allowed is refused by the server, and a deny wins over an allow.
 */

/** Publish and subscribe permissions of one NATS user. */
export interface SubjectPermissions {
  readonly pub: { readonly allow: readonly string[]; readonly deny: readonly string[] };
  readonly sub: { readonly allow: readonly string[]; readonly deny: readonly string[] };
  /**
   * A responder's right to answer: it may publish one reply to the reply subject
   * of each request it received (NATS's `allow_responses`), and to nothing else
   * under `_INBOX`, so it answers any caller without reading anyone's inbox.
   */
  readonly responses?: { readonly max: number; readonly ttlMs: number };
}

/** The names a deployment's permissions are derived from (`WRIT_SUBJECT_ROOT`, `WRIT_EVENTS_PREFIX`, the stream names). */
export interface BusLayout {
  /** `writ` in production. */
  readonly root: string;
  /** Subject prefix of the event log (`<root>.evt`). */
  readonly eventsPrefix: string;
  readonly streams: { readonly events: string; readonly ingress: string; readonly commands: string; readonly dlq: string };
  /** The service principals' ids (whose `<events>.principal.<id>` only that service writes). */
  readonly servicePrincipals: Readonly<Record<WritService, string>>;
}

export const WRIT_SERVICES = ['ingress', 'orchestrator', 'policy', 'approval', 'executor', 'receipt', 'projection'] as const;
export type WritService = (typeof WRIT_SERVICES)[number];

/** The service principal ids the services use unless configured otherwise (`WRIT_<SERVICE>_PRINCIPAL_ID`). */
export const DEFAULT_SERVICE_PRINCIPALS: Readonly<Record<WritService, string>> = Object.freeze({
  ingress: 'ingress',
  orchestrator: 'writ-orchestrator',
  policy: 'writ-policy',
  approval: 'writ-approval',
  executor: 'writ-executor',
  receipt: 'writ-receipt',
  projection: 'writ-projection',
});

/** The layout of a deployment that keeps every default name (root `writ`, streams `WRIT_*`). */
export function busLayout(overrides: Partial<BusLayout> = {}): BusLayout {
  const root = overrides.root ?? 'writ';
  return {
    root,
    eventsPrefix: overrides.eventsPrefix ?? `${root}.evt`,
    streams: overrides.streams ?? { events: 'WRIT_EVENTS', ingress: 'WRIT_INGRESS', commands: 'WRIT_COMMANDS', dlq: 'WRIT_DLQ' },
    servicePrincipals: overrides.servicePrincipals ?? DEFAULT_SERVICE_PRINCIPALS,
  };
}

/**
 * The inbox prefix of a named user of the Writ account. Each user may subscribe
 * to its own inbox only, so no party reads another's replies (grants and
 * signed requests travel in replies); nats.js is told the prefix
 * (`inboxPrefix`, read back from the user JWT by `natsConnectOptions`).
 */
export function userInbox(user: string): string {
  return `_INBOX.${user}`;
}

/**
 * The aggregates (beside tasks) whose subjects a service appends to, as the
 * services' outbound adapters do today. Listed, not wildcarded: a service's
 * credential cannot write another aggregate's stream (a policy credential
 * cannot write a cell's lifecycle or another service's keys).
 */
const OWNED_AGGREGATES: Readonly<Record<WritService, readonly string[]>> = {
  ingress: ['ingress', 'participant'],
  orchestrator: [],
  policy: ['policy', 'participant'],
  approval: [],
  executor: ['cell', 'memory'],
  receipt: ['transparency_log'],
  projection: [],
};

/**
 * JetStream API calls that read or consume (never change a stream's data or
 * configuration). `STREAM.CREATE` creates a missing stream only: on an
 * existing name with another configuration the server refuses it, so it cannot
 * reconfigure; update, delete, purge, message delete, snapshot, restore and
 * consumer delete are the operator's alone.
 */
const JS_CLIENT_API = [
  '$JS.API.INFO',
  '$JS.API.STREAM.NAMES',
  '$JS.API.STREAM.LIST',
  '$JS.API.STREAM.INFO.*',
  '$JS.API.STREAM.CREATE.*',
  '$JS.API.STREAM.MSG.GET.*',
  '$JS.API.DIRECT.GET.>',
  '$JS.API.CONSUMER.CREATE.>',
  '$JS.API.CONSUMER.DURABLE.CREATE.>',
  '$JS.API.CONSUMER.INFO.>',
  '$JS.API.CONSUMER.NAMES.*',
  '$JS.API.CONSUMER.LIST.*',
  '$JS.API.CONSUMER.MSG.NEXT.>',
  // Acks, naks and in-progress of the messages it was delivered.
  '$JS.ACK.>',
  '$JS.FC.>',
];

/** One reply per request, within a minute of receiving it (a handler that takes longer answers nobody). */
const SERVICE_RESPONSES = Object.freeze({ max: 1, ttlMs: 60_000 });

/** What no party but the operator may ever publish, whatever an allow list says. */
const OPERATOR_ONLY = [
  '$JS.API.STREAM.UPDATE.>',
  '$JS.API.STREAM.DELETE.>',
  '$JS.API.STREAM.PURGE.>',
  '$JS.API.STREAM.MSG.DELETE.>',
  '$JS.API.STREAM.SNAPSHOT.>',
  '$JS.API.STREAM.RESTORE.>',
  '$JS.API.STREAM.LEADER.>',
  '$JS.API.STREAM.PEER.>',
  '$JS.API.CONSUMER.DELETE.>',
  '$JS.API.CONSUMER.LEADER.>',
  '$JS.API.META.>',
  '$JS.API.SERVER.>',
  '$JS.API.ACCOUNT.>',
  '$SYS.>',
];

/**
 * A Writ service's user: its own commands, queries and aggregates, every
 * task's subject (each service appends its own event types there; which type
 * a service may write is checked by the readers, docs/security.md), its own
 * principal's subject, the bus streams' commands and dead letters, the KV and
 * object buckets, and the read/consume JetStream API; its own inbox only.
 */
export function servicePermissions(service: WritService, layout: BusLayout): SubjectPermissions {
  const { root, eventsPrefix: evt } = layout;
  const own = layout.servicePrincipals[service];
  const pub = [
    `${evt}.task.*`,
    `${evt}.principal.${own}`,
    ...OWNED_AGGREGATES[service].map((aggregate) => `${evt}.${aggregate}.*`),
    `${root}.cmd.>`,
    `${root}.qry.>`,
    `${root}.dlq.>`,
    '$KV.>',
    '$O.>',
    ...JS_CLIENT_API,
  ];
  const pubDeny = [...OPERATOR_ONLY];
  if (service === 'ingress') {
    // Ingress appends the registrations an operator signed (writ principal add), but never a service's keys.
    pub.push(`${evt}.principal.*`);
    pubDeny.push(...Object.entries(layout.servicePrincipals).filter(([name]) => name !== 'ingress').map(([, id]) => `${evt}.principal.${id}`));
  }
  const sub = [userInbox(`svc-${service}`) + '.>', `${root}.qry.${service}.>`, `${root}.cmd.${service}.>`];
  if (service === 'projection') pub.push(`${root}.proj.>`);
  if (service === 'executor') {
    // Liveness of the executor fleet (core NATS, not the log): each executor beats and hears the others.
    pub.push(`${root}.hb.executor.>`);
    sub.push(`${root}.hb.executor.>`);
  }
  return { pub: { allow: pub, deny: pubDeny }, sub: { allow: sub, deny: [] }, responses: SERVICE_RESPONSES };
}

/**
 * The same service's second user, for the connection its durable consumers pull on: the service's
 * subjects without the right to answer requests. nats-server 2.9 keeps, per connection whose user
 * may answer (`allow_responses`), every reply subject it delivered for the permission's TTL, and
 * once it holds 4,096 it sweeps them all on each delivery (`pruneReplyPerms`); every JetStream
 * delivery carries one (its ack subject), so a connection pulling ~450 events a second had the
 * server sweep ~27,000 entries per event: a quarter of its CPU. A user without responses keeps none.
 * Stolen, it does no more than the service's own credential.
 */
export function serviceConsumerPermissions(service: WritService, layout: BusLayout): SubjectPermissions {
  const { pub, sub } = servicePermissions(service, layout);
  return { pub, sub };
}

/** A dashboard: read-only on `<root>.proj.>`; it publishes nothing. */
export function dashboardPermissions(layout: BusLayout): SubjectPermissions {
  return { pub: { allow: [], deny: ['>'] }, sub: { allow: [`${layout.root}.proj.>`], deny: [] } };
}

/**
 * A human's CLI (director, operator acting as one): signed requests on
 * `<root>.qry.>` (the answering service checks the signer's authority), reading
 * the log and the projections, its own inbox; it cannot write an event, a
 * command or a bucket, nor change a stream.
 */
export function directorPermissions(user: string, layout: BusLayout): SubjectPermissions {
  return {
    pub: { allow: [`${layout.root}.qry.>`, ...JS_CLIENT_API.filter((subject) => subject !== '$JS.API.STREAM.CREATE.*')], deny: [...OPERATOR_ONLY] },
    sub: { allow: [userInbox(user) + '.>', `${layout.root}.proj.>`], deny: [] },
  };
}

/**
 * An agent, inside its own NATS account (so its `_INBOX.>` holds its replies
 * only): publish its own ingress subject, receive the publish acks. Its account
 * imports nothing else, so even an allow list mistake reaches nothing else.
 */
export function agentPermissions(principalId: string, layout: BusLayout): SubjectPermissions {
  return { pub: { allow: [agentIngressSubject(principalId, layout)], deny: [] }, sub: { allow: ['_INBOX.>'], deny: [] } };
}

/** `<root>.ingress.action.<principal_id>`: the one subject an agent may publish. */
export function agentIngressSubject(principalId: string, layout: BusLayout): string {
  return `${layout.root}.ingress.action.${principalId}`;
}
