import { createHash, type Hash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../src/canonical/canonicalize.js';

// Rebuilds the number generator that ../shared/testdata/jcs/README.md describes (after the
// cyberphone/json-canonicalization testdata) and checks the SHA-256 of its first 1k, 10k,
// 100k and 1M lines against the published table. Lines are `hex-bits,serialization\n`, the
// serialization being canonicalize(number). The chain's 8-byte words are little-endian: with
// big-endian words the 10k checksum does not match.

const JCS = path.resolve(import.meta.dirname, '../../../shared/testdata/jcs');
const STATIC = path.join(JCS, 'static-doubles.txt');
const haveData = existsSync(STATIC);

const CHECKSUMS: ReadonlyMap<number, string> = new Map([
  [1_000, 'be18b62b6f69cdab33a7e0dae0d9cfa869fda80ddc712221570f9f40a5878687'],
  [10_000, 'b9f7a8e75ef22a835685a52ccba7f7d6bdc99e34b010992cbc5864cd12be6892'],
  [100_000, '22776e6d4b49fa294a0d0f349268e5c28808fe7e0cb2bcbe28f63894e494d4c7'],
  [1_000_000, '49415fee2c56c77864931bd3624faad425c3c577d6d74e89a83bc725506dad16'],
]);

const view = new DataView(new ArrayBuffer(8));

/** One generator line for the double whose bits are hi:lo (two unsigned 32-bit halves). */
function line(hi: number, lo: number): string {
  view.setUint32(0, hi);
  view.setUint32(4, lo);
  const hex = hi === 0 ? lo.toString(16) : hi.toString(16) + lo.toString(16).padStart(8, '0');
  return `${hex},${canonicalize(view.getFloat64(0))}\n`;
}

function isFiniteNonZero(hi: number, lo: number): boolean {
  view.setUint32(0, hi);
  view.setUint32(4, lo);
  const value = view.getFloat64(0);
  return value !== 0 && Number.isFinite(value);
}

/** Yields the generator's lines as [hi, lo] bit halves, without end. */
function* doubles(): Generator<readonly [number, number]> {
  for (const hex of readFileSync(STATIC, 'utf8').split('\n')) {
    if (hex.trim() === '') continue;
    const padded = hex.trim().padStart(16, '0');
    yield [Number.parseInt(padded.slice(0, 8), 16), Number.parseInt(padded.slice(8), 16)];
  }
  for (let i = 0; i < 2000; i++) yield [0x00100000, i];
  let block = Buffer.alloc(32);
  for (;;) {
    block = createHash('sha256').update(block).digest();
    for (let offset = 0; offset < 32; offset += 8) {
      const lo = block.readUInt32LE(offset);
      const hi = block.readUInt32LE(offset + 4);
      if (isFiniteNonZero(hi, lo)) yield [hi, lo];
    }
  }
}

/** SHA-256 of the first n lines, for every n in CHECKSUMS. */
function checksums(lines: number): Map<number, string> {
  const found = new Map<number, string>();
  const hash: Hash = createHash('sha256');
  let chunk = '';
  let count = 0;
  for (const [hi, lo] of doubles()) {
    chunk += line(hi, lo);
    count++;
    if (count % 1000 === 0) {
      hash.update(chunk, 'utf8');
      chunk = '';
      if (CHECKSUMS.has(count)) found.set(count, hash.copy().digest('hex'));
      if (count >= lines) return found;
    }
  }
  return found;
}

describe.skipIf(!haveData)('ECMAScript number serialization against the JCS generator checksums', () => {
  it('writes the first lines as the reference does', () => {
    const first: string[] = [];
    for (const [hi, lo] of doubles()) {
      first.push(line(hi, lo));
      if (first.length === 4) break;
    }
    expect(first).toEqual(['0,0\n', '8000000000000000,0\n', '1,5e-324\n', '8000000000000001,-5e-324\n']);
  });

  it('matches the SHA-256 of the first 1k, 10k, 100k and 1M lines', { timeout: 60_000 }, () => {
    const found = checksums(1_000_000);
    expect([...found.entries()]).toEqual([...CHECKSUMS.entries()]);
  });
});

if (!haveData) {
  it.skip('conformance data ../shared/testdata/jcs not found: skipped', () => {});
}
