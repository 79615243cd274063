import { COMMANDS } from '@writ/contracts';

/** The leading token every constant subject carries (`writ.cmd.policy.evaluate`). */
const WRIT_PREFIX = 'writ.';

/**
 * `writ.cmd.policy.evaluate` → `<root>.cmd.policy.evaluate`: the leading `writ`
 * of a constant subject replaced by the configured subject root, so a test (or
 * a second deployment on the same NATS) runs beside the real one. A subject
 * that does not start with `writ.` is returned as it is.
 */
export function rooted(subject: string, root: string): string {
  return subject.startsWith(WRIT_PREFIX) ? `${root}.${subject.slice(WRIT_PREFIX.length)}` : subject;
}

/** The governed path's command and query subjects (`COMMANDS`), under one root. */
export type CommandSubjects = { readonly [K in keyof typeof COMMANDS]: string };

/** The subjects of the bus streams (`ensureWritStreams`'s `subjects`). */
export interface BusStreamSubjects {
  /** `<root>.ingress.>` (stream WRIT_INGRESS). */
  readonly ingress: string;
  /** `<root>.cmd.>` (stream WRIT_COMMANDS). */
  readonly commands: string;
  /** `<root>.dlq.>` (stream WRIT_DLQ). */
  readonly dlq: string;
}

/** Every subject of the governed path (docs/governed-path.md) under one subject root. */
export interface WritSubjects {
  readonly root: string;
  /** Subject prefix of the event log: `<root>.evt` unless configured otherwise (`WRIT_EVENTS_PREFIX`). */
  readonly events: string;
  /** Every event: `<events>.>`. */
  readonly allEvents: string;
  /** Every task's events: `<events>.task.>`. */
  readonly taskEvents: string;
  /** Where agents publish, one token per principal: `<root>.ingress.action.*`. */
  readonly ingressActions: string;
  /** `<root>.ingress.action.<principal_id>`. */
  readonly ingressAction: (principalId: string) => string;
  readonly commands: CommandSubjects;
  readonly streams: BusStreamSubjects;
  /** Prefix of the projection updates: `<root>.proj` (+ `.<view>.<id>`). */
  readonly projections: string;
  /** Prefix of the dead letters: `<root>.dlq` (+ `.<service>.<token>`). */
  readonly deadLetters: string;
  /** The dead-letter subject of one handler: `<root>.dlq.<service>.<token>`. */
  readonly deadLetter: (service: string, token: string) => string;
}

/**
 * The governed path's subjects under `root` (`writ` in production, a
 * `uniqueName('t')` in a test). `eventsPrefix` overrides the event log's
 * prefix (default `<root>.evt`).
 */
export function writSubjects(root: string, eventsPrefix?: string): WritSubjects {
  const events = eventsPrefix ?? `${root}.evt`;
  const commands = Object.fromEntries(Object.entries(COMMANDS).map(([name, subject]) => [name, rooted(subject, root)])) as unknown as CommandSubjects;
  return Object.freeze({
    root,
    events,
    allEvents: `${events}.>`,
    taskEvents: `${events}.task.>`,
    ingressActions: `${root}.ingress.action.*`,
    ingressAction: (principalId: string) => `${root}.ingress.action.${principalId}`,
    commands: Object.freeze(commands),
    streams: Object.freeze({ ingress: `${root}.ingress.>`, commands: `${root}.cmd.>`, dlq: `${root}.dlq.>` }),
    projections: `${root}.proj`,
    deadLetters: `${root}.dlq`,
    deadLetter: (service: string, token: string) => `${root}.dlq.${service}.${token}`,
  });
}
