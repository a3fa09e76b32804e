import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../src/canonical/canonicalize.js';
import { digest } from '../../src/canonical/digest.js';
import {
  CanonicalizationError,
  ConfigurationError,
  CountersignError,
  JsonParseError,
} from '../../src/canonical/errors.js';
import { parseJson } from '../../src/canonical/parse-json.js';

const JCS = path.resolve(import.meta.dirname, '../../../shared/testdata/jcs');
const haveJcs = existsSync(path.join(JCS, 'input')) && existsSync(path.join(JCS, 'output'));

/** The CanonicalizationError a call throws (fails the test when it throws nothing else). */
function rejection(value: unknown, options?: { maxDepth?: number }): CanonicalizationError {
  try {
    canonicalize(value, options);
  } catch (error) {
    expect(error).toBeInstanceOf(CanonicalizationError);
    return error as CanonicalizationError;
  }
  throw new Error('canonicalize accepted the value');
}

/** [1, <hole>, 3] */
function withHole(): unknown[] {
  const array: unknown[] = [1];
  array[2] = 3;
  return array;
}

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { k: value };
  return value;
}

describe.skipIf(!haveJcs)('RFC 8785 reference vectors (cyberphone/json-canonicalization testdata)', () => {
  const names = haveJcs ? readdirSync(path.join(JCS, 'input')).filter((name) => name.endsWith('.json')) : [];

  it('has vectors to check', () => {
    expect(names.length).toBeGreaterThanOrEqual(6);
  });

  it.each(names)('%s canonicalizes to exactly the bytes of output/%s', (name) => {
    const input = readFileSync(path.join(JCS, 'input', name), 'utf8');
    const expected = readFileSync(path.join(JCS, 'output', name));
    let value: unknown;
    try {
      value = parseJson(input);
    } catch (error) {
      // values.json writes 1E30, an integer no double holds exactly (the nearest is
      // 1000000000000000019884624838656): parseJson refuses it by design. The canonical form of
      // what JSON.parse makes of it is still checked below.
      expect(name).toBe('values.json');
      expect(error).toBeInstanceOf(JsonParseError);
      expect((error as JsonParseError).reason).toBe('unsafe_integer');
      value = JSON.parse(input);
    }
    expect(Buffer.from(canonicalize(value), 'utf8').equals(expected)).toBe(true);
    expect(canonicalize(value)).toBe(expected.toString('utf8'));
  });
});

if (!haveJcs) {
  it.skip('conformance data ../shared/testdata/jcs not found: skipped', () => {});
}

describe('canonicalize: output', () => {
  it('sorts keys by UTF-16 code units, recursively, and leaves array order alone', () => {
    expect(canonicalize({ b: 1, a: { d: [3, 1, 2], c: null }, A: true, '': 'e' })).toBe(
      '{"":"e","A":true,"a":{"c":null,"d":[3,1,2]},"b":1}',
    );
    // U+FB33 sorts before U+1F602 by code point, after it by UTF-16 code units (0xFB33 > 0xD83D).
    expect(canonicalize({ '\u{1F602}': 1, '\uFB33': 2, '\u20AC': 3 })).toBe(
      '{"\u20AC":3,"\u{1F602}":1,"\uFB33":2}',
    );
    // Integer-like keys are sorted as strings, not as numbers (Object.keys lists them first).
    expect(canonicalize({ b: 0, 10: 1, 9: 2, 1: 3 })).toBe('{"1":3,"10":1,"9":2,"b":0}');
  });

  it('sorts objects with many keys (the builtin-sort path) the same way', () => {
    const keys = Array.from({ length: 200 }, (_, i) => `k${(i * 7919) % 1000}`);
    const value = Object.fromEntries(keys.map((key, i) => [key, i]));
    const expected = `{${[...keys]
      .sort()
      .map((key) => `"${key}":${value[key]}`)
      .join(',')}}`;
    expect(canonicalize(value)).toBe(expected);
  });

  it('writes large outputs (many internal chunks) exactly like JSON.stringify of sorted data', () => {
    const rows = Array.from({ length: 5000 }, (_, i) => ({
      amount: i * 1.25,
      id: `row_${i}`,
      note: i % 7 === 0 ? 'line\n"quoted" €' : 'plain',
      tags: [i, null, true],
    }));
    const text = canonicalize({ rows });
    expect(text.length).toBeGreaterThan(200_000);
    expect(text).toBe(JSON.stringify({ rows }));
  });

  it('writes numbers as ECMAScript does, and -0 as 0', () => {
    expect(canonicalize(-0)).toBe('0');
    expect(canonicalize([0, -0, 1e21, 1e-7, 123.456, -1.5e-300, 2 ** 53, 5e-324])).toBe(
      '[0,0,1e+21,1e-7,123.456,-1.5e-300,9007199254740992,5e-324]',
    );
    expect(canonicalize({ amount: -0 })).toBe(canonicalize({ amount: 0 }));
  });

  it('escapes strings as RFC 8785 says: short escapes, lowercase \\u00xx, nothing else', () => {
    expect(canonicalize('"\\\b\f\n\r\t\u0000\u001f\u007f/é€😂\u2028')).toBe(
      '"\\"\\\\\\b\\f\\n\\r\\t\\u0000\\u001f\u007f/é€😂\u2028"',
    );
    const long = `${'x'.repeat(100)}"\n${'é'.repeat(100)}`;
    expect(canonicalize(long)).toBe(JSON.stringify(long));
    expect(canonicalize({ 'a"b\n': 1 })).toBe('{"a\\"b\\n":1}');
  });

  it('writes primitives and empty containers', () => {
    expect(canonicalize(null)).toBe('null');
    expect(canonicalize(true)).toBe('true');
    expect(canonicalize(false)).toBe('false');
    expect(canonicalize('')).toBe('""');
    expect(canonicalize([])).toBe('[]');
    expect(canonicalize({})).toBe('{}');
    expect(canonicalize([[], {}, [{}]])).toBe('[[],{},[{}]]');
  });

  it('accepts null-prototype objects', () => {
    const bare = Object.create(null) as Record<string, unknown>;
    bare['b'] = 1;
    bare['a'] = [Object.create(null)];
    expect(canonicalize(bare)).toBe('{"a":[{}],"b":1}');
  });

  it('hashes an own __proto__ key as ordinary data and leaves Object.prototype alone', () => {
    const withProto = JSON.parse('{"__proto__":{"polluted":1},"a":1}') as Record<string, unknown>;
    expect(Object.hasOwn(withProto, '__proto__')).toBe(true);
    expect(canonicalize(withProto)).toBe('{"__proto__":{"polluted":1},"a":1}');
    expect(digest(withProto).sha256).not.toBe(digest({ a: 1 }).sha256);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.getPrototypeOf(withProto)).toBe(Object.prototype);
  });

  it('gives the same text and digest whatever the key insertion order', () => {
    const one = { order_id: 'ord_1', amount: 40, customer: { id: 'cus_1', email: 'a@example.com' } };
    const two = { customer: { email: 'a@example.com', id: 'cus_1' }, amount: 40, order_id: 'ord_1' };
    expect(canonicalize(two)).toBe(canonicalize(one));
    expect(digest(two)).toEqual(digest(one));
  });

  it('serializes shared (non-cyclic) references each time they appear', () => {
    const shared = { id: 1 };
    expect(canonicalize({ a: shared, b: [shared, shared] })).toBe('{"a":{"id":1},"b":[{"id":1},{"id":1}]}');
  });

  it('accepts exactly maxDepth levels of nesting', () => {
    expect(canonicalize(nested(256))).toHaveLength(canonicalize(nested(255)).length + 6);
    expect(canonicalize(nested(3), { maxDepth: 3 })).toBe('[{"k":[1]}]');
    expect(canonicalize('primitive', { maxDepth: 0 })).toBe('"primitive"');
  });
});

describe('canonicalize: every rejection names its code and path', () => {
  const cases: [string, unknown, string, string][] = [
    ['NaN', { a: { b: Number.NaN } }, 'non_finite_number', '$.a.b'],
    ['Infinity', [1, Number.POSITIVE_INFINITY], 'non_finite_number', '$[1]'],
    ['-Infinity', { x: [Number.NEGATIVE_INFINITY] }, 'non_finite_number', '$.x[0]'],
    ['a lone high surrogate in a string', { s: 'a\uD800b' }, 'lone_surrogate', '$.s'],
    ['a lone low surrogate in a string', ['\uDC00'], 'lone_surrogate', '$[0]'],
    ['a reversed pair in a long string', `${'x'.repeat(80)}\uDE00\uD83D`, 'lone_surrogate', '$'],
    ['a lone surrogate in a key', { ok: { '\uD800': 1 } }, 'lone_surrogate', '$.ok["\\ud800"]'],
    ['undefined member', { a: undefined }, 'undefined', '$.a'],
    ['undefined element', [null, undefined], 'undefined', '$[1]'],
    ['undefined itself', undefined, 'undefined', '$'],
    ['a function', { fn: () => 1 }, 'function', '$.fn'],
    ['a symbol', { s: Symbol('s') }, 'symbol', '$.s'],
    ['a bigint', { n: 10n }, 'bigint', '$.n'],
    ['a Date', { when: new Date(0) }, 'unsupported_object', '$.when'],
    ['a Map', { m: new Map() }, 'unsupported_object', '$.m'],
    ['a Set', [new Set([1])], 'unsupported_object', '$[0]'],
    ['a class instance', { c: new (class Money {})() }, 'unsupported_object', '$.c'],
    ['a boxed string', { s: new String('x') }, 'unsupported_object', '$.s'],
    ['a typed array', { bytes: new Uint8Array(2) }, 'unsupported_object', '$.bytes'],
    ['an object with toJSON', { t: { toJSON: () => 'x' } }, 'unsupported_object', '$.t'],
    ['an Array subclass', { list: new (class List extends Array {})() }, 'unsupported_object', '$.list'],
    ['a sparse array', { xs: withHole() }, 'sparse_array', '$.xs[1]'],
    [
      'a key that is not an identifier',
      { 'weird key': [Number.NaN] },
      'non_finite_number',
      '$["weird key"][0]',
    ],
  ];

  it.each(cases)('%s', (_name, value, code, where) => {
    const error = rejection(value);
    expect(error.code).toBe(code);
    expect(error.path).toBe(where);
    expect(error.message).toContain(where);
    expect(error.message).toContain(code);
    expect(error.name).toBe('CanonicalizationError');
    expect(error).toBeInstanceOf(CountersignError);
  });

  it('refuses a getter without calling it', () => {
    let calls = 0;
    const value = {
      get amount() {
        calls++;
        return 40;
      },
    };
    const error = rejection({ order: value });
    expect(error.code).toBe('unsupported_object');
    expect(error.path).toBe('$.order.amount');
    expect(calls).toBe(0);
  });

  it('refuses a setter-only property', () => {
    const value = {};
    Object.defineProperty(value, 'x', { set() {}, enumerable: true });
    expect(rejection(value)).toMatchObject({ code: 'unsupported_object', path: '$.x' });
  });

  it('refuses non-enumerable own properties instead of dropping them', () => {
    const value = { visible: 1 };
    Object.defineProperty(value, 'hidden', { value: 2, enumerable: false });
    expect(rejection({ v: value })).toMatchObject({ code: 'unsupported_object', path: '$.v.hidden' });
  });

  it('refuses symbol-keyed own properties instead of dropping them', () => {
    expect(rejection({ v: { a: 1, [Symbol('meta')]: 2 } })).toMatchObject({
      code: 'unsupported_object',
      path: '$.v',
    });
  });

  it('refuses a cycle, at the member that closes it', () => {
    const invoice: Record<string, unknown> = { id: 'inv_1' };
    invoice['self'] = invoice;
    expect(rejection({ invoice })).toMatchObject({ code: 'cycle', path: '$.invoice.self' });

    const list: unknown[] = [1];
    list.push({ back: list });
    expect(rejection(list)).toMatchObject({ code: 'cycle', path: '$[1].back' });
  });

  it('refuses a cycle under a large caller-chosen maxDepth as a cycle', () => {
    const a: Record<string, unknown> = {};
    a['b'] = { c: a };
    expect(rejection(a, { maxDepth: 100_000 })).toMatchObject({ code: 'cycle', path: '$.b.c' });
  });

  it('refuses nesting deeper than maxDepth (default 256) with too_deep', () => {
    const error = rejection(nested(257));
    expect(error.code).toBe('too_deep');
    expect(error.path.startsWith('$[0].k[0].k')).toBe(true);
    expect(rejection(nested(3), { maxDepth: 2 })).toMatchObject({ code: 'too_deep', path: '$[0].k' });
    expect(rejection([], { maxDepth: 0 })).toMatchObject({ code: 'too_deep', path: '$' });
  });

  it('throws too_deep, never RangeError, on depth 10^4 and 10^5', () => {
    for (const depth of [10_000, 100_000]) expect(rejection(nested(depth)).code).toBe('too_deep');
    for (const depth of [10_001, 100_000]) {
      expect(rejection(nested(depth), { maxDepth: 10_000 }).code).toBe('too_deep');
    }
  });

  it('serializes depth 10^4 when the caller allows it, without a stack overflow', () => {
    // nested(10_000): 5_000 objects and 5_000 arrays, alternating, an object outermost.
    const text = canonicalize(nested(10_000), { maxDepth: 10_000 });
    expect(text).toBe(`${'{"k":['.repeat(5_000)}1${']}'.repeat(5_000)}`);
  });

  it('refuses an invalid maxDepth with a ConfigurationError', () => {
    for (const maxDepth of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 10_000_000]) {
      expect(() => canonicalize(1, { maxDepth })).toThrow(ConfigurationError);
    }
  });
});
