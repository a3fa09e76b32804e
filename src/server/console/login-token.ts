import { randomBytes } from 'node:crypto';
import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { secureCookies } from '../auth/session-cookie.js';

const NAME = 'countersign_login';

/**
 * The sign-in form's CSRF token (double submit: a cookie and a hidden field that must match),
 * since there is no session yet to bind a token to. Reuses the browser's cookie when it has one.
 */
export function loginToken(c: Context, publicUrl: URL | undefined): string {
  const existing = readLoginToken(c, publicUrl);
  if (existing) return existing;
  const token = randomBytes(32).toString('base64url');
  const options = { httpOnly: true, sameSite: 'Strict', path: '/', maxAge: 3600 } as const;
  if (secureCookies(c, publicUrl)) setCookie(c, NAME, token, { ...options, secure: true, prefix: 'host' });
  else setCookie(c, NAME, token, options);
  return token;
}

/** The login token cookie of this request, if well-formed. */
export function readLoginToken(c: Context, publicUrl: URL | undefined): string | undefined {
  const value = secureCookies(c, publicUrl) ? getCookie(c, NAME, 'host') : getCookie(c, NAME);
  return value && /^[A-Za-z0-9_-]{43}$/.test(value) ? value : undefined;
}
