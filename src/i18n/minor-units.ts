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
