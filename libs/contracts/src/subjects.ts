/** NATS subject names: the one place they are spelled. */
export const EVENTS_STREAM = 'WRIT_EVENTS';
export const EVENTS_SUBJECTS = 'writ.evt.>';
/** Signed ActionRequests from agents, kept so ingress can be replayed and audited. */
export const INGRESS_STREAM = 'WRIT_INGRESS';
export const INGRESS_SUBJECTS = 'writ.ingress.>';
/**
 * The header an agent names its idempotency key in on `writ.ingress.action.<principal_id>`.
 * Not `Nats-Msg-Id`: JetStream dedupes on that header alone, across the whole ingress
 * stream and every principal's subject, so another principal who publishes the same
 * id first makes the stream drop the genuine message (ingress still reads a
 * `Nats-Msg-Id` as the key when this header is absent, for older clients).
 */
export const INGRESS_IDEMPOTENCY_KEY_HEADER = 'Writ-Idempotency-Key';
/** Commands between services (work items; competing consumers). */
export const COMMANDS_STREAM = 'WRIT_COMMANDS';
export const COMMANDS_SUBJECTS = 'writ.cmd.>';
/** Dead letters with their reasons. */
export const DLQ_STREAM = 'WRIT_DLQ';
export const DLQ_SUBJECTS = 'writ.dlq.>';

export const subjects = {
  /** All events of one task; the subject sequence is the task's order and append guard. */
  taskEvents: (taskId: string) => `writ.evt.task.${taskId}`,
  /** Events of a non-task aggregate (principal, cell, policy). */
  entityEvents: (entityType: string, entityId: string) => `writ.evt.${entityType}.${entityId}`,
  /** Imperative commands to one service. */
  command: (service: string, verb: string) => `writ.cmd.${service}.${verb}`,
  /** Queries answered by one service. */
  query: (service: string, name: string) => `writ.qry.${service}.${name}`,
  /** Agents publish signed ActionRequests here. */
  ingressAction: (principalId: string) => `writ.ingress.action.${principalId}`,
  /** Projection row updates for dashboards (core NATS, not stored). */
  projection: (view: string, id: string) => `writ.proj.${view}.${id}`,
  /** Dead letters, with the reason in headers. */
  deadLetter: (origin: string) => `writ.dlq.${origin}`,
} as const;
