import { z } from 'zod';

/**
 * Money in integer minor units (cents): a safe, non-negative integer. Booleans and floats are
 * refused, never coerced.
 */
export function minorUnits(): z.ZodNumber {
  return z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
}

/** An ISO 4217 currency code in upper case, e.g. `USD`. */
export function currencyCode(): z.ZodString {
  return z.string().regex(/^[A-Z]{3}$/, 'expected an ISO 4217 code like USD');
}

/**
 * A preview's money value as `money()` builds it (`{ minor, currency, display }`), for an
 * operation's `preview` schema.
 */
export function moneyPreview() {
  return z.strictObject({ minor: minorUnits(), currency: currencyCode(), display: z.string() });
}
