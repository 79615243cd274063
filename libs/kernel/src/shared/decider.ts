/**
 * Emmett-style deciders: three plain functions per aggregate. Commands are
 * imperative (`issue-grant`) and carry time and ids in their metadata and data;
 * events are past-tense, dotted (`grant.issued`) and carry everything `evolve`
 * needs, so that folding a stored stream never consults a clock.
 */

/** What every command carries besides its data: the caller's clock reading. */
export interface CommandMetadata {
  /** RFC 3339 instant at which the command is decided. The kernel never reads a clock. */
  readonly now: string;
}

export interface Command<Type extends string, Data> {
  readonly type: Type;
  readonly data: Data;
  readonly metadata: CommandMetadata;
}

export interface DomainEvent<Type extends string, Data> {
  readonly type: Type;
  readonly data: Data;
}

/**
 * An event `evolve` did not apply: malformed (fails its schema or unknown
 * type) or unexpected in the state it arrived in. `evolve` never throws; it
 * keeps the state and records the anomaly so that projections and `writ
 * verify` can surface it.
 */
export interface Anomaly {
  readonly event_type: string;
  readonly status: string;
  readonly reason: 'malformed' | 'unexpected';
}

export interface Decider<C, E, S> {
  readonly initialState: () => S;
  /** Returns the events the command produces; throws a `KernelError` when it is invalid in `state`. */
  readonly decide: (command: C, state: S) => E[];
  /** Total: folds any value, applying only well-formed events that are valid in `state`. */
  readonly evolve: (state: S, event: unknown) => S;
}

/** Folds `events` from the decider's initial state (or `from`). */
export function fold<C, E, S>(decider: Decider<C, E, S>, events: readonly unknown[], from?: S): S {
  return events.reduce<S>((state, event) => decider.evolve(state, event), from ?? decider.initialState());
}

/** Load → decide: the events `command` produces against the state folded from `history`. */
export function handle<C, E, S>(decider: Decider<C, E, S>, history: readonly unknown[], command: C): E[] {
  return decider.decide(command, fold(decider, history));
}

/** The `type` of an arbitrary value when it looks like an event, for anomaly records. */
export function eventTypeOf(event: unknown): string {
  if (typeof event === 'object' && event !== null) {
    const type = (event as { type?: unknown }).type;
    if (typeof type === 'string') return type.slice(0, 128);
  }
  return '(not an event)';
}

/** The part of every aggregate state `evolve` maintains itself. */
export interface EvolvingState {
  readonly status: string;
  readonly anomalies: readonly Anomaly[];
}

/** The most anomalies a state keeps; older ones are dropped, the count stays exact. */
export const MAX_ANOMALIES = 32;

/** Returns `state` with one more anomaly recorded (bounded, oldest dropped). */
export function withAnomaly<S extends EvolvingState>(state: S, event: unknown, reason: Anomaly['reason']): S {
  const anomaly: Anomaly = { event_type: eventTypeOf(event), status: String(state.status), reason };
  const anomalies = [...state.anomalies, anomaly];
  return { ...state, anomalies: anomalies.length > MAX_ANOMALIES ? anomalies.slice(-MAX_ANOMALIES) : anomalies };
}

type SafeParse<E> = (value: unknown) => { success: true; data: E } | { success: false };

/**
 * `schema.safeParse` remembered per event data object: a service folds the same stored events
 * (the same objects, from its read cache) once per event it handles, and parsing them again was
 * most of a fold's cost. A verdict is kept only for the same `type` with the same `data` object;
 * stored events are never mutated, so the verdict cannot go stale, and a data object no longer
 * referenced takes its verdict with it (WeakMap).
 */
export function parseOncePerData<E>(safeParse: SafeParse<E>): SafeParse<E> {
  const verdicts = new WeakMap<object, { readonly type: unknown; readonly verdict: ReturnType<SafeParse<E>> }>();
  return (value) => {
    const data = typeof value === 'object' && value !== null ? (value as { data?: unknown }).data : undefined;
    if (typeof data !== 'object' || data === null) return safeParse(value);
    const type = (value as { type?: unknown }).type;
    const known = verdicts.get(data);
    if (known !== undefined && known.type === type) return known.verdict;
    const verdict = safeParse(value);
    verdicts.set(data, { type, verdict });
    return verdict;
  };
}

/**
 * Builds a total `evolve`: the event is parsed with the context's schema (a
 * malformed or unknown event is recorded as `malformed`; `parseOncePerData`), then `apply` folds
 * it, returning undefined when the event is not valid in the current state
 * (recorded as `unexpected`). Nothing escapes: even a throwing value is an anomaly.
 */
export function totalEvolve<S extends EvolvingState, E>(
  schema: { safeParse: SafeParse<E> },
  apply: (state: S, event: E) => S | undefined,
): (state: S, event: unknown) => S {
  const safeParse = parseOncePerData((value) => schema.safeParse(value));
  return (state, event) => {
    try {
      const parsed = safeParse(event);
      if (!parsed.success) return withAnomaly(state, event, 'malformed');
      return apply(state, parsed.data) ?? withAnomaly(state, event, 'unexpected');
    } catch {
      return withAnomaly(state, event, 'malformed');
    }
  };
}
