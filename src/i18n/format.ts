import { minorUnitExponent } from './minor-units.js';

// Building an Intl formatter costs far more than formatting with one (tens to hundreds of µs:
// it loads locale data), and a handback or a console page formats many values in few locales.
// Formatters are kept per options; the keys come from configuration and stored proposals, so the
// cache is bounded and simply starts over when full.
const FORMATTERS_KEPT = 512;
const numberFormats = new Map<string, Intl.NumberFormat>();
const dateFormats = new Map<string, Intl.DateTimeFormat>();

function kept<F>(cache: Map<string, F>, key: string, make: () => F): F {
  const known = cache.get(key);
  if (known !== undefined) return known;
  const made = make();
  if (cache.size >= FORMATTERS_KEPT) cache.clear();
  cache.set(key, made);
  return made;
}

/**
 * The `Intl.DateTimeFormat` of {@link formatDateIn} for a locale and time zone, built once.
 * @throws {RangeError} for an unknown time zone.
 */
export function dateFormatIn(locale: string, timeZone: string): Intl.DateTimeFormat {
  return kept(
    dateFormats,
    `${locale}\u0000${timeZone}`,
    () =>
      new Intl.DateTimeFormat(locale, {
        year: 'numeric',
        month: 'short',
        day: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
        timeZone,
        timeZoneName: 'short',
      }),
  );
}

/**
 * Money from integer minor units, formatted for a locale by `Intl.NumberFormat` with every minor
 * unit shown and never rounded (the amount goes to `Intl` as an exact decimal string, not a float).
 *
 * @example
 * formatMoneyIn('de-DE', 123456, 'EUR'); // '1.234,56 €'
 * formatMoneyIn('en', 500, 'JPY');       // '¥500'
 * @throws {RangeError} when `minor` is not a safe integer or `currency` is not a currency code.
 */
export function formatMoneyIn(locale: string, minor: number, currency: string): string {
  if (!Number.isSafeInteger(minor))
    throw new RangeError(`money: ${minor} is not an integer number of minor units`);
  const exponent = minorUnitExponent(currency);
  const digits = String(Math.abs(minor)).padStart(exponent + 1, '0');
  const whole = digits.slice(0, digits.length - exponent);
  const decimal = exponent > 0 ? `${whole}.${digits.slice(digits.length - exponent)}` : whole;
  const format = kept(
    numberFormats,
    `${locale}\u0000${currency}`,
    () =>
      new Intl.NumberFormat(locale, {
        style: 'currency',
        currency,
        minimumFractionDigits: exponent,
        maximumFractionDigits: exponent,
      }),
  );
  return format.format(`${minor < 0 ? '-' : ''}${decimal}` as `${number}`);
}

/**
 * A moment formatted for a locale by `Intl.DateTimeFormat`: date, hours and minutes, and the time
 * zone's name, so a reader in another zone is never misled.
 *
 * @example
 * formatDateIn('de-DE', new Date('2026-12-01T10:30:00Z'), 'UTC'); // '1. Dez. 2026, 10:30 UTC'
 * @throws {RangeError} for an invalid date or an unknown time zone.
 */
export function formatDateIn(locale: string, value: Date | string | number, timeZone: string): string {
  const date = value instanceof Date ? value : new Date(value);
  return dateFormatIn(locale, timeZone).format(date);
}

/** A number formatted for a locale (`1234.5` → `1.234,5` in German). */
export function formatNumberIn(locale: string, value: number): string {
  return kept(numberFormats, locale, () => new Intl.NumberFormat(locale)).format(value);
}
