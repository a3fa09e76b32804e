import { CountersignError } from '../canonical/errors.js';
import type { DenialReason } from '../operation/reasons.js';

/**
 * Reason codes of the HTTP layer itself, beside the lifecycle's {@link DenialReason}s: a request
 * that never reached the engine. Stable strings, like the lifecycle's.
 */
export const SERVER_REASONS = [
  'unauthenticated',
  'invalid_json',
  'invalid_form',
  'unsupported_media_type',
  'cross_site_request',
  'rate_limited',
  'body_too_large',
  'invalid_state',
  'sso_failed',
  'last_admin',
  'store_unavailable',
  'internal_error',
] as const;

/** One of {@link SERVER_REASONS}. */
export type ServerReason = (typeof SERVER_REASONS)[number];

/** Every reason an error response may carry. */
export type ProblemReason = DenialReason | ServerReason;

/** The members every error body carries beside RFC 9457's: countersign's reason and message. */
export interface ProblemBody {
  readonly reason: ProblemReason;
  readonly message: string;
  readonly correlationId?: string;
  readonly [extra: string]: unknown;
}

/**
 * The media type of every error body (RFC 9457). The body is a JSON object like any other: a
 * client that parses it as JSON still finds `reason` and `message`.
 */
export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

/** The prefix of every problem type URI: `urn:countersign:problem:<reason>`. */
export const PROBLEM_TYPE_PREFIX = 'urn:countersign:problem:';

/**
 * The problem type URI of a reason: `urn:countersign:problem:not_found`. A name, not a link: one
 * per reason code, stable like the code, documented in docs/server.md; clients never fetch it.
 */
export function problemType(reason: ProblemReason): string {
  return `${PROBLEM_TYPE_PREFIX}${reason}`;
}

/**
 * The RFC 9457 `title` of each reason: short, fixed, the same for every occurrence (the
 * occurrence's own words are `detail`). A reason without a title fails to compile here.
 */
export const PROBLEM_TITLES: Readonly<Record<ProblemReason, string>> = Object.freeze({
  not_found: 'Not found',
  forbidden: 'Forbidden',
  expired: 'Expired',
  declined: 'Declined',
  superseded: 'Superseded by an edit',
  stale_view: 'Stale view',
  replayed: 'Already decided',
  scope_mismatch: 'Scope mismatch',
  invalid_request: 'Invalid request',
  invalid_requested_scope: 'Invalid requested scope',
  corrupt_approval_record: 'Corrupt approval record',
  corrupt_audit_chain: 'Corrupt audit chain',
  unsupported_scope_version: 'Unsupported scope version',
  unknown_operation: 'Unknown operation',
  reconcile_unsupported: 'Reconcile unsupported',
  run_id_missing: 'Run id missing',
  run_mismatch: 'Run mismatch',
  revision_required: 'Revision required',
  grant_exhausted: 'Grant exhausted',
  grant_revoked: 'Grant revoked',
  outside_grant: 'Outside every grant',
  invalid_digest: 'Invalid digest',
  resource_mismatch: 'Resource mismatch',
  section_mismatch: 'Section mismatch',
  separation_of_duties: 'Separation of duties',
  rate_limited: 'Rate limited',
  already_approved: 'Already approved by you',
  recovering: 'Recovering',
  unauthenticated: 'Unauthenticated',
  invalid_json: 'Invalid JSON',
  invalid_form: 'Invalid form',
  unsupported_media_type: 'Unsupported media type',
  cross_site_request: 'Cross-site request',
  body_too_large: 'Body too large',
  invalid_state: 'Invalid sign-in state',
  sso_failed: 'Single sign-on failed',
  last_admin: 'Last admin',
  store_unavailable: 'Store unavailable',
  internal_error: 'Internal error',
});

/**
 * An error body as the server sends it: RFC 9457's `type`, `title`, `status` and `detail`, then
 * countersign's `reason` and `message` (`detail` and `message` are the same text; both stay so
 * clients of either read it), then the occurrence's own members (`issues`, `modelMessage`,
 * `retryAfterSeconds`, `limit`…).
 */
export interface ProblemDetails extends ProblemBody {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
}

/** {@link ProblemDetails} of a body answered with `status`. */
export function problemDetails(status: number, body: ProblemBody): ProblemDetails {
  // Spread last so the occurrence's members never overwrite the standard ones.
  const { reason, message, ...extra } = body;
  return {
    ...extra,
    type: problemType(reason),
    title: PROBLEM_TITLES[reason],
    status,
    detail: message,
    reason,
    message,
  };
}

/**
 * A web-standard `Response` of a problem, for handlers outside the Hono app's error path (the MCP
 * endpoint mounted elsewhere): `application/problem+json`, never cached.
 */
export function problemResponse(
  status: number,
  body: ProblemBody,
  headers: Readonly<Record<string, string>> = {},
): Response {
  return new Response(JSON.stringify(problemDetails(status, body)), {
    status,
    headers: { 'content-type': PROBLEM_MEDIA_TYPE, 'cache-control': 'no-store', ...headers },
  });
}

/** HTTP status codes the API answers errors with. */
export type ProblemStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 500 | 503;

/**
 * A request the server refuses, thrown from a handler and turned into a response in exactly one
 * place (the app's error handler): {@link ProblemDetails} as `application/problem+json` for the
 * API, a page for the console.
 */
export class HttpProblem extends CountersignError {
  readonly status: ProblemStatus;
  readonly reason: ProblemReason;
  /** Extra members of the JSON body (`issues`, `modelMessage`, `supersededBy`…). */
  readonly extra: Readonly<Record<string, unknown>>;
  /** Extra response headers (`Retry-After`, `WWW-Authenticate`). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    status: ProblemStatus,
    reason: ProblemReason,
    message: string,
    options: { extra?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.reason = reason;
    this.extra = Object.freeze({ ...(options.extra ?? {}) });
    this.headers = Object.freeze({ ...(options.headers ?? {}) });
  }

  /** The response body's `reason`, `message` and extra members (see {@link problemDetails}). */
  body(): ProblemBody {
    return { reason: this.reason, message: this.message, ...this.extra };
  }

  /** This problem as a web-standard response (see {@link problemResponse}). */
  toResponse(): Response {
    return problemResponse(this.status, this.body(), this.headers);
  }
}

/**
 * The status of a lifecycle refusal: `invalid_request` and `invalid_digest` 422, `run_id_missing`
 * 400, `not_found` 404, `forbidden` and `separation_of_duties` 403, `rate_limited` 429, every other
 * refusal (`stale_view`, `expired`, `declined`, `superseded`, `replayed`, `recovering`,
 * `section_mismatch`, `resource_mismatch`, …) 409.
 */
export function refusalStatus(reason: DenialReason): ProblemStatus {
  switch (reason) {
    case 'invalid_request':
      return 422;
    case 'run_id_missing':
      return 400;
    case 'not_found':
      return 404;
    case 'forbidden':
    case 'separation_of_duties':
      return 403;
    case 'invalid_digest':
      return 422;
    case 'rate_limited':
      return 429;
    default:
      return 409;
  }
}

/** A lifecycle refusal as a problem with its status. */
export function refusal(reason: DenialReason, message: string, extra?: Record<string, unknown>): HttpProblem {
  return new HttpProblem(refusalStatus(reason), reason, message, extra ? { extra } : {});
}

/**
 * An approval (or its replay) of a proposal whose attempt's worker stopped, awaiting the recovery
 * sweep: 409 `recovering`, like the other refusals of a proposal's state, since the server and its
 * store are fine (503 would tell a client, or a load balancer, that the server is unavailable, and
 * means `store_unavailable` here). With `retryAfterMs`, `Retry-After` in whole seconds (at least 1):
 * by then the sweep has taken the attempt over and a retry answers its outcome or `replayed`.
 */
export function recovering(message: string, retryAfterMs: number | undefined): HttpProblem {
  if (retryAfterMs === undefined) return refusal('recovering', message);
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new HttpProblem(409, 'recovering', message, {
    extra: { retryAfterSeconds: seconds },
    headers: { 'Retry-After': String(seconds) },
  });
}

/**
 * A quota refusal: 429 `rate_limited` with `Retry-After` in whole seconds (at least 1) and the
 * model-facing text, so an agent calling the API directly knows how long to wait.
 */
export function rateLimited(refused: {
  readonly retryAfterMs: number;
  readonly modelMessage: string;
  readonly limit: string;
}): HttpProblem {
  const seconds = Math.max(1, Math.ceil(refused.retryAfterMs / 1000));
  return new HttpProblem(429, 'rate_limited', refused.modelMessage, {
    extra: { modelMessage: refused.modelMessage, limit: refused.limit, retryAfterSeconds: seconds },
    headers: { 'Retry-After': String(seconds) },
  });
}

/**
 * A decision refused past the actor's refusal budget (`principal_refusals`): 429 `rate_limited`
 * with `Retry-After`, nothing audited.
 */
export function tooManyRefusals(refused: {
  readonly message: string;
  readonly retryAfterMs?: number;
}): HttpProblem {
  return rateLimited({
    retryAfterMs: refused.retryAfterMs ?? 60_000,
    modelMessage: refused.message,
    limit: 'principal_refusals',
  });
}

/**
 * A body larger than the reader's limit (API JSON, console forms and MCP alike): 413
 * `body_too_large`. The rest of the body stays unread, so the connection closes rather than drain it.
 */
export function bodyTooLarge(limit: number): HttpProblem {
  return new HttpProblem(413, 'body_too_large', `the request body is larger than ${limit} bytes`, {
    extra: { maxBytes: limit },
    headers: { Connection: 'close' },
  });
}
