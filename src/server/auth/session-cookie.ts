import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';

const NAME = 'countersign_session';
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether the browser will keep a `Secure` cookie from this request: https, or a loopback host
 * (Chromium and Firefox treat http://localhost and http://127.0.0.1 as secure contexts). Then
 * the session cookie is `__Host-countersign_session` with `Secure`; on plain http to any other
 * host it is `countersign_session` without `Secure`, since the browser would drop it otherwise.
 */
export function secureCookies(c: Context, publicUrl: URL | undefined): boolean {
  const url = publicUrl ?? new URL(c.req.url);
  return url.protocol === 'https:' || LOOPBACK.has(url.hostname) || url.hostname.endsWith('.localhost');
}

/** The session id the request's cookie carries (only the cookie name this context uses). */
export function readSessionCookie(c: Context, publicUrl: URL | undefined): string | undefined {
  return secureCookies(c, publicUrl) ? getCookie(c, NAME, 'host') : getCookie(c, NAME);
}

/** Sets the session cookie: HttpOnly, SameSite=Strict, Path=/, `__Host-` and Secure where the browser allows it. */
export function writeSessionCookie(
  c: Context,
  publicUrl: URL | undefined,
  sessionId: string,
  maxAgeSeconds: number,
): void {
  const options = { httpOnly: true, sameSite: 'Strict', path: '/', maxAge: maxAgeSeconds } as const;
  if (secureCookies(c, publicUrl))
    setCookie(c, NAME, sessionId, { ...options, secure: true, prefix: 'host' });
  else setCookie(c, NAME, sessionId, options);
}

/** Clears the session cookie. */
export function clearSessionCookie(c: Context, publicUrl: URL | undefined): void {
  if (secureCookies(c, publicUrl))
    deleteCookie(c, NAME, { httpOnly: true, sameSite: 'Strict', path: '/', secure: true, prefix: 'host' });
  else deleteCookie(c, NAME, { httpOnly: true, sameSite: 'Strict', path: '/' });
}
