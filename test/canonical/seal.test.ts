import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../src/canonical/canonicalize.js';
import { CanonicalizationError, ConfigurationError } from '../../src/canonical/errors.js';
import { seal, verifySeal } from '../../src/canonical/seal.js';

const KEY = 'k'.repeat(32);
const OTHER_KEY = 'q'.repeat(32);
const contract = { id: 'prp_1', digest: 'a'.repeat(64), amount_minor: 4000 };

/** The seal with bit `bit` of its 32 bytes flipped. */
function flipBit(hex: string, bit: number): string {
  const bytes = Buffer.from(hex, 'hex');
  bytes[bit >> 3]! ^= 1 << (bit & 7);
  return bytes.toString('hex');
}

describe('seal', () => {
  it('is HMAC-SHA-256 hex over the canonical UTF-8 bytes', () => {
    const value = { b: 'é', a: [1, -0] };
    expect(seal(value, KEY)).toBe(
      createHmac('sha256', KEY).update(canonicalize(value), 'utf8').digest('hex'),
    );
    expect(seal(value, KEY)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('does not depend on key order, and differs per key', () => {
    expect(seal({ a: 1, b: 2 }, KEY)).toBe(seal({ b: 2, a: 1 }, KEY));
    expect(seal(contract, KEY)).not.toBe(seal(contract, OTHER_KEY));
  });

  it('accepts 32-byte keys as strings (UTF-8 bytes) or Uint8Array', () => {
    const bytes = new Uint8Array(32).fill(7);
    expect(verifySeal(contract, bytes, seal(contract, bytes))).toBe(true);
    expect(verifySeal(contract, 'é'.repeat(16), seal(contract, 'é'.repeat(16)))).toBe(true);
  });

  it('refuses keys shorter than 32 bytes with a ConfigurationError', () => {
    expect(() => seal(contract, 'k'.repeat(31))).toThrow(ConfigurationError);
    expect(() => seal(contract, `${'é'.repeat(15)}x`)).toThrow(ConfigurationError); // 31 bytes
    expect(() => seal(contract, new Uint8Array(31))).toThrow(ConfigurationError);
    expect(() => verifySeal(contract, '', 'a'.repeat(64))).toThrow(ConfigurationError);
    expect(() => seal(contract, 42 as unknown as string)).toThrow(ConfigurationError);
  });

  it('refuses values that are not JSON data', () => {
    expect(() => seal({ n: Number.NaN }, KEY)).toThrow(CanonicalizationError);
  });
});

describe('verifySeal', () => {
  const good = seal(contract, KEY);

  it('round-trips', () => {
    expect(verifySeal(contract, KEY, good)).toBe(true);
    expect(verifySeal({ amount_minor: 4000, digest: 'a'.repeat(64), id: 'prp_1' }, KEY, good)).toBe(true);
  });

  it('fails when any one bit of the seal changes', () => {
    for (const bit of [0, 1, 7, 8, 100, 255])
      expect(verifySeal(contract, KEY, flipBit(good, bit))).toBe(false);
  });

  it('fails when the value changes', () => {
    expect(verifySeal({ ...contract, amount_minor: 40000 }, KEY, good)).toBe(false);
    expect(verifySeal({ ...contract, note: 'extra' }, KEY, good)).toBe(false);
  });

  it('fails with the wrong key', () => {
    expect(verifySeal(contract, OTHER_KEY, good)).toBe(false);
  });

  it('returns false, without throwing, on a malformed seal', () => {
    const malformed: unknown[] = [
      '',
      'zz',
      good.slice(0, 63),
      `${good}0`,
      `${good.slice(0, 63)}g`,
      good.toUpperCase(),
      ` ${good.slice(1)}`,
      null,
      undefined,
      42,
    ];
    for (const candidate of malformed) expect(verifySeal(contract, KEY, candidate as string)).toBe(false);
  });
});
