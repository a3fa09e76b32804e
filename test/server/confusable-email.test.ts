import { describe, expect, it } from 'vitest';
import { emailSkeleton, hasInvisibleCharacters } from '../../src/server/directory/confusable-email.js';

describe('the UTS #39 skeleton of an email', () => {
  it.each([
    ['a Cyrillic а', '\u0430da@acme.test', 'ada@acme.test'],
    ['a Greek ο and a Cyrillic е', 'b\u03BFb.k\u0435ll@acme.test', 'bob.kell@acme.test'],
    ['fullwidth letters', '\uFF41\uFF44\uFF41@acme.test', 'ada@acme.test'],
    ['mathematical letters', '\u{1D41A}da@acme.test', 'ada@acme.test'],
    ['upper-case Cyrillic', '\u0410DA@ACME.TEST', 'ada@acme.test'],
    ['a zero-width space (ignorable, removed)', 'a\u200Bda@acme.test', 'ada@acme.test'],
    ['a combining grave written apart', 'ada\u0300@acme.test', 'ad\u00E0@acme.test'],
  ])('maps %s onto the original', (_what, lookalike, original) => {
    expect(emailSkeleton(lookalike)).toBe(emailSkeleton(original));
  });

  it('keeps genuinely different emails apart', () => {
    const emails = [
      'ada@acme.test',
      'ida@acme.test',
      'adam@acme.test',
      'ada@acme.tests',
      'bob@acme.test',
      'ad\u00E0@acme.test',
    ];
    expect(new Set(emails.map(emailSkeleton)).size).toBe(emails.length);
  });

  it('finds invisible and format characters, and only those', () => {
    for (const email of [
      'a\u200Bda@acme.test',
      'ada@acme.test\u2060',
      'ad\u00ADa@acme.test',
      'ada\u202E@acme.test',
      '\uE000a@acme.test',
    ])
      expect(hasInvisibleCharacters(email)).toBe(true);
    for (const email of ['ada@acme.test', '\u0430da@acme.test', 'j\u00FCrgen@acme.test'])
      expect(hasInvisibleCharacters(email)).toBe(false);
  });
});
