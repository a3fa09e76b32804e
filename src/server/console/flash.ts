import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { openSealed, sealValue } from '../auth/sealed-value.js';
import { secureCookies } from '../auth/session-cookie.js';

const NAME = 'countersign_flash';
const MAX_AGE_SECONDS = 60;

/** What a console form post led to, shown once on the page it redirects to. */
export type FlashKind =
  | 'approved'
  | 'partially_approved'
  | 'replayed'
  | 'declined'
  | 'edited'
  | 'reconciled'
  | 'still_pending'
  | 'grant_created'
  | 'grant_revoked'
  | 'operator_changed'
  | 'routing_changed'
  | 'slack_users_changed';

const KINDS: ReadonlySet<string> = new Set<FlashKind>([
  'approved',
  'partially_approved',
  'replayed',
  'declined',
  'edited',
  'reconciled',
  'still_pending',
  'grant_created',
  'grant_revoked',
  'operator_changed',
  'routing_changed',
  'slack_users_changed',
]);

/** Whom and where a flash is bound to: the signed-in session (its secret id) and the page path it is shown on. */
export interface FlashBinding {
  readonly sessionId: string;
  /** The path of the page that shows it, e.g. `/proposals/prp_…` or `/grants`. */
  readonly page: string;
}

// Sealed with the session's secret id as the key, which only this browser's HttpOnly cookie and
// the server know, for this cookie and page: a link cannot carry a flash, and another session's
// or another page's does not verify.
const purpose = (binding: FlashBinding) => `${NAME}:${binding.page}`;

const cookieOptions = { httpOnly: true, sameSite: 'Strict', path: '/' } as const;

/**
 * Remembers, for the next page view only, what a form post did. The result of a POST used to
 * ride in the redirect's query string (`?done=approved`), which anyone could put in a link and
 * make a pending proposal read "Approved."; this cookie is HttpOnly, lives a minute, and is
 * bound by an HMAC to the session and the page.
 */
export function writeFlash(
  c: Context,
  publicUrl: URL | undefined,
  binding: FlashBinding,
  kind: FlashKind,
): void {
  const value = sealValue(binding.sessionId, purpose(binding), kind);
  const options = { ...cookieOptions, maxAge: MAX_AGE_SECONDS };
  if (secureCookies(c, publicUrl)) setCookie(c, NAME, value, { ...options, secure: true, prefix: 'host' });
  else setCookie(c, NAME, value, options);
}

/**
 * Reads and clears this request's flash: the kind if it verifies for this session and proposal,
 * else undefined (a forged, foreign or stale cookie shows nothing). The query string plays no part.
 */
export function takeFlash(
  c: Context,
  publicUrl: URL | undefined,
  binding: FlashBinding,
): FlashKind | undefined {
  const secure = secureCookies(c, publicUrl);
  const value = secure ? getCookie(c, NAME, 'host') : getCookie(c, NAME);
  if (value === undefined) return undefined;
  if (secure) deleteCookie(c, NAME, { ...cookieOptions, secure: true, prefix: 'host' });
  else deleteCookie(c, NAME, cookieOptions);
  const opened = openSealed(binding.sessionId, purpose(binding), value, 200);
  return opened.kind === 'opened' && KINDS.has(opened.payload) ? (opened.payload as FlashKind) : undefined;
}
