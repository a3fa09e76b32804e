import { minorUnitExponent } from '../i18n/minor-units.js';

export { minorUnitExponent };

/** Money as a preview shows it: the exact minor units, the currency, and full-precision text. */
export interface Money {
  readonly minor: number;
  readonly currency: string;
  /** `240.49 USD`: every minor unit shown, never rounded. */
  readonly display: string;
}

/** Formats integer minor units at full precision: `formatMoney(24049, 'USD')` → `240.49 USD`. */
export function formatMoney(minor: number, currency: string): string {
  if (!Number.isSafeInteger(minor))
    throw new RangeError(`money: ${minor} is not an integer number of minor units`);
  const exponent = minorUnitExponent(currency);
  const sign = minor < 0 ? '-' : '';
  const digits = String(Math.abs(minor)).padStart(exponent + 1, '0');
  const whole = digits.slice(0, digits.length - exponent);
  const fraction = exponent > 0 ? `.${digits.slice(digits.length - exponent)}` : '';
  return `${sign}${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${fraction} ${currency}`;
}

/** A {@link Money} value for previews. */
export function money(minor: number, currency: string): Money {
  return { minor, currency, display: formatMoney(minor, currency) };
}
