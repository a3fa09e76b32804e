import { hkdfSync, randomBytes } from 'node:crypto';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { OidcTransaction } from '../auth/oidc.js';
import { openSealed, type SealingKey, sealValue } from '../auth/sealed-value.js';
import { secureCookies } from '../auth/session-cookie.js';

const NAME = 'countersign_oidc';
const MAX_AGE_SECONDS = 600;
/** Longer than any transaction this server writes (about 900 characters with a 300-character landing path). */
const MAX_LENGTH = 2000;

// SameSite=Lax, not Strict: the provider's redirect back to the callback is a cross-site
// top-level navigation, and a Strict cookie would not come with it. HttpOnly, `__Host-` and
// Secure where the browser allows it, like the session cookie; ten minutes; cleared by the
// callback whatever its outcome, so a transaction is used at most once.
const options = { httpOnly: true, sameSite: 'Lax', path: '/' } as const;

/** Why the callback found no usable sign-in transaction in this browser (logged, never shown). */
export type TransactionRefusal = 'missing' | 'malformed' | 'tampered' | 'expired';

/** This browser's sign-in transaction, or why there is none. */
export type TakenTransaction =
  | { readonly kind: 'taken'; readonly transaction: OidcTransaction }
  | { readonly kind: 'refused'; readonly reason: TransactionRefusal };

/**
 * The key one app instance seals transaction cookies under. With a client secret it is derived
 * from it (HKDF, for this purpose only), so every instance behind one load balancer, and the same
 * instance after a restart, opens the cookies the others wrote. A public client has no secret to
 * share: the key is random at start, so a restart in the middle of a sign-in, or a callback that
 * reaches another instance, makes the operator sign in again (a transaction lives ten minutes).
 */
export function oidcCookieKey(clientSecret: string | undefined): SealingKey {
  if (clientSecret === undefined || clientSecret === '') return randomBytes(32);
  return Buffer.from(hkdfSync('sha256', clientSecret, '', 'countersign oidc transaction cookie', 32));
}

/**
 * Keeps a sign-in's state, nonce, PKCE verifier and landing path in this browser until the
 * callback, sealed with an HMAC under `key` for this cookie's name: the browser can read it but
 * not change it, and a value sealed for another cookie does not open here.
 */
export function writeOidcCookie(
  c: Context,
  publicUrl: URL | undefined,
  key: SealingKey,
  transaction: OidcTransaction,
): void {
  const value = sealValue(key, NAME, Buffer.from(JSON.stringify(transaction)).toString('base64url'));
  const withAge = { ...options, maxAge: MAX_AGE_SECONDS };
  if (secureCookies(c, publicUrl)) setCookie(c, NAME, value, { ...withAge, secure: true, prefix: 'host' });
  else setCookie(c, NAME, value, withAge);
}

/**
 * Reads and clears this browser's sign-in transaction: refused when missing, over-long or not
 * JSON of the right shape (`malformed`), not sealed under `key` for this cookie (`tampered`), or
 * older than ten minutes by `now` (`expired`). Never throws on what the browser sent.
 */
export function takeOidcCookie(
  c: Context,
  publicUrl: URL | undefined,
  key: SealingKey,
  now: number,
): TakenTransaction {
  const secure = secureCookies(c, publicUrl);
  const value = secure ? getCookie(c, NAME, 'host') : getCookie(c, NAME);
  if (value === undefined) return { kind: 'refused', reason: 'missing' };
  if (secure) deleteCookie(c, NAME, { ...options, secure: true, prefix: 'host' });
  else deleteCookie(c, NAME, options);
  const opened = openSealed(key, NAME, value, MAX_LENGTH);
  if (opened.kind === 'refused') return opened;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(opened.payload, 'base64url').toString('utf8'));
  } catch {
    return { kind: 'refused', reason: 'malformed' };
  }
  if (typeof parsed !== 'object' || parsed === null) return { kind: 'refused', reason: 'malformed' };
  const t = parsed as Record<string, unknown>;
  const strings = ['state', 'nonce', 'verifier', 'next'].every((k) => typeof t[k] === 'string');
  if (!strings || typeof t['at'] !== 'number') return { kind: 'refused', reason: 'malformed' };
  const at = t['at'];
  // A future `at` under a valid seal means clocks disagree by more than a minute: refused as well.
  if (now - at > MAX_AGE_SECONDS * 1000 || at > now + 60_000) return { kind: 'refused', reason: 'expired' };
  return { kind: 'taken', transaction: t as unknown as OidcTransaction };
}
