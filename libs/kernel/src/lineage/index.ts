export { LineageError, type LineageErrorCode } from './lineage.errors.js';
export { tryFingerprint, tryPayloadHash, type LineageCrypto } from './lineage-crypto.js';
export { manifestLineage, peekManifestLineage, type ManifestLineage, type ManifestLineageResult } from './lineage-extra.js';
export { ParticipantCeilings, checkWithinCeilings, inheritedCeilings, parseFsCapability, type CeilingCheck, type FsGrant, type ParticipantCeilingsInput } from './participant-ceilings.js';
export { verifySpawnDocument, type LocalInstall, type ParentKeys, type SpawnDocumentCheck, type SpawnDocumentInput } from './spawn-verification.js';
export {
  evolveParticipant,
  initialParticipantState,
  isParticipantLive,
  isParticipantTerminal,
  participantDecider,
  type ArtifactObservation,
  type CallCommandData,
  type NoParticipant,
  type ParticipantCommand,
  type ParticipantCommandType,
  type ParticipantRecord,
  type ParticipantState,
  type SpawnCommandData,
} from './participant.decider.js';
export { checkParticipantAction, participantScope, type ParticipantActionCheck, type ParticipantActionContext, type ParticipantScope } from './participant-scope.js';
export {
  PARTICIPANT_SCOPE_ALLOWED,
  evaluateParticipantPolicy,
  participantScopeRef,
  type ParticipantPolicyEvaluation,
  type ParticipantPolicyFacts,
} from './participant-policy.js';
export { seedVerdict } from './seed-verdict.js';
