import { own } from '../canonical/own.js';

// ISO 4217 minor-unit exponents that differ from 2; everything else has 2.
const EXPONENT: Readonly<Record<string, number>> = {
  BHD: 3,
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  IQD: 3,
  ISK: 0,
  JOD: 3,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  PYG: 0,
  RWF: 0,
  TND: 3,
  UGX: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
};

/** How many minor-unit digits a currency has (ISO 4217): 2 unless listed, `JPY` 0, `KWD` 3. */
export function minorUnitExponent(currency: string): number {
  return own(EXPONENT, currency) ?? 2;
}

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
