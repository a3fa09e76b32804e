import type { Context, ErrorHandler, NotFoundHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Logger } from '../engine/engine-context.js';
import { UnstorableValueError } from '../store/unstorable-value.js';
import { StoreUnavailableError } from '../store/store-errors.js';
import { StoreFaultError, storeFaultFields } from '../store/store-fault.js';
import { newId } from '../engine/ids.js';
import type { AppEnv } from './app-env.js';
import { errorPage } from './console/pages/error-page.js';
import { HttpProblem, PROBLEM_MEDIA_TYPE, type ProblemBody, problemDetails } from '../http/http-problem.js';

// A request with an Authorization header is an API or MCP client (the console goes by its
// cookie): its refusal is problem JSON wherever it was sent, e.g. a revoked agent token on /mcp, which
// the app's bearer check refuses before the MCP handler runs.
function wantsJson(c: Context): boolean {
  return (
    c.req.path.startsWith('/api/') ||
    c.req.path === '/healthz' ||
    c.req.path === '/readyz' ||
    c.req.path === '/metrics' ||
    c.req.header('authorization') !== undefined
  );
}

function respond(
  c: Context<AppEnv>,
  status: ContentfulStatusCode,
  body: ProblemBody,
  headers: Readonly<Record<string, string>> = {},
): Response {
  for (const [name, value] of Object.entries(headers)) c.header(name, value);
  c.header('Cache-Control', 'no-store');
  if (wantsJson(c))
    return c.body(JSON.stringify(problemDetails(status, body)), status, {
      'Content-Type': PROBLEM_MEDIA_TYPE,
    });
  const principal = c.get('principal');
  return c.html(
    errorPage({
      nonce: c.get('secureHeadersNonce') ?? '',
      session: principal?.via === 'session' ? principal.session : undefined,
      status,
      reason: body.reason,
      message: body.message,
      ...(body.correlationId ? { correlationId: body.correlationId } : {}),
    }),
    status,
  );
}

/**
 * The one place errors become responses. An {@link HttpProblem} answers with its status and an
 * RFC 9457 `application/problem+json` body `{ type, title, status, detail, reason, message, … }`
 * (see {@link problemDetails}; a page for console paths). Anything else is a bug: it is logged with a
 * correlation id, and the client gets `500 { reason: 'internal_error', correlationId }` with no stack.
 * A value no store can keep exactly ({@link UnstorableValueError}) is the request's fault:
 * `422 { reason: 'invalid_request' }` naming the column. A store that is unavailable for a while
 * ({@link StoreUnavailableError}: unreachable, stalled, disk full, read-only, locked) is
 * `503 { reason: 'store_unavailable' }` with `Retry-After`.
 */
export function errorHandler(logger: Logger): ErrorHandler<AppEnv> {
  return (error, c) => {
    if (error instanceof HttpProblem) return respond(c, error.status, error.body(), error.headers);
    // A value the request carried that no store can keep exactly (a NUL, a lone surrogate),
    // reaching a column through an operation's own fields: the client's input, not a bug.
    if (error instanceof UnstorableValueError) {
      logger.warn(
        { column: error.column, method: c.req.method, path: c.req.path },
        'unstorable value refused',
      );
      return respond(c, 422, { reason: 'invalid_request', message: error.message });
    }
    // The database or its disk is unavailable for a while (a restart, a full disk, a lock held
    // past its timeout): nothing was half-written, and the client may try again.
    if (error instanceof StoreUnavailableError) {
      const retryAfter = error instanceof StoreFaultError ? error.retryAfterSeconds : 5;
      logger.warn(
        { ...storeFaultFields(error), method: c.req.method, path: c.req.path },
        'store unavailable',
      );
      return respond(
        c,
        503,
        { reason: 'store_unavailable', message: error.message, retryAfterSeconds: retryAfter },
        { 'Retry-After': String(retryAfter) },
      );
    }
    if (error instanceof HTTPException && error.status < 500) {
      return respond(c, error.status, {
        reason: error.status === 404 ? 'not_found' : 'invalid_request',
        message: error.message || 'bad request',
      });
    }
    const correlationId = newId('cor');
    logger.error({ err: error, correlationId, method: c.req.method, path: c.req.path }, 'unexpected error');
    return respond(c, 500, {
      reason: 'internal_error',
      message: `something went wrong; quote correlation id ${correlationId}`,
      correlationId,
    });
  };
}

/** Unknown routes: 404 `not_found`, JSON or a page. */
export const notFoundHandler: NotFoundHandler<AppEnv> = (c) =>
  respond(c, 404, { reason: 'not_found', message: 'no such page' });
