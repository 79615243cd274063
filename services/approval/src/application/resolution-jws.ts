import { ApprovalResolution, parseContract } from '@writ/contracts';
import { ApprovalServiceError } from './approval-errors.js';

/**
 * The resolution a compact JWS claims to carry, read WITHOUT verifying it:
 * only to learn whose keys must verify it (`resolved_by`). Nothing read here
 * is trusted until the signature is checked and the verified payload parsed
 * again.
 */
export function claimedResolution(jws: string): ApprovalResolution {
  const parts = jws.split('.');
  if (parts.length !== 3 || parts.some((part) => !/^[A-Za-z0-9_-]*$/.test(part)) || parts[1] === '') {
    throw new ApprovalServiceError('APPROVAL_SIGNATURE_INVALID', 'resolution_jws is not a compact JWS with an attached payload');
  }
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(parts[1] as string, 'base64url').toString('utf8'));
  } catch (cause) {
    throw new ApprovalServiceError('APPROVAL_SIGNATURE_INVALID', 'the resolution payload is not JSON', { cause });
  }
  return parseResolution(payload);
}

/** Parses a resolution payload; not an ApprovalResolution → CONTRACT_INVALID listing the offending paths. */
export function parseResolution(payload: unknown): ApprovalResolution {
  return parseContract('ApprovalResolution', ApprovalResolution, payload);
}
