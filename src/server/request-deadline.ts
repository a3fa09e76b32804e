import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './app-env.js';
import { HttpProblem } from '../http/http-problem.js';

/** Default of `CountersignAppOptions.requestDeadlineMs`. */
export const REQUEST_DEADLINE_MS = 15_000;

// Responses that stay open by design: the live event stream and the MCP endpoint's streams.
function streams(path: string): boolean {
  return path === '/api/v1/events' || path === '/mcp' || path.startsWith('/mcp/');
}

/**
 * Answers `503 store_unavailable` with `Retry-After` when a request has not finished within
 * `ms` (a stalled database whose statements each stay under their own timeout). The work goes on
 * and may still commit, so the message says to read before retrying; retrying an approval is safe
 * (it returns the stored outcome). Written here rather than with `hono/timeout`, whose
 * `HTTPException` the app's one error path treats as a bug (500): this is a named refusal.
 */
export function requestDeadline(ms: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (streams(c.req.path)) return next();
    let timer: NodeJS.Timeout | undefined;
    const passed = new Promise<'passed'>((resolve) => {
      timer = setTimeout(() => resolve('passed'), ms);
    });
    const work = next().then(() => 'done' as const);
    try {
      if ((await Promise.race([work, passed])) === 'done') return;
    } finally {
      clearTimeout(timer);
    }
    // The handler's own end (a response or an error) comes after the answer: nobody reads it.
    work.catch(() => {});
    const limit = ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`;
    throw new HttpProblem(
      503,
      'store_unavailable',
      `the request did not finish within ${limit} (the database is slow or unreachable); it may still complete: read the proposal before trying again`,
      { headers: { 'Retry-After': '5' }, extra: { retryAfterSeconds: 5 } },
    );
  };
}
