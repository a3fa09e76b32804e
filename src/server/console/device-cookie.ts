import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import type { TrustedDevice } from '../directory/principal-directory.js';
import { secureCookies } from '../auth/session-cookie.js';

const NAME = 'countersign_device';

/**
 * The browser's trusted-device id (OWASP's "device cookie"): issued at each successful sign-in,
 * it lets this browser sign the same operator in again under its own attempt limit, whatever
 * others try against that email or from that address. HttpOnly, SameSite=Strict, Path=/, and
 * `__Host-` with Secure where the browser allows it, like the session cookie. It outlives
 * sign-out on purpose: it proves an earlier sign-in, not a live session.
 */
export function writeDeviceCookie(c: Context, publicUrl: URL | undefined, device: TrustedDevice): void {
  const options = { httpOnly: true, sameSite: 'Strict', path: '/', maxAge: device.maxAgeSeconds } as const;
  if (secureCookies(c, publicUrl))
    setCookie(c, NAME, device.id, { ...options, secure: true, prefix: 'host' });
  else setCookie(c, NAME, device.id, options);
}

/** The trusted-device id this request's cookie carries (only the cookie name this context uses). */
export function readDeviceCookie(c: Context, publicUrl: URL | undefined): string | undefined {
  return secureCookies(c, publicUrl) ? getCookie(c, NAME, 'host') : getCookie(c, NAME);
}
