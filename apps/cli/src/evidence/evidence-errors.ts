import { WritError } from '@writ/contracts';

/** Why a bundle cannot be assembled from what the log and the transparency log gave. Closed; callers branch on the code. */
export type EvidenceErrorCode =
  /** The task has no `receipt.issued` yet: there is nothing to bundle. */
  | 'EVIDENCE_NO_RECEIPTS'
  /** No inclusion proof was given for one of the task's receipts (not yet sequenced in the transparency log?). */
  | 'EVIDENCE_PROOF_MISSING'
  /** A proof or the tree head does not verify: a bundle that cannot verify is never written. */
  | 'EVIDENCE_PROOF_INVALID'
  /** The key events of a principal the bundle needs (the receipt signer, a grant issuer) were not given. */
  | 'EVIDENCE_PRINCIPAL_MISSING';

export class EvidenceError extends WritError<EvidenceErrorCode> {
  constructor(code: EvidenceErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'EvidenceError';
  }
}
