import { z } from 'zod';

/** A Writ error code: `CONTEXT_REASON`, upper snake case, at least two tokens. */
export const WritErrorCode = z.string().regex(/^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/, 'must be a Writ error code such as PROJECTION_NOT_FOUND');

/** The media type of every error the HTTP API answers (RFC 9457). */
export const PROBLEM_JSON = 'application/problem+json';

/**
 * Where a problem type is documented: a relative URI reference the API itself
 * answers (`GET /v1/problems/<code>`), so the `type` of a problem is stable,
 * dereferenceable and names the code.
 */
export function problemType(code: string): string {
  return `/v1/problems/${code}`;
}

/** The `title` of a code's problem type: the code in words (`PROJECTION_NOT_FOUND` → `Projection not found`); it never varies between occurrences. */
export function problemTitle(code: string): string {
  const words = code.toLowerCase().replace(/_/g, ' ');
  return `${words.charAt(0).toUpperCase()}${words.slice(1)}`;
}

/**
 * An error of the HTTP API as RFC 9457 problem details
 * (`Content-Type: application/problem+json`). `code` is Writ's stable error
 * code: branch on it (or on `type`, which names it), never on `detail`.
 * `message` repeats `detail` for clients written against the earlier
 * `{ code, message }` body.
 */
export const ProblemDetails = z
  .strictObject({
    type: z.string().min(1).describe('A URI reference naming the problem type: /v1/problems/<code> (relative to the API).'),
    title: z.string().min(1).describe('The problem type in words; the same for every occurrence of a code.'),
    status: z.int().min(400).max(599).describe('The HTTP status of this response.'),
    detail: z.string().describe('What went wrong this time and what to do about it (secrets redacted).'),
    instance: z.string().optional().describe('The request path this occurrence answered.'),
    code: WritErrorCode.describe("Writ's stable error code: PROJECTION_NOT_FOUND, HTTP_AUTH_EXPIRED, INGRESS_STALE, ..."),
    message: z.string().describe('Deprecated: the same text as detail, for clients of the earlier { code, message } body.'),
    parameter: z.string().optional().describe('The query parameter, path parameter, header or body that was malformed (400s).'),
  })
  .meta({ title: 'ProblemDetails', description: 'An error as RFC 9457 problem details, with Writ\'s stable error code.' });
export type ProblemDetails = z.infer<typeof ProblemDetails>;

/** `GET /v1/problems/<code>`: what a problem type is. */
export const ProblemType = z
  .strictObject({
    type: z.string().min(1),
    code: WritErrorCode,
    title: z.string().min(1),
    status: z.int().min(400).max(599).describe('The status this code answers with.'),
  })
  .meta({ title: 'ProblemType', description: 'A problem type of the HTTP API: its code, title and status.' });
export type ProblemType = z.infer<typeof ProblemType>;
