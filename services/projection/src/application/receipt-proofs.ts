import { GetInclusionProof, InclusionProofReply, hasErrorCode, parseContract, safeParseContract } from '@writ/contracts';
import type { Upstream } from './ports.js';
import { ProjectionError } from './projection-errors.js';

/**
 * `GET /v1/receipts/<id>/inclusion-proof`: the receipt's RFC 9162 inclusion
 * proof and the signed tree head it is against, asked of the receipt
 * service (`<root>.qry.receipt.inclusion-proof`, as `writ tlog prove` does)
 * and passed back unchanged. The projection checks nothing and vouches for
 * nothing: the proof is only worth what the caller verifies (the head's
 * signature against `GET /v1/keys`, the leaf against the receipt's own body,
 * the path against the signed root), as the console does in the browser.
 */
export class ReceiptProofs {
  constructor(
    private readonly upstream: Upstream,
    /** `<root>.qry.receipt.inclusion-proof`. */
    private readonly subject: string,
  ) {}

  async inclusionProof(receiptId: string, treeSize: unknown): Promise<InclusionProofReply> {
    let size: number | undefined;
    if (treeSize !== undefined) {
      size = Number(treeSize);
      if (typeof treeSize !== 'string' || !/^\d{1,15}$/.test(treeSize)) {
        throw new ProjectionError('PROJECTION_REQUEST_INVALID', 'tree_size must be a whole number', { details: { parameter: 'tree_size' } });
      }
    }
    const query = parseContract('GetInclusionProof', GetInclusionProof, { receipt_id: receiptId, ...(size === undefined ? {} : { tree_size: size }) });
    let reply: unknown;
    try {
      reply = await this.upstream.request(this.subject, query);
    } catch (error) {
      // Issued but not sequenced yet: as missing as a receipt not projected yet (the caller retries).
      if (hasErrorCode(error, 'RECEIPT_NOT_IN_LOG')) {
        throw new ProjectionError('PROJECTION_NOT_FOUND', `receipt ${receiptId} is not in the transparency log yet: retry shortly`, { cause: error, details: { receipt_id: receiptId } });
      }
      throw error;
    }
    const parsed = safeParseContract('InclusionProofReply', InclusionProofReply, reply);
    if (!parsed.ok) throw new ProjectionError('PROJECTION_UPSTREAM_INVALID_REPLY', `${this.subject} answered something that is not an InclusionProofReply; check the receipt service's logs`);
    return parsed.value;
  }
}
