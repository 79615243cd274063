import { WritError } from '@writ/contracts';

/**
 * Failures of the ingress service itself (not rejections: a refused request
 * is an expected outcome and becomes an `ingress.rejected` event with an
 * `IngressRejectionCode`).
 */
export type IngressErrorCode =
  /** A resumed ingress can no longer be completed: the task changed under it after part of its events were stored. */
  | 'INGRESS_INTAKE_CONFLICT'
  /** The ingress log holds something ingress never writes (no `ingress.received` first, an unreadable claim). */
  | 'INGRESS_LOG_INCONSISTENT'
  /** A consumer or responder could not be set up at start-up. */
  | 'INGRESS_SETUP_FAILED';

export class IngressError extends WritError<IngressErrorCode> {
  constructor(code: IngressErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'IngressError';
  }
}
