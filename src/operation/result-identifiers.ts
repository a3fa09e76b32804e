import { own } from '../canonical/own.js';
import type { FieldRules } from '../canonical/scope-diff.js';

/** One identifier of a result, as the default handback names it: `payment_id pay_1`. */
export interface ResultIdentifier {
  readonly name: string;
  readonly value: string;
}

// `id`, `payment_id`, `paymentId`: what a provider or the application hands back to look a thing up.
const ID_KEY = /^(?:id|[A-Za-z][A-Za-z0-9_]*(?:_id|Id))$/;
// A field whose name says secret never reaches the model, whatever its shape.
const SECRET_KEY = /secret|token|pass(?:word|wd)|credential|signature|session|key|private|auth(?!or)/i;
// Token-like text only: no spaces, no punctuation that could open a sentence or markup.
const SAFE_VALUE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
// A redactor's output (`…er-7`) may hold an ellipsis, never a space or a control character.
const SAFE_REDACTED = /^[^\s\p{C}]{1,64}$/u;
const MAX_IDENTIFIERS = 5;

/**
 * The identifiers a succeeded outcome's result carries, for a handback the operation did not
 * write: top-level fields named `id`, `…_id` or `…Id` whose value is a short token (letters,
 * digits, `.`, `_`, `:`, `-`; at most 64) or a safe integer, at most five, in the result's key
 * order. A field whose name suggests a secret (`token`, `key`, `secret`…) is left out; a field the
 * operation redacts (its `fields` rules, as in diffs, notifications and exports) is shown redacted.
 *
 * @example
 * resultIdentifiers({ payment_id: 'pay_1', amount_minor: 500, receipt_url: 'https://…' });
 * // [{ name: 'payment_id', value: 'pay_1' }]
 */
export function resultIdentifiers(result: unknown, rules: FieldRules = {}): ResultIdentifier[] {
  if (result === null || typeof result !== 'object' || Array.isArray(result)) return [];
  const found: ResultIdentifier[] = [];
  for (const [name, raw] of Object.entries(result)) {
    if (found.length >= MAX_IDENTIFIERS) break;
    if (!ID_KEY.test(name) || SECRET_KEY.test(name)) continue;
    const value = typeof raw === 'number' && Number.isSafeInteger(raw) ? String(raw) : raw;
    if (typeof value !== 'string' || !SAFE_VALUE.test(value)) continue;
    const redactor = own(rules, name)?.redact;
    if (!redactor) {
      found.push({ name, value });
      continue;
    }
    const shown = redactor(value);
    if (SAFE_REDACTED.test(shown)) found.push({ name, value: shown });
  }
  return found;
}
