export {
  PrincipalKeyAdded,
  PrincipalKeyRevoked,
  PrincipalRegistered,
  PrincipalRole,
  PublicEd25519Jwk,
} from './principal-events.js';
export {
  IngressAccepted,
  IngressChannel,
  IngressReceived,
  IngressRejected,
  IngressRejectionCode,
  MAX_INGRESS_BYTES,
} from './ingress-events.js';
export { CellEnvironment, ChangedFile, ExecutionCompleted, PolicyEvaluated, ReceiptIssued } from './fact-events.js';
export { PolicyProfileApplied, PolicyProfileRecord, PolicyProfileVersion } from './policy-profiles.js';
export {
  ApprovalResolution,
  CancelApproval,
  CloseCell,
  CloseCellReason,
  COMMANDS,
  EvaluatePolicy,
  IssueGrant,
  IssueReceipt,
  ObserveWorkspace,
  RequestApproval,
  ResolveApproval,
  RunAction,
  SubmitAction,
  WorkspaceObserved,
} from './service-commands.js';
