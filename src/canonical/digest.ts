import * as crypto from 'node:crypto';
import { type CanonicalizeOptions, canonicalBytes, isWellFormedText } from './canonicalize.js';
import { CanonicalizationError, ConfigurationError } from './errors.js';

/**
 * The fingerprint of a JSON value: SHA-256 over the UTF-8 bytes of its RFC 8785 canonical
 * JSON. Store `sha256` in full; show `short` in logs, the console and audit lines, where
 * operators compare it by eye.
 */
export interface Digest {
  /** 64 lowercase hex characters. */
  readonly sha256: string;
  /** The first 12 hex characters of {@link sha256}. */
  readonly short: string;
}

/** Number of hex characters in a short hash. */
export const SHORT_HASH_LENGTH = 12;

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * Digests a JSON value: {@link canonicalize} it, then SHA-256 over the UTF-8 bytes. Key order
 * never changes the digest; any changed, added or removed member does.
 *
 * @throws {CanonicalizationError} when the value is not JSON data (see {@link canonicalize}).
 *
 * @example
 * digest({ order_id: 'ord_1', amount: 40 }).sha256 === digest({ amount: 40, order_id: 'ord_1' }).sha256; // true
 * digest({ amount: 40 }).short; // 12 hex characters, e.g. for a log line `hash=${short}`
 */
export function digest(value: unknown, options?: CanonicalizeOptions): Digest {
  // Hashes the canonical bytes as they are written: no string is built or re-encoded.
  const sha256 = sha256Hex(canonicalBytes(value, options));
  return { sha256, short: sha256.slice(0, SHORT_HASH_LENGTH) };
}

/**
 * Digests text that is already canonical JSON (the output of {@link canonicalize}), so a
 * caller that needs both the text and the digest canonicalizes once. The text is hashed as
 * given: it is not checked to be canonical.
 *
 * @throws {CanonicalizationError} `lone_surrogate` when the text is not well-formed UTF-16,
 * because its UTF-8 bytes would not be defined.
 *
 * @example
 * const canonical = canonicalize(args);
 * const { sha256, short } = digestCanonical(canonical);
 */
export function digestCanonical(canonicalText: string): Digest {
  if (!isWellFormedText(canonicalText)) {
    throw new CanonicalizationError(
      'lone_surrogate',
      '$',
      'the canonical text has an unpaired UTF-16 surrogate',
    );
  }
  return digestOf(canonicalText);
}

// crypto.hash (Node 20.12+) skips the Hash object and is about twice as fast on small inputs.
const oneShot: ((algorithm: string, data: string | Uint8Array, encoding: 'hex') => string) | undefined =
  typeof crypto.hash === 'function' ? crypto.hash : undefined;

/**
 * SHA-256 hex of bytes, or of a string's UTF-8 bytes, by the fastest means this Node version
 * has.
 *
 * @internal
 */
export function sha256Hex(data: string | Uint8Array): string {
  return oneShot ? oneShot('sha256', data, 'hex') : crypto.createHash('sha256').update(data).digest('hex');
}

/**
 * The digest of text known to be canonicalize's output (always well-formed).
 *
 * @internal
 */
export function digestOf(canonicalText: string): Digest {
  const sha256 = sha256Hex(canonicalText);
  return { sha256, short: sha256.slice(0, SHORT_HASH_LENGTH) };
}

/**
 * The short hash of a full SHA-256 digest: its first 12 hex characters. For a digest read back
 * from storage or a request, views use {@link displayHash}, which never throws.
 *
 * @throws {ConfigurationError} when the argument is not 64 lowercase hex characters.
 *
 * @example
 * shortHash(digest(args).sha256); // e.g. '3f1c0a9b2d47'
 */
export function shortHash(sha256: string): string {
  if (!SHA256_HEX.test(sha256)) {
    throw new ConfigurationError('shortHash expects a SHA-256 digest of 64 lowercase hex characters');
  }
  return sha256.slice(0, SHORT_HASH_LENGTH);
}

/**
 * Whether a value is a full SHA-256 digest as countersign stores it: 64 lowercase hex characters.
 *
 * @example
 * isSha256Hex(digest(args).sha256); // true
 * isSha256Hex('3f1c0a9b2d47'); // false: a short hash is not a digest
 */
export function isSha256Hex(value: unknown): value is string {
  return typeof value === 'string' && SHA256_HEX.test(value);
}

/** What {@link displayHash} shows instead of a short hash when a stored value is not a digest. */
export const INVALID_HASH_PREFIX = 'invalid:';

const INVALID_SHOWN_CHARS = 16;

/**
 * The short hash of a stored digest for a view (console, API, CLI, export, logs), which never
 * throws: a well-formed digest gives its {@link shortHash}; anything else (a short hash pasted into
 * a form, a forged or tampered value) gives `invalid:` and the first 16 characters as a JSON string
 * literal in printable ASCII (every other character as `\uXXXX`), so it can never pass for a hash
 * nor carry a control or bidi character. HTML views must still escape it.
 *
 * @example
 * displayHash(digest(args).sha256); // '3f1c0a9b2d47'
 * displayHash('abc123abc123'); // 'invalid:"abc123abc123"'
 * displayHash(undefined); // 'invalid:undefined'
 */
export function displayHash(value: unknown): string {
  if (isSha256Hex(value)) return value.slice(0, SHORT_HASH_LENGTH);
  if (typeof value !== 'string') return `${INVALID_HASH_PREFIX}${value === null ? 'null' : typeof value}`;
  // A JSON string literal with everything outside printable ASCII as \uXXXX: no control, bidi
  // or look-alike character reaches a terminal, a log line or a page.
  const shown = JSON.stringify(value.slice(0, INVALID_SHOWN_CHARS)).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return `${INVALID_HASH_PREFIX}${shown}${value.length > INVALID_SHOWN_CHARS ? '…' : ''}`;
}
