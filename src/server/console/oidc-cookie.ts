import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { OidcTransaction } from '../auth/oidc.js';
import { secureCookies } from '../auth/session-cookie.js';

const NAME = 'countersign_oidc';
const MAX_AGE_SECONDS = 600;

// SameSite=Lax, not Strict: the provider's redirect back to the callback is a cross-site
// top-level navigation, and a Strict cookie would not come with it. HttpOnly, `__Host-` and
// Secure where the browser allows it, like the session cookie; ten minutes; cleared by the
// callback whatever its outcome, so a transaction is used at most once.
const options = { httpOnly: true, sameSite: 'Lax', path: '/' } as const;

/** Keeps a sign-in's state, nonce, PKCE verifier and landing path in this browser until the callback. */
export function writeOidcCookie(c: Context, publicUrl: URL | undefined, transaction: OidcTransaction): void {
  const value = Buffer.from(JSON.stringify(transaction)).toString('base64url');
  const withAge = { ...options, maxAge: MAX_AGE_SECONDS };
  if (secureCookies(c, publicUrl)) setCookie(c, NAME, value, { ...withAge, secure: true, prefix: 'host' });
  else setCookie(c, NAME, value, withAge);
}

/**
 * Reads and clears this browser's sign-in transaction: undefined when missing, malformed or older
 * than ten minutes by `now`.
 */
export function takeOidcCookie(
  c: Context,
  publicUrl: URL | undefined,
  now: number,
): OidcTransaction | undefined {
  const secure = secureCookies(c, publicUrl);
  const value = secure ? getCookie(c, NAME, 'host') : getCookie(c, NAME);
  if (value === undefined) return undefined;
  if (secure) deleteCookie(c, NAME, { ...options, secure: true, prefix: 'host' });
  else deleteCookie(c, NAME, options);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value.slice(0, 2000), 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const t = parsed as Record<string, unknown>;
  const strings = ['state', 'nonce', 'verifier', 'next'].every((k) => typeof t[k] === 'string');
  if (!strings || typeof t['at'] !== 'number') return undefined;
  const at = t['at'];
  if (now - at > MAX_AGE_SECONDS * 1000 || at > now + 60_000) return undefined;
  return t as unknown as OidcTransaction;
}
