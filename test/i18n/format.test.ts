import { describe, expect, it } from 'vitest';
import { formatDateIn, formatMoneyIn, localizer } from '../../src/i18n/index.js';

// Intl separates amount and currency with a no-break space, and French groups with a narrow one.
const NBSP = '\u00a0';
const NNBSP = '\u202f';
const moment = new Date('2026-12-01T10:30:00Z');

describe('formatMoneyIn', () => {
  it('formats euros from minor units per locale', () => {
    expect(formatMoneyIn('de-DE', 123456, 'EUR')).toBe(`1.234,56${NBSP}€`);
    expect(formatMoneyIn('fr-FR', 123456, 'EUR')).toBe(`1${NNBSP}234,56${NBSP}€`);
    expect(formatMoneyIn('en', 123456, 'EUR')).toBe('€1,234.56');
    expect(formatMoneyIn('en', 24049, 'USD')).toBe('$240.49');
  });

  it('shows every minor unit of the currency, never rounding', () => {
    expect(formatMoneyIn('en', 1, 'USD')).toBe('$0.01');
    expect(formatMoneyIn('de-DE', 1234, 'KWD')).toBe(`1,234${NBSP}KWD`);
    expect(formatMoneyIn('en', 500, 'JPY')).toBe('¥500');
    expect(formatMoneyIn('de-DE', -5, 'EUR')).toBe(`-0,05${NBSP}€`);
  });

  it('is exact up to the largest safe integer (no float on the way)', () => {
    expect(formatMoneyIn('en', Number.MAX_SAFE_INTEGER, 'USD')).toBe('$90,071,992,547,409.91');
  });

  it('refuses a fraction of a minor unit', () => {
    expect(() => formatMoneyIn('en', 1.5, 'USD')).toThrow(RangeError);
  });
});

describe('formatDateIn', () => {
  it('formats a moment per locale with its time zone named', () => {
    // ICU releases differ on the space before AM (U+202F or U+0020); the rest is exact.
    expect(formatDateIn('en', moment, 'UTC').replace(NNBSP, ' ')).toBe('Dec 1, 2026, 10:30 AM UTC');
    expect(formatDateIn('de-DE', moment, 'UTC')).toBe('1. Dez. 2026, 10:30 UTC');
    expect(formatDateIn('fr-FR', moment, 'UTC')).toBe('1 déc. 2026, 10:30 UTC');
    expect(formatDateIn('de-DE', moment, 'Europe/Berlin')).toBe('1. Dez. 2026, 11:30 MEZ');
  });

  it('accepts an ISO string or epoch milliseconds as stored in a result', () => {
    expect(formatDateIn('de-DE', '2026-12-01T10:30:00.000Z', 'UTC')).toBe('1. Dez. 2026, 10:30 UTC');
    expect(formatDateIn('de-DE', moment.getTime(), 'UTC')).toBe('1. Dez. 2026, 10:30 UTC');
  });
});

describe('localizer', () => {
  it('formats in its locale and zone, and writes countersign messages in its language', () => {
    const text = localizer({ locale: 'de-DE', timeZone: 'Europe/Berlin' });
    expect(text.language).toBe('de');
    expect(text.money(123456, 'EUR')).toBe(`1.234,56${NBSP}€`);
    expect(text.date(moment)).toBe('1. Dez. 2026, 11:30 MEZ');
    expect(text.number(1234.5)).toBe('1.234,5');
    expect(text.t('handback.pending')).toBe('Wartet auf eine menschliche Entscheidung.');
  });

  it('is English in UTC by default', () => {
    const text = localizer();
    expect([text.locale, text.language, text.timeZone]).toEqual(['en', 'en', 'UTC']);
  });

  it('picks the tag, then the language, then English', () => {
    const choices = { en: 'en', de: 'de', 'de-CH': 'de-CH' };
    expect(localizer({ locale: 'de-CH' }).pick(choices)).toBe('de-CH');
    expect(localizer({ locale: 'de-AT' }).pick(choices)).toBe('de');
    expect(localizer({ locale: 'fr' }).pick(choices)).toBe('en');
  });

  it('refuses an unknown time zone where it is chosen', () => {
    expect(() => localizer({ timeZone: 'Mars/Olympus' })).toThrow(RangeError);
  });
});
