import type { z } from 'zod';
import { ActionRequest } from './action-request.js';
import { Approval } from './approval.js';
import { ApprovalPacket } from './approval-packet.js';
import { ApprovalResolution } from './governed-path/service-commands.js';
import { Artifact } from './artifact.js';
import { CapabilityGrantClaims } from './capability-grant.js';
import { parseContract, safeParseContract, type ParseResult } from './contract-error.js';
import { Decision } from './decision.js';
import { EventEnvelope } from './event-envelope.js';
import { EvidenceRef } from './evidence-ref.js';
import { IngressRecord } from './ingress-record.js';
import { Belief, ContextPack, ContextPackCompiled, KnowledgeLimits, MemoryRecord, SecretReference, WorkingState } from './knowledge/index.js';
import { CrashReport, Heartbeat } from './lineage/heartbeat.js';
import { LastWill } from './lineage/last-will.js';
import { SpawnManifest } from './lineage/spawn-manifest.js';
import { PolicyResult } from './policy-result.js';
import { Principal } from './principal.js';
import { ProblemDetails } from './projection-api/problem-details.js';
import { Receipt } from './receipt.js';
import { ReceiptBundle } from './receipt-bundle.js';
import { Step } from './step.js';
import { StepAttempt } from './step-attempt.js';
import { Task } from './task.js';
import { BlockedClaim } from './task-claims/blocked-claim.js';
import { Brief } from './task-claims/brief.js';
import { Correction } from './task-claims/correction.js';
import { DoneClaim } from './task-claims/done-claim.js';

/**
 * Every public contract by name. The JSON Schema generator, the proto
 * agreement test and `parseNamedContract` all read this table; a contract
 * missing here has no published schema.
 */
export const CONTRACTS = Object.freeze({
  EventEnvelope,
  Principal,
  Task,
  Step,
  StepAttempt,
  IngressRecord,
  ActionRequest,
  PolicyResult,
  Decision,
  Approval,
  ApprovalPacket,
  ApprovalResolution,
  CapabilityGrantClaims,
  Artifact,
  EvidenceRef,
  Receipt,
  Brief,
  DoneClaim,
  BlockedClaim,
  Correction,
  SpawnManifest,
  LastWill,
  Heartbeat,
  CrashReport,
  ReceiptBundle,
  // The HTTP API's errors. (The projection's rows are the dashboard contract's,
  // @writ/contracts/projection-rows, with their own documents under docs/schemas/projection-rows.)
  ProblemDetails,
  WorkingState,
  Belief,
  MemoryRecord,
  ContextPack,
  ContextPackCompiled,
  SecretReference,
  KnowledgeLimits,
});

export type Contracts = typeof CONTRACTS;
export type ContractName = keyof Contracts;

/** The contract names, in registry order. */
export const CONTRACT_NAMES = Object.freeze(Object.keys(CONTRACTS) as ContractName[]);

/** Parses `input` as the named contract, throwing a `ContractError` listing every offending path. */
export function parseNamedContract<N extends ContractName>(name: N, input: unknown): z.output<Contracts[N]> {
  return parseContract(name, CONTRACTS[name], input) as z.output<Contracts[N]>;
}

/** Parses `input` as the named contract without throwing. */
export function safeParseNamedContract<N extends ContractName>(name: N, input: unknown): ParseResult<z.output<Contracts[N]>> {
  return safeParseContract(name, CONTRACTS[name], input) as ParseResult<z.output<Contracts[N]>>;
}
