export { JetStreamServer, JETSTREAM_TRANSPORT, type JetStreamServerEvents, type JetStreamServerStatus } from './jetstream-server.js';
export { busOptions, BUS_OPTIONS_KEY, DEAD_LETTER_DELIVERIES, DEFAULTS, type ConsumerOptions, type JetStreamServerOptions } from './bus-options.js';
export { JetStreamContext, RequestContext, MSG_ID_HEADER, type HeaderMap } from './bus-context.js';
export { BusExceptionFilter } from './bus-exception.filter.js';
export {
  backoffDelay,
  classifierFromTable,
  decideAck,
  DEFAULT_ERROR_ACTIONS,
  DEFAULT_FALLBACK_ACTION,
  type AckDecision,
  type BackoffSettings,
  type DeadLetterKind,
  type ErrorAction,
  type ErrorActionTable,
  type ErrorClassifier,
  type RetrySettings,
} from './ack-policy.js';
export { toHandlerFailure, type HandlerFailure } from './handler-failure.js';
export { DeadLetterHeaders, quarantineOf } from './dead-letter.js';
export type { DeadLetterEvent } from './durable-consumer.js';
export { defaultDeadLetterSubject, durableName, patternToken } from './consumer-names.js';
export { ERROR_CODE_HEADER } from './request-responder.js';
export {
  BusClient,
  type BusClientConnectOptions,
  type BusClientOptions,
  type HeaderValues,
  type PubAck,
  type PublishOptions,
  type RequestOptions,
} from './bus-client.js';
export { BusError, RemoteError, type BusErrorCode } from './bus-errors.js';
export {
  HeldTimer,
  type HeldTimerFiring,
  type HeldTimerJob,
  type HeldTimerOptions,
  type HeldTimerOutcome,
  type HeldTimerOutcomeKind,
} from './held-timer.js';
export { BUS_START_TIMEOUT_MS_DEFAULT, SERVICE_CONNECTION, connectBus, connectConsumerBus, consumerCredsFile, inboxPrefixOf, natsConnectOptions, serverList, userJwtOf, type BusStartOptions, type NatsCredentialEnvironment } from './nats-credentials.js';
export { compareReplicas, readReplicas, replaceReplica, streamPeers, type DivergedReplica, type ReadReplicasOptions, type ReplaceReplicaOptions, type ReplicaAgreement, type ReplicaMessage, type ReplicaReading, type ReplicaView } from './replica-agreement.js';
