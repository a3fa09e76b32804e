import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../src/canonical/canonicalize.js';
import { ConfigurationError, CountersignError, JsonParseError } from '../../src/canonical/errors.js';
import { type JsonObject, parseJson } from '../../src/canonical/parse-json.js';

/** The JsonParseError a call throws (fails the test when it throws nothing or something else). */
function rejection(text: string, options?: { maxDepth?: number; maxLength?: number }): JsonParseError {
  try {
    parseJson(text, options);
  } catch (error) {
    expect(error).toBeInstanceOf(JsonParseError);
    return error as JsonParseError;
  }
  throw new Error(`parseJson accepted ${JSON.stringify(text.slice(0, 60))}`);
}

describe('parseJson: accepts RFC 8259 JSON', () => {
  it('parses every kind of value', () => {
    expect(parseJson(' {"a": [1, -2.5e-3, true, false, null, "x"], "b": {}} ')).toEqual({
      a: [1, -0.0025, true, false, null, 'x'],
      b: {},
    });
    expect(parseJson('"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u20AC\\ud83d\\ude02"')).toBe('"\\/\b\f\n\r\té€😂');
    expect(parseJson('\t\r\n 0 \n')).toBe(0);
    expect(parseJson('[]')).toEqual([]);
    expect(parseJson('-0')).toBe(-0);
  });

  it('keeps raw non-ASCII, U+2028 and surrogate pairs', () => {
    expect(parseJson('"é\u2028😂"')).toBe('é\u2028😂');
  });

  it('accepts exactly maxDepth levels and large safe integers', () => {
    expect(parseJson(`${'['.repeat(256)}${']'.repeat(256)}`)).toBeInstanceOf(Array);
    expect(parseJson('[[1]]', { maxDepth: 2 })).toEqual([[1]]);
    expect(parseJson('9007199254740991')).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseJson('-9007199254740991')).toBe(Number.MIN_SAFE_INTEGER);
  });

  it('decides integers written with a fraction or exponent exactly', () => {
    // 2^53 itself is a double: written with a fraction or exponent it is exact, so it passes.
    expect(parseJson('9007199254740992.0')).toBe(2 ** 53);
    expect(parseJson('9007199254740992e0')).toBe(2 ** 53);
    expect(parseJson('90071992547409.92e2')).toBe(2 ** 53);
    expect(parseJson('1e22')).toBe(1e22); // 10^22 = 2^22·5^22 is exact
    // The largest double, written out in full decimal, is exact too.
    const max = BigInt(Number.MAX_VALUE).toString();
    expect(parseJson(`${max}.000`)).toBe(Number.MAX_VALUE);
    expect(parseJson(`-${max.slice(0, 1)}.${max.slice(1)}e${max.length - 1}`)).toBe(-Number.MAX_VALUE);
    // 2^60 with an exponent is exact; the same digits as an integer lexeme are still refused.
    expect(parseJson('1152921504606846976e0')).toBe(2 ** 60);
    expect(rejection('1152921504606846976').reason).toBe('unsafe_integer');
    expect(rejection('1152921504606846977e0').reason).toBe('unsafe_integer');
  });
});

describe('parseJson: every reason, with position, line and column', () => {
  const cases: [string, string, string, number, number, number][] = [
    ['empty text', '', 'empty', 0, 1, 1],
    ['whitespace only', ' \n ', 'empty', 3, 2, 2],
    ['a comment', '/* c */ 1', 'syntax', 0, 1, 1],
    ['a line comment after a value', '[1 // c\n]', 'syntax', 3, 1, 4],
    ['a trailing comma in an array', '[1,]', 'syntax', 3, 1, 4],
    ['a trailing comma in an object', '{"a":1,\n}', 'syntax', 8, 2, 1],
    ['a leading zero', '[01]', 'syntax', 1, 1, 2],
    ['NaN', 'NaN', 'syntax', 0, 1, 1],
    ['Infinity', '-Infinity', 'syntax', 1, 1, 2],
    ['a single-quoted string', "['a']", 'syntax', 1, 1, 2],
    ['an unquoted key', '{a:1}', 'syntax', 1, 1, 2],
    ['a missing colon', '{"a" 1}', 'syntax', 5, 1, 6],
    ['a raw control character in a string', '"a\tb"', 'syntax', 2, 1, 3],
    ['an invalid escape', '"\\x41"', 'syntax', 1, 1, 2],
    ['a short \\u escape', '"\\u12"', 'syntax', 1, 1, 2],
    ['an unterminated string', '"abc', 'syntax', 4, 1, 5],
    ['a fraction without digits', '1.', 'syntax', 2, 1, 3],
    ['a plus sign', '+1', 'syntax', 0, 1, 1],
    ['a non-breaking space', '\u00a01', 'syntax', 0, 1, 1],
    ['a vertical tab', '\u000b1', 'syntax', 0, 1, 1],
    ['a byte-order mark', '\ufeff1', 'syntax', 0, 1, 1],
    ['an unclosed array', '[1', 'syntax', 2, 1, 3],
    ['a duplicate key', '{"a":1,"b":2,"a":3}', 'duplicate_key', 13, 1, 14],
    ['a duplicate key spelled with an escape', '{"a":1,"\\u0061":2}', 'duplicate_key', 7, 1, 8],
    ['a duplicate __proto__ key', '{"__proto__":1,"__proto__":2}', 'duplicate_key', 15, 1, 16],
    ['nesting beyond maxDepth', `${'['.repeat(257)}${']'.repeat(257)}`, 'too_deep', 256, 1, 257],
    ['an unsafe integer', '9007199254740992', 'unsafe_integer', 0, 1, 1],
    ['an unsafe integer one above 2^53', '[9007199254740993]', 'unsafe_integer', 1, 1, 2],
    ['an unsafe negative integer', '-9007199254740993', 'unsafe_integer', 0, 1, 1],
    ['an inexact integer with a fraction', '9007199254740993.0', 'unsafe_integer', 0, 1, 1],
    ['an inexact integer with an exponent', '{"n":1e23}', 'unsafe_integer', 5, 1, 6],
    ['an inexact large value', '1.7976931348623157e308', 'unsafe_integer', 0, 1, 1],
    ['an overflow to Infinity', '1e400', 'non_finite_number', 0, 1, 1],
    ['an overflow to -Infinity', '[0,\n-1e400]', 'non_finite_number', 4, 2, 1],
    ['an escaped lone high surrogate', '"\\ud800"', 'lone_surrogate', 1, 1, 2],
    ['an escaped lone low surrogate', '"a\\udc00"', 'lone_surrogate', 2, 1, 3],
    ['an escaped high surrogate followed by a letter', '"\\ud83dx"', 'lone_surrogate', 1, 1, 2],
    ['a reversed escaped pair', '"\\ude02\\ud83d"', 'lone_surrogate', 1, 1, 2],
    ['a raw lone surrogate in a string', '"ab\ud800"', 'lone_surrogate', 3, 1, 4],
    ['a raw lone surrogate in a key', '{"\udc00":1}', 'lone_surrogate', 2, 1, 3],
    ['a raw lone surrogate outside strings', '[\ud800]', 'lone_surrogate', 1, 1, 2],
    ['data after the value', '{"a":1} {"b":2}', 'trailing_data', 8, 1, 9],
    ['a second line of data', '1\r\n2', 'trailing_data', 3, 2, 1],
  ];

  it.each(cases)('%s', (_name, text, reason, position, line, column) => {
    const error = rejection(text);
    expect({
      reason: error.reason,
      position: error.position,
      line: error.line,
      column: error.column,
    }).toEqual({
      reason,
      position,
      line,
      column,
    });
    expect(error.message).toContain(`(${reason})`);
    expect(error.message).toContain(`line ${line}, column ${column} (position ${position})`);
    expect(error.name).toBe('JsonParseError');
    expect(error).toBeInstanceOf(CountersignError);
  });

  it('too_long: refuses a text longer than maxLength before reading it', () => {
    const error = rejection('[1, 2, 3]', { maxLength: 5 });
    expect(error).toMatchObject({ reason: 'too_long', position: 5, line: 1, column: 6 });
    expect(parseJson('[1, 2, 3]', { maxLength: 9 })).toEqual([1, 2, 3]);
    expect(parseJson('[1]', { maxLength: Number.POSITIVE_INFINITY })).toEqual([1]);
  });

  it('counts CR, LF and CRLF line ends alike', () => {
    expect(rejection('[\r1,\n2,\r\n3 x]')).toMatchObject({ line: 4, column: 3, position: 11 });
  });

  it('refuses depth 10^4 and 10^5 with too_deep, never RangeError', () => {
    for (const depth of [10_000, 100_000]) {
      expect(rejection(`${'['.repeat(depth)}${']'.repeat(depth)}`)).toMatchObject({
        reason: 'too_deep',
        position: 256,
      });
      expect(rejection(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`).reason).toBe('too_deep');
    }
  });

  it('parses depth 10^5 when the caller allows it, iteratively', () => {
    const depth = 100_000;
    let value = parseJson(`${'['.repeat(depth)}${']'.repeat(depth)}`, { maxDepth: depth });
    let levels = 0;
    while (Array.isArray(value)) {
      levels++;
      value = value[0] as never;
    }
    expect(levels).toBe(depth);
  });

  it('refuses invalid options and non-string input with a ConfigurationError', () => {
    expect(() => parseJson('1', { maxDepth: -1 })).toThrow(ConfigurationError);
    expect(() => parseJson('1', { maxLength: 1.5 })).toThrow(ConfigurationError);
    expect(() => parseJson(42 as unknown as string)).toThrow(ConfigurationError);
  });
});

describe('parseJson: results are prototype-safe', () => {
  it('keeps __proto__ as an own data property and pollutes nothing', () => {
    const value = parseJson('{"__proto__": {"polluted": 1}}') as JsonObject;
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(value, '__proto__')).toEqual({
      value: { polluted: 1 },
      writable: true,
      enumerable: true,
      configurable: true,
    });
    expect(value['polluted']).toBeUndefined();
    expect(canonicalize(value)).toBe('{"__proto__":{"polluted":1}}');
  });

  it('keeps constructor and prototype keys as data', () => {
    const value = parseJson('{"constructor": {"prototype": {"polluted": 1}}, "toString": 1}') as JsonObject;
    expect(Object.hasOwn(value, 'constructor')).toBe(true);
    expect(Object.hasOwn(value['constructor'] as JsonObject, 'prototype')).toBe(true);
    expect(value['toString']).toBe(1);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.prototype.toString).toBeTypeOf('function');
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });

  it('keeps nested __proto__ keys in arrays as data too', () => {
    const value = parseJson('[{"__proto__": null}, {"__proto__": [1]}]') as JsonObject[];
    expect(value.map((item) => Object.getPrototypeOf(item))).toEqual([Object.prototype, Object.prototype]);
    expect(value.map((item) => Object.hasOwn(item, '__proto__'))).toEqual([true, true]);
    expect(canonicalize(value)).toBe('[{"__proto__":null},{"__proto__":[1]}]');
  });

  it('never calls a setter, even one a polluter put on Object.prototype', () => {
    const calls: unknown[] = [];
    Object.defineProperty(Object.prototype, 'amount_minor', {
      set(value: unknown) {
        calls.push(value);
      },
      configurable: true,
    });
    try {
      const value = parseJson('{"amount_minor": 4000, "currency": "USD"}') as JsonObject;
      expect(calls).toEqual([]);
      expect(Object.getOwnPropertyDescriptor(value, 'amount_minor')).toEqual({
        value: 4000,
        writable: true,
        enumerable: true,
        configurable: true,
      });
      expect(Object.getOwnPropertyDescriptor(value, 'currency')).toEqual({
        value: 'USD',
        writable: true,
        enumerable: true,
        configurable: true,
      });
    } finally {
      delete (Object.prototype as Record<string, unknown>)['amount_minor'];
    }
    expect('amount_minor' in {}).toBe(false);
  });

  it('returns mutable values (freeze makes them read-only)', () => {
    const value = parseJson('{"a": [1]}') as { a: number[] };
    value.a.push(2);
    expect(value).toEqual({ a: [1, 2] });
  });
});
