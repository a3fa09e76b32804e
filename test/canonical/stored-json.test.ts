import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../src/canonical/canonicalize.js';
import { JsonParseError } from '../../src/canonical/errors.js';
import { parseStoredJson } from '../../src/canonical/stored-json.js';

describe('parseStoredJson', () => {
  it('gives the same deep-frozen value for the same text, read once', () => {
    const text = canonicalize({ amount_minor: 24_049, payees: ['acct-7'], note: { by: 'ada' } });
    const first = parseStoredJson(text);
    // Another string with the same characters (as a row read again gives): the same frozen value.
    const again = parseStoredJson(`${text.slice(0, 5)}${text.slice(5)}`);
    expect(again).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen((first as { payees: unknown }).payees)).toBe(true);
    expect(Object.isFrozen((first as { note: unknown }).note)).toBe(true);
  });

  it('parses a text changed by one character afresh: a kept result never stands for another text', () => {
    const text = canonicalize({ amount_minor: 24_049, currency: 'USD' });
    expect(parseStoredJson(text)).toEqual({ amount_minor: 24_049, currency: 'USD' });
    expect(parseStoredJson(text.replace('24049', '94049'))).toEqual({
      amount_minor: 94_049,
      currency: 'USD',
    });
    expect(parseStoredJson(text)).toEqual({ amount_minor: 24_049, currency: 'USD' });
  });

  it('refuses a bad text every time it is read, after a good one and however often', () => {
    const good = canonicalize({ a: 1 });
    parseStoredJson(good);
    for (let i = 0; i < 3; i++) {
      expect(() => parseStoredJson('{"a":1,"a":2}')).toThrow(JsonParseError);
      expect(() => parseStoredJson(`${good} `.replace('}', ',}'))).toThrow(JsonParseError);
    }
  });

  it('keeps a bounded number of texts and still parses every one correctly past the bound', () => {
    for (let i = 0; i < 1_000; i++) expect(parseStoredJson(`{"n":${i}}`)).toEqual({ n: i });
    for (let i = 0; i < 1_000; i += 97) expect(parseStoredJson(`{"n":${i}}`)).toEqual({ n: i });
  });
});
