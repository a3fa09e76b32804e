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
  'store_unavailable',
  'internal_error',
] as const;

/** One of {@link SERVER_REASONS}. */
export type ServerReason = (typeof SERVER_REASONS)[number];

/** Every reason an error response may carry. */
export type ProblemReason = DenialReason | ServerReason;

/** The JSON body of every error response of the API. */
export interface ProblemBody {
  readonly reason: ProblemReason;
  readonly message: string;
  readonly correlationId?: string;
  readonly [extra: string]: unknown;
}

/** HTTP status codes the API answers errors with. */
export type ProblemStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 500 | 503;

/**
 * A request the server refuses, thrown from a handler and turned into a response in exactly one
 * place (the app's error handler): JSON `{ reason, message, … }` for the API, a page for the console.
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

  /** The response body. */
  body(): ProblemBody {
    return { reason: this.reason, message: this.message, ...this.extra };
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
