/** Injection tokens of the executor's composition root (values that are not classes). */
export const EXECUTOR_CONFIG = Symbol.for('writ.executor.config');
export const EXECUTOR_OPTIONS = Symbol.for('writ.executor.options');
export const EXECUTOR_LOGGER = Symbol.for('writ.executor.logger');
export const NATS_CONNECTION = Symbol.for('writ.executor.nats');
export const BUS_STREAMS = Symbol.for('writ.executor.bus-streams');
/** The loop that settles, every cell sweep interval, uses this executor journaled and nobody is working on (`RunActionHandler.reconcileJournal`). */
export const JOURNAL_SWEEP_TIMER = Symbol.for('writ.executor.journal-sweep');
/** The deployment's trust anchor (`{ anchor }`; undefined without WRIT_TRUST_ANCHOR): grant issuer keys must chain to it. */
export const TRUST_ANCHOR = Symbol.for('writ.executor.trust-anchor');
