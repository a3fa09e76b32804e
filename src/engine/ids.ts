import { randomFillSync } from 'node:crypto';

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

// Random bytes are drawn from the CSPRNG in blocks: one system call per 256 ids, not one per id.
const pool = new Uint8Array(4096);
let offset = pool.length;

function random16(): Uint8Array {
  if (offset + 16 > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const bytes = pool.slice(offset, offset + 16);
  offset += 16;
  return bytes;
}

/**
 * An opaque, unguessable id with a type prefix: `prp_…`, `att_…`, `cmd_…`. 48 bits of milliseconds
 * then 80 random bits (as ULIDs do): ids created together sort together, so inserts append to the
 * store's B-trees instead of splitting random pages, and 80 bits stay unguessable.
 */
export function newId(
  prefix: 'prp' | 'att' | 'cmd' | 'evt' | 'run' | 'cor' | 'grt' | 'read' | 'rte',
): string {
  const bytes = random16();
  let time = Date.now();
  for (let i = 5; i >= 0; i--) {
    bytes[i] = time % 256;
    time = Math.floor(time / 256);
  }
  return `${prefix}_${base32(bytes)}`;
}

/** The idempotency key of an attempt: derived from proposal id and attempt number, stable across retries of one attempt. */
export function idempotencyKeyOf(proposalId: string, attemptNumber: number): string {
  return `${proposalId}.${attemptNumber}`;
}
