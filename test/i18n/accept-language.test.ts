import { describe, expect, it } from 'vitest';
import { negotiateLocale, parseAcceptLanguage, resolveLocale } from '../../src/i18n/index.js';

describe('parseAcceptLanguage', () => {
  it('reads ranges and q-values in header order, weight 1 by default', () => {
    expect(parseAcceptLanguage('fr-CA;q=0.9, en;q=0.5, de')).toEqual([
      { range: 'fr-CA', q: 0.9 },
      { range: 'en', q: 0.5 },
      { range: 'de', q: 1 },
    ]);
  });

  it('accepts optional whitespace, an upper-case Q and the wildcard', () => {
    expect(parseAcceptLanguage(' de-DE ; Q=0.7 ,*;q=0.1')).toEqual([
      { range: 'de-DE', q: 0.7 },
      { range: '*', q: 0.1 },
    ]);
  });

  it('skips malformed elements and keeps the rest', () => {
    expect(
      parseAcceptLanguage('de;q=2, fr;q=0.5555, en_US, ;q=1, toolongrange, es;q=abc, it;level=1, fr;q=0.5'),
    ).toEqual([{ range: 'fr', q: 0.5 }]);
  });

  it('reads at most 32 elements', () => {
    const header = [...Array.from({ length: 40 }, () => 'xx;q=0.1'), 'de'].join(',');
    expect(parseAcceptLanguage(header)).toHaveLength(32);
  });
});

describe('negotiateLocale', () => {
  it('answers German to de', () => {
    expect(negotiateLocale('de')).toBe('de');
  });

  it('answers French to fr-CA;q=0.9, en;q=0.5, keeping the region for formatting', () => {
    expect(negotiateLocale('fr-CA;q=0.9, en;q=0.5')).toBe('fr-CA');
  });

  it('orders by weight, not by position', () => {
    expect(negotiateLocale('en;q=0.2, de;q=0.8')).toBe('de');
  });

  it('keeps header order between equal weights', () => {
    expect(negotiateLocale('fr, de')).toBe('fr');
    expect(negotiateLocale('de;q=0.5, fr;q=0.5')).toBe('de');
  });

  it('passes over languages without a catalog to the next acceptable one', () => {
    expect(negotiateLocale('ja, es;q=0.9, de-AT;q=0.3')).toBe('de-AT');
  });

  it('never picks a range the client marked not acceptable (q=0)', () => {
    expect(negotiateLocale('de;q=0, fr;q=0.1')).toBe('fr');
    expect(negotiateLocale('de;q=0')).toBe('en');
  });

  it('falls back to English for an unknown language, the wildcard, garbage or no header', () => {
    expect(negotiateLocale('ja')).toBe('en');
    expect(negotiateLocale('*')).toBe('en');
    expect(negotiateLocale('%%%, ;;;')).toBe('en');
    expect(negotiateLocale('')).toBe('en');
    expect(negotiateLocale(undefined)).toBe('en');
  });

  it('canonicalizes the case of the tag it returns', () => {
    expect(negotiateLocale('DE-de')).toBe('de-DE');
  });
});

describe('resolveLocale', () => {
  it('uses the catalog of the language and keeps the tag', () => {
    expect(resolveLocale('de-CH')).toEqual({ tag: 'de-CH', language: 'de' });
    expect(resolveLocale('fr')).toEqual({ tag: 'fr', language: 'fr' });
  });

  it('drops extensions: digits and zone are not the client’s to choose', () => {
    expect(resolveLocale('de-DE-u-nu-arab-tz-usnyc')).toEqual({ tag: 'de-DE', language: 'de' });
    expect(negotiateLocale('fr-u-nu-arab')).toBe('fr');
  });

  it('is English for a language without a catalog or a malformed tag', () => {
    expect(resolveLocale('es-MX')).toEqual({ tag: 'en', language: 'en' });
    expect(resolveLocale('not a tag')).toEqual({ tag: 'en', language: 'en' });
    expect(resolveLocale(undefined)).toEqual({ tag: 'en', language: 'en' });
  });
});
