import { timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { HttpProblem } from '../../http/http-problem.js';

// Written here rather than with hono/csrf: that middleware passes a request when EITHER the
// Origin or Sec-Fetch-Site looks right, and only for form content types; a state change here
// must pass every check the browser gives us AND carry the session's CSRF token.

/** The origin this server answers as: the configured public URL, or the request's own. */
export function expectedOrigin(c: Context, publicUrl: URL | undefined): string {
  return (publicUrl ?? new URL(c.req.url)).origin;
}

/**
 * Refuses a state-changing request a browser marks as coming from another site:
 * `Sec-Fetch-Site` other than `same-origin`, or an `Origin` naming another origin. With
 * `Referrer-Policy: no-referrer` browsers send `Origin: null` even for same-origin form posts, so
 * `null` passes only when `Sec-Fetch-Site: same-origin` vouches for it. Clients that send
 * neither header (curl, agents) go on to the CSRF token check.
 */
export function assertSameOrigin(c: Context, publicUrl: URL | undefined): void {
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin') {
    throw new HttpProblem(403, 'cross_site_request', `a ${site} request cannot change anything here`);
  }
  const origin = c.req.header('origin');
  if (origin === undefined || (origin === 'null' && site === 'same-origin')) return;
  if (origin !== expectedOrigin(c, publicUrl)) {
    throw new HttpProblem(403, 'cross_site_request', 'the request comes from another origin');
  }
}

/** Refuses a request whose CSRF token is missing or not the session's (compared in constant time). */
export function assertCsrfToken(expected: string, given: string | undefined): void {
  const a = Buffer.from(expected);
  const b = Buffer.from(given ?? '');
  if (a.length !== b.length || !timingSafeEqual(a, b)) {
    throw new HttpProblem(
      403,
      'cross_site_request',
      'the form is missing its CSRF token or it belongs to another session; reload the page',
    );
  }
}
