export { RuntimeError, type RuntimeErrorCode } from './runtime-errors.js';
export { loadConfig } from './service-config.js';
export {
  atLeast,
  busConsumerSettings,
  artifactVariables, busConsumerVariables,
  envInt,
  renamedVariable,
  serviceEnvironment,
  serviceHttp,
  serviceStreams,
  serviceSubjects,
  StreamName,
  SubjectRoot,
  SubjectToken,
  type BusConsumerEnvironment,
  type ServiceEnvironment,
  type ServiceEnvironmentOptions,
  type ServiceHttp,
  type ServiceStreams,
} from './service-environment.js';
export { rooted, writSubjects, type BusStreamSubjects, type CommandSubjects, type WritSubjects } from './subject-root.js';
export { INGRESS_DUPLICATE_WINDOW_NS, ensureWritStreams, writStreamConfigs, type WritStreamsOptions } from './writ-streams.js';
export { loadOrCreateServiceKey } from './service-key.js';
export { KEYRING_LOCK_FILE, KEYRING_STATE_FILE, KeyringState, RetiringKey, ServiceKeyring, type OpenedKeyring, type ServiceKeyringOptions } from './service-keyring.js';
export { RotatingServiceKey, type KeyRotation, type KeyRotationResult, type RotatingServiceKeyOptions } from './rotating-service-key.js';
export { rotateKeyOnRequest, type KeyRotationRequestDeps, type ServiceKeyRotator } from './key-rotation-request.js';
export { TaskSerializer } from './task-serializer.js';
export { keyLifecycles, type KeyLifecycle } from './key-lifecycle.js';
export { describeWindow, keyStandingAt, keyValidAt, keyWindows, type KeyStanding, type KeyWindow } from './key-history.js';
export {
  PrincipalRegistry,
  evolvePrincipal,
  registerServicePrincipal,
  type PrincipalRecord,
  type PrincipalRegistryOptions,
} from './principal-registry.js';
export { causationIdOf, derivedId, serviceDraft, type ServiceDraftInput } from './event-drafts.js';
export { EventStoreTaskLog, type TaskAppendResult, type TaskHistory } from './task-log.js';
export { COMMAND_MAX_ROUNDS, decision, handleCommand, taskStream, versioned, type CommandDecision, type CommandStream, type HandleCommandOptions, type TaskStreams, type VersionedRead } from './command-handler.js';
export {
  BusWatch,
  ReadinessRegistry,
  natsConnected,
  type BusServer,
  type ReadinessCheck,
  type ReadinessReport,
  type ReadinessResult,
  type ReadinessValue,
} from './readiness.js';
export { ServiceRuntime, connectNats, warnKeptCapacities, type RotatingKeyOptions, type ServiceRuntimeOptions, type SigningKeyOptions } from './service-runtime.js';
export { isProcessEntry } from './process-entry.js';
export { PER_SERVICE_VARIABLES, sharedProcessEnvironments } from './shared-process-environment.js';
export { buildInfo, processBuildInfo, type BuildInfo } from './build-info.js';
export { NatsArtifactStore, artifactObjectName, artifactUri, lazyArtifactStore, type ArtifactBucketOptions, type ArtifactStoreFailure, type StoredArtifact } from './artifact-store.js';
export {
  SIGNED_REQUESTS,
  claimedSignedRequest,
  signRequest,
  verifySignedRequest,
  type SignedRequestDeps,
  type SignedRequestFailure,
  type SignedRequestFailureReason,
  type SignedRequestKind,
  type SignedRequestPrincipal,
  type SignedRequestPrincipals,
  type SignedRequestRules,
  type VerifiedSignedRequest,
} from './signed-request.js';
export { conversationStreamId, followUpTaskId, messageIngressId } from './conversation-ids.js';
export { HttpAuthError, httpPrincipals, mintHttpToken, verifyHttpBearer, type HttpCaller, type HttpTokenVerification, type MintHttpTokenOptions } from './http-credential.js';
export { WakeableSleep } from './wakeable-sleep.js';
export { connectBus, natsConnectOptions, readReplicas, replaceReplica, serverList, streamPeers, type ReplicaReading } from '@writ/bus';
export {
  DEFAULT_SERVICE_PRINCIPALS,
  WRIT_SERVICES,
  agentIngressSubject,
  agentPermissions,
  busLayout,
  dashboardPermissions,
  directorPermissions,
  serviceConsumerPermissions,
  servicePermissions,
  userInbox,
  type BusLayout,
  type SubjectPermissions,
  type WritService,
} from './bus-auth/bus-permissions.js';
export { DEFAULT_NATS_SERVER, NatsAuthority, fileExists, pushAccountJwt, writeSecret, type AgentBusCredential, type NatsServerSettings } from './bus-auth/nats-authority.js';
export {
  PG_SERVICE_GROUP,
  dropPgServiceRole,
  ensurePgServiceRole,
  generatePgPassword,
  pgAuthMethod,
  pgServiceRole,
  readPgPassword,
  scramSha256Verifier,
  type PgAdminQuery,
  type PgAuthMethod,
  type PgServiceRoleOutcome,
  type PgServiceRoleSpec,
} from './pg-auth/pg-roles.js';
export { initWritHome, type WritHome, type WritHomeOptions } from './bus-auth/writ-home.js';
export {
  MAX_CHAIN,
  REGISTRATION_AUTHORITY_CODES,
  REGISTRATION_FRESHNESS_MS,
  RegistrationAuthority,
  anchoredRegistrationCheck,
  claimedAuthorizers,
  type AuthorityVerdict,
  type PrincipalAuthority,
  type PrincipalEventLike,
  type PrincipalEventsLookup,
  type RegistrationAuthorityCode,
} from './registration-authority.js';
export { loadOperatorSigner, loadServiceEnrollment, serviceEnrollmentPath, signServiceEnrollment } from './service-enrollment.js';
export { TrustAnchoredPrincipals, decideRegistration, resolutionRegistrationOptions, signedPrincipalRegistration, loadTrustAnchor, type RegistrationConflict, type RegistrationDecision } from './principal-admin.js';
export { keyHistory, type PrincipalEvents } from './key-history.js';
export { APPROVAL_PACKET_FORMAT, approvalPacketDocument, approvalPacketHash, packetHashOfRef } from './approval-packet.js';
export {
  DIRECTOR_DECISIONS,
  RESOLUTION_AUTHORITY_CODES,
  RESOLUTION_CLOCK_SKEW_MS,
  ResolutionAuthority,
  ResolutionAuthorityError,
  approvalIdOf,
  checkResolutionAuthority,
  claimedResolver,
  principalHistory,
  requestedApproval,
  type PrincipalHistory,
  type PrincipalHistoryLookup,
  type PrincipalHistorySource,
  type RegistrationCheck,
  type ResolutionAuthorityCode,
  type ResolutionAuthorityOptions,
  type ResolutionCheck,
  type ResolutionCheckOptions,
  type ResolutionRefusal,
  type ResolvedApproval,
} from './resolution-authority.js';
export { QuarantineLedger } from './quarantine-ledger.js';
export {
  ConsumerStallWatch,
  assessConsumer,
  type ConsumerProgress,
  type ConsumerReading,
  type ConsumerRef,
  type ConsumerSample,
  type ConsumerStallWatchOptions,
  type StallAssessment,
  type StalledConsumer,
} from './consumer-stall.js';
export { serviceAuthorship, useSealKey, type ServiceAuthorship } from './service-authorship.js';
export { countDeadLetters, natsCredentialExpiry, observeRuntimeMetrics, retiringKeyExpiry, type DeadLetterSource, type KeyExpiry, type RuntimeMetricSources } from './runtime-metrics.js';
