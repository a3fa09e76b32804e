import { randomBytes } from 'node:crypto';

// Crockford base32 (no i, l, o, u): unambiguous when an operator reads an id aloud or by eye.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

function base32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

/** An opaque, unguessable id with a type prefix: `prp_…`, `att_…`, `cmd_…` (128 random bits). */
export function newId(prefix: 'prp' | 'att' | 'cmd' | 'evt' | 'run' | 'cor' | 'grt'): string {
  return `${prefix}_${base32(randomBytes(16))}`;
}

/** The idempotency key of an attempt: derived from proposal id and attempt number, stable across retries of one attempt. */
export function idempotencyKeyOf(proposalId: string, attemptNumber: number): string {
  return `${proposalId}.${attemptNumber}`;
}
