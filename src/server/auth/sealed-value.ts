import { createHmac, timingSafeEqual } from 'node:crypto';

/** A key to seal values with: a secret string, or its bytes. */
export type SealingKey = string | Uint8Array;

/** What {@link openSealed} found: the payload, or why the value is refused. */
export type OpenedValue =
  | { readonly kind: 'opened'; readonly payload: string }
  | {
      readonly kind: 'refused';
      /** `malformed`: too long or no MAC part; `tampered`: the MAC does not match (another key, purpose or payload). */
      readonly reason: 'malformed' | 'tampered';
    };

// The purpose is length-prefixed so that no purpose and payload pair reads as another pair.
function mac(key: SealingKey, purpose: string, payload: string): string {
  return createHmac('sha256', key)
    .update(`countersign-sealed:${purpose.length}:${purpose}:${payload}`)
    .digest('base64url');
}

/**
 * Seals a payload for one purpose (a cookie name, with anything else it is bound to): the payload,
 * a dot, and an HMAC-SHA256 (base64url) over the purpose and the payload. The payload stays
 * readable; it must be cookie-safe (base64url, or a plain word) to go in a cookie.
 *
 * @example
 * setCookie(c, 'countersign_oidc', sealValue(key, 'countersign_oidc', encoded));
 */
export function sealValue(key: SealingKey, purpose: string, payload: string): string {
  return `${payload}.${mac(key, purpose, payload)}`;
}

/**
 * Opens a value made by {@link sealValue} under the same key and purpose, comparing the MAC in
 * constant time. Never throws on what a client sent: a value longer than `maxLength` characters,
 * or without a MAC part, is `malformed`; any other mismatch is `tampered`.
 */
export function openSealed(key: SealingKey, purpose: string, value: string, maxLength: number): OpenedValue {
  const dot = value.lastIndexOf('.');
  if (value.length > maxLength || dot < 0) return { kind: 'refused', reason: 'malformed' };
  const payload = value.slice(0, dot);
  const given = Buffer.from(value.slice(dot + 1));
  const expected = Buffer.from(mac(key, purpose, payload));
  return given.length === expected.length && timingSafeEqual(given, expected)
    ? { kind: 'opened', payload }
    : { kind: 'refused', reason: 'tampered' };
}
