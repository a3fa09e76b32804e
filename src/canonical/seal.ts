import { createHmac, timingSafeEqual } from 'node:crypto';
import { type CanonicalizeOptions, canonicalBytes } from './canonicalize.js';
import { ConfigurationError } from './errors.js';

/** Shortest seal key accepted, in bytes (a string key counts its UTF-8 bytes). */
export const MIN_SEAL_KEY_BYTES = 32;

const SEAL_HEX = /^[0-9a-f]{64}$/;

function keyBytes(key: string | Uint8Array): Uint8Array {
  let bytes: Uint8Array;
  if (typeof key === 'string') bytes = Buffer.from(key, 'utf8');
  else if (key instanceof Uint8Array) bytes = key;
  else throw new ConfigurationError('a seal key must be a string or a Uint8Array');
  if (bytes.length < MIN_SEAL_KEY_BYTES) {
    throw new ConfigurationError(
      `a seal key must be at least ${MIN_SEAL_KEY_BYTES} bytes, got ${bytes.length}; use a random server secret`,
    );
  }
  return bytes;
}

/**
 * Seals a JSON value with a server key: HMAC-SHA-256 over the UTF-8 bytes of its RFC 8785
 * canonical JSON, as 64 lowercase hex characters. Unlike a plain {@link digest}, a seal cannot
 * be recomputed by someone who can write the database but does not hold the key, so a record
 * edited by hand no longer verifies.
 *
 * @param key At least 32 bytes of secret; a string counts its UTF-8 bytes. Keep it out of the
 * database it protects.
 * @throws {ConfigurationError} when the key is shorter than 32 bytes.
 * @throws {CanonicalizationError} when the value is not JSON data (see {@link canonicalize}).
 *
 * @example
 * const key = process.env.COUNTERSIGN_SEAL_KEY!; // 32+ random bytes
 * const stamp = seal({ id: 'prp_1', digest: d.sha256 }, key);
 * verifySeal({ id: 'prp_1', digest: d.sha256 }, key, stamp); // true
 */
export function seal(value: unknown, key: string | Uint8Array, options?: CanonicalizeOptions): string {
  const secret = keyBytes(key);
  return createHmac('sha256', secret).update(canonicalBytes(value, options)).digest('hex');
}

/**
 * Checks a seal made by {@link seal} in constant time. Returns `false`, never throws, when the
 * seal is malformed (not 64 lowercase hex characters) or does not match; a missing or
 * too-short key and a value that is not JSON data are the caller's bugs and do throw.
 *
 * @throws {ConfigurationError} when the key is shorter than 32 bytes.
 * @throws {CanonicalizationError} when the value is not JSON data.
 *
 * @example
 * if (!verifySeal(record.contract, key, record.seal)) refuse('corrupt_approval_record');
 */
export function verifySeal(
  value: unknown,
  key: string | Uint8Array,
  seal: string,
  options?: CanonicalizeOptions,
): boolean {
  const secret = keyBytes(key);
  const expected = createHmac('sha256', secret).update(canonicalBytes(value, options)).digest();
  if (typeof seal !== 'string' || !SEAL_HEX.test(seal)) return false;
  return timingSafeEqual(expected, Buffer.from(seal, 'hex'));
}
