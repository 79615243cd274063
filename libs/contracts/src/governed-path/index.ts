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
export {
  ApprovalResolution,
  COMMANDS,
  EvaluatePolicy,
  IssueGrant,
  IssueReceipt,
  RequestApproval,
  ResolveApproval,
  RunAction,
  SubmitAction,
} from './service-commands.js';
