import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalBytes, canonicalize } from '../../src/canonical/canonicalize.js';
import { digest } from '../../src/canonical/digest.js';
import { freeze } from '../../src/canonical/freeze.js';
import { parseJson } from '../../src/canonical/parse-json.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Keys that have broken parsers and hashers before, mixed into ordinary strings. */
const key = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'toJSON', ''),
  },
);

// parseJson refuses, by design, numbers a double cannot hold exactly (integers beyond
// ±(2^53−1)), and JSON has no -0: the strict round trips use numbers from the safe range,
// with -0 read as 0.
const safeNumber = fc
  .oneof(
    fc.maxSafeInteger(),
    fc.double({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER, noNaN: true }),
  )
  .map((n) => (Object.is(n, -0) ? 0 : n));

function jsonOf(number: fc.Arbitrary<number>): fc.Arbitrary<Json> {
  return fc.letrec<{ json: Json; array: Json[]; object: Record<string, Json> }>((tie) => ({
    json: fc.oneof(
      { depthSize: 'small', maxDepth: 6 },
      fc.constant(null),
      fc.boolean(),
      number,
      fc.string({ unit: 'binary', maxLength: 12 }),
      tie('array'),
      tie('object'),
    ),
    array: fc.array(tie('json'), { maxLength: 6 }),
    // fc.dictionary defines a "__proto__" key as an own property, and sometimes uses a null
    // prototype: both must canonicalize as plain data.
    object: fc.dictionary(key, tie('json'), { maxKeys: 6 }),
  })).json;
}

/** JSON data whose numbers parseJson accepts, with __proto__-style keys. */
const safeJson = jsonOf(safeNumber);
/** Any JSON data, numbers of every magnitude included. */
const anyJson = fc.oneof(
  fc.jsonValue({ stringUnit: 'binary' }) as fc.Arbitrary<Json>,
  jsonOf(fc.double({ noNaN: true, noDefaultInfinity: true })),
);

/** A straightforward (slow) RFC 8785 reference to compare the optimized serializer with. */
function reference(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${reference(value[k] as Json)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A deep copy with every object's keys inserted in an order drawn from `random`. */
function shuffled(value: Json, random: () => number): Json {
  if (Array.isArray(value)) return value.map((item) => shuffled(item, random));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
  }
  const copy: Record<string, Json> = {};
  for (const k of keys)
    Object.defineProperty(copy, k, {
      value: shuffled(value[k] as Json, random),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return copy;
}

function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Number of primitive leaves. */
function leafCount(value: Json): number {
  if (Array.isArray(value)) return value.reduce<number>((sum, item) => sum + leafCount(item), 0);
  if (value !== null && typeof value === 'object') {
    return Object.keys(value).reduce((sum, k) => sum + leafCount(value[k] as Json), 0);
  }
  return 1;
}

/** A different value of the same type. */
function changed(leaf: Json): Json {
  if (typeof leaf === 'number') return leaf === 1 ? 2 : 1;
  if (typeof leaf === 'string') return leaf === 'a' ? 'b' : 'a';
  if (typeof leaf === 'boolean') return !leaf;
  return 0;
}

/** A deep copy with leaf number `target` (depth-first) replaced by a different value. */
function withLeafChanged(value: Json, target: number): Json {
  let index = 0;
  const walk = (node: Json): Json => {
    if (Array.isArray(node)) return node.map(walk);
    if (node !== null && typeof node === 'object') {
      const copy: Record<string, Json> = {};
      for (const k of Object.keys(node))
        Object.defineProperty(copy, k, {
          value: walk(node[k] as Json),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      return copy;
    }
    return index++ === target ? changed(node) : node;
  };
  return walk(value);
}

/** Whether a string has no lone surrogate: in u-mode, \p{Cs} matches only unpaired halves. */
function wellFormed(text: string): boolean {
  return !/\p{Cs}/u.test(text);
}

/** A JSON string literal escaping only what must be escaped: surrogates stay raw code units. */
function rawLiteral(text: string): string {
  let literal = '"';
  for (const unit of text.split('')) {
    const c = unit.charCodeAt(0);
    literal += c < 0x20 || unit === '"' || unit === '\\' ? JSON.stringify(unit).slice(1, -1) : unit;
  }
  return `${literal}"`;
}

/** Any UTF-16 string, lone surrogates included (each code unit drawn separately). */
const utf16 = fc.string({
  unit: fc.oneof(
    fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
    fc.constantFrom('"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\u2028', '\ud83d', '\ude02', 'é'),
  ),
  maxLength: 90,
});

describe('canonical JSON properties', () => {
  it('quotes a string exactly as JSON.stringify does, or refuses it for a lone surrogate', () => {
    fc.assert(
      fc.property(utf16, (text) => {
        if (wellFormed(text)) {
          expect(canonicalize(text)).toBe(JSON.stringify(text));
          expect(canonicalize({ [text]: 1 })).toBe(`{${JSON.stringify(text)}:1}`);
        } else {
          expect(() => canonicalize(text)).toThrow(expect.objectContaining({ code: 'lone_surrogate' }));
          expect(() => canonicalize({ [text]: 1 })).toThrow(
            expect.objectContaining({ code: 'lone_surrogate' }),
          );
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('parses string literals as JSON.parse does, or refuses them for a lone surrogate', () => {
    fc.assert(
      fc.property(utf16, fc.boolean(), (text, raw) => {
        // JSON.stringify escapes lone surrogates (\udXXX); the raw form keeps them as they are.
        const literal = raw ? rawLiteral(text) : JSON.stringify(text);
        if (wellFormed(text)) {
          expect(parseJson(literal)).toBe(JSON.parse(literal));
        } else {
          expect(() => parseJson(literal)).toThrow(expect.objectContaining({ reason: 'lone_surrogate' }));
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('matches a straightforward RFC 8785 reference on any JSON data', () => {
    fc.assert(
      fc.property(anyJson, (value) => {
        expect(canonicalize(value)).toBe(reference(value));
      }),
      { numRuns: 500 },
    );
  });

  it('hashes exactly the UTF-8 bytes of the canonical text (the byte writer agrees with the string one)', () => {
    fc.assert(
      fc.property(fc.oneof(anyJson, utf16, fc.dictionary(utf16, utf16, { maxKeys: 4 })), (value) => {
        let text: string;
        try {
          text = canonicalize(value);
        } catch (error) {
          expect(() => canonicalBytes(value)).toThrow(expect.objectContaining({ code: 'lone_surrogate' }));
          expect(error).toMatchObject({ code: 'lone_surrogate' });
          return;
        }
        const expected = Buffer.from(text, 'utf8');
        expect(Buffer.from(canonicalBytes(value)).equals(expected)).toBe(true);
        expect(digest(value).sha256).toBe(createHash('sha256').update(expected).digest('hex'));
      }),
      { numRuns: 1000 },
    );
  });

  it('is idempotent through parseJson: canonicalize(parseJson(canonicalize(x))) === canonicalize(x)', () => {
    fc.assert(
      fc.property(safeJson, (value) => {
        const text = canonicalize(value);
        expect(canonicalize(parseJson(text))).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it('is idempotent through freeze for numbers of any magnitude', () => {
    fc.assert(
      fc.property(anyJson, (value) => {
        expect(canonicalize(freeze(value))).toBe(canonicalize(value));
      }),
      { numRuns: 300 },
    );
  });

  it('never lets key order change the digest', () => {
    fc.assert(
      fc.property(anyJson, fc.integer(), (value, seed) => {
        expect(digest(shuffled(value, seeded(seed)))).toEqual(digest(value));
      }),
      { numRuns: 300 },
    );
  });

  it('changes the digest when any one leaf changes', () => {
    fc.assert(
      fc.property(anyJson, fc.nat(), (value, pick) => {
        const leaves = leafCount(value);
        fc.pre(leaves > 0);
        const mutated = withLeafChanged(value, pick % leaves);
        expect(digest(mutated).sha256).not.toBe(digest(value).sha256);
      }),
      { numRuns: 300 },
    );
  });

  it('parseJson(JSON.stringify(x)) deep-equals x for JSON data without -0', () => {
    fc.assert(
      fc.property(safeJson, (value) => {
        const parsed = parseJson(JSON.stringify(value));
        expect(parsed).toEqual(value);
        expect(canonicalize(parsed)).toBe(canonicalize(value));
      }),
      { numRuns: 500 },
    );
  });

  it('parseJson agrees with JSON.parse on the JSON.stringify of any safe value, pretty-printed too', () => {
    fc.assert(
      fc.property(safeJson, (value) => {
        const pretty = JSON.stringify(value, null, 2);
        expect(canonicalize(parseJson(pretty))).toBe(canonicalize(JSON.parse(pretty) as Json));
      }),
      { numRuns: 300 },
    );
  });
});
