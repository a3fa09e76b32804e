import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../src/canonical/canonicalize.js';
import fc from 'fast-check';
import { digest, digestCanonical, displayHash, isSha256Hex, shortHash } from '../../src/canonical/digest.js';
import { CanonicalizationError, ConfigurationError } from '../../src/canonical/errors.js';

function sha256(text: string): string {
  return createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');
}

describe('digest', () => {
  it('is SHA-256 over the UTF-8 bytes of the canonical JSON', () => {
    expect(digest({}).sha256).toBe('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
    const value = { name: 'Café 😂', amount: 40, nested: { z: [1.5, -0], a: null } };
    expect(digest(value).sha256).toBe(sha256(canonicalize(value)));
    expect(digest(value).sha256).toBe(
      sha256('{"amount":40,"name":"Café 😂","nested":{"a":null,"z":[1.5,0]}}'),
    );
  });

  it('digests payloads larger than the reusable byte buffer, and small ones after them', () => {
    const big = { rows: Array.from({ length: 120_000 }, (_, i) => ({ id: `row_${i}`, note: 'é€😂"\n' })) };
    expect(Buffer.byteLength(canonicalize(big))).toBeGreaterThan(4 * 1024 * 1024);
    expect(digest(big).sha256).toBe(sha256(canonicalize(big)));
    expect(digest({ a: 1 }).sha256).toBe(sha256('{"a":1}'));
  });

  it('is right when a Proxy trap digests another value in the middle of a digest', () => {
    let inner = '';
    const target = { b: 2, a: 1 };
    const sneaky = new Proxy(target, {
      ownKeys(t) {
        inner = digest({ nested: 'call', list: [1, 2, 3] }).sha256;
        return Reflect.ownKeys(t);
      },
    });
    expect(digest({ x: sneaky, y: 'after' }).sha256).toBe(sha256('{"x":{"a":1,"b":2},"y":"after"}'));
    expect(inner).toBe(sha256('{"list":[1,2,3],"nested":"call"}'));
  });

  it('gives 64 lowercase hex characters and a 12-character short hash', () => {
    const { sha256: full, short } = digest({ order_id: 'ord_1', amount: 40 });
    expect(full).toMatch(/^[0-9a-f]{64}$/);
    expect(short).toBe(full.slice(0, 12));
    expect(shortHash(full)).toBe(short);
  });

  it('distinguishes values JSON.stringify-based hashes would confuse', () => {
    expect(digest({ a: 1, b: 2 }).sha256).toBe(digest({ b: 2, a: 1 }).sha256);
    expect(digest({ amount: 40 }).sha256).not.toBe(digest({ amount: '40' }).sha256);
    expect(digest([1, 2]).sha256).not.toBe(digest([2, 1]).sha256);
    expect(() => digest({ amount: undefined })).toThrow(CanonicalizationError);
  });

  it('digestCanonical hashes the text as given and refuses ill-formed UTF-16', () => {
    expect(digestCanonical('{"a":1}')).toEqual(digest({ a: 1 }));
    expect(() => digestCanonical('"\ud800"')).toThrow(CanonicalizationError);
  });

  it('shortHash refuses anything but a full lowercase SHA-256 hex digest', () => {
    for (const bad of ['', 'abc', 'A'.repeat(64), 'g'.repeat(64), 'a'.repeat(65)]) {
      expect(() => shortHash(bad)).toThrow(ConfigurationError);
    }
  });

  it('displayHash gives the short hash of a digest and a marked, escaped value for anything else, never throwing', () => {
    const full = digest({ a: 1 }).sha256;
    expect(displayHash(full)).toBe(shortHash(full));
    expect(displayHash('abc123abc123')).toBe('invalid:"abc123abc123"');
    expect(displayHash(full.toUpperCase())).toBe(
      `invalid:${JSON.stringify(full.toUpperCase().slice(0, 16))}…`,
    );
    expect(displayHash('\u001b[31m\n')).toBe('invalid:"\\u001b[31m\\n"');
    expect(displayHash(undefined)).toBe('invalid:undefined');
    expect(displayHash(null)).toBe('invalid:null');
    expect(displayHash('a\u202eb\u009b\u007f')).toBe('invalid:"a\\u202eb\\u009b\\u007f"');
    expect(displayHash({ sha256: full })).toBe('invalid:object');
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.string({ unit: 'binary' })), (value) => {
        const shown = displayHash(value);
        // Either a short hash of a real digest, or visibly not one, with no control characters.
        if (isSha256Hex(value)) expect(shown).toMatch(/^[0-9a-f]{12}$/);
        else expect(shown.startsWith('invalid:')).toBe(true);
        expect(shown).toMatch(/^[\x20-\x7e…]+$/);
      }),
    );
  });
});
