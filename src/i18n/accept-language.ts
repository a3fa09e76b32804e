import { isLanguage, resolveLocale } from './locale.js';

/** One element of an `Accept-Language` header: a language range and its weight. */
export interface LanguageRange {
  /** A language range as sent (`de-DE`, `fr`, or `*`). */
  readonly range: string;
  /** The q-value, 0 to 1; 0 means "not acceptable". */
  readonly q: number;
}

// RFC 9110 §12.4.2 / §12.5.4 and RFC 4647 §2.1.
const RANGE = /^(?:\*|[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*)$/;
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;
// A header is short; a longer one is someone's experiment, and its first elements decide anyway.
const MAX_ELEMENTS = 32;

/**
 * Parses an `Accept-Language` header into its ranges, in header order. Malformed elements are
 * skipped (a client's mistake must not cost the response), as are elements past the 32nd.
 *
 * @example
 * parseAcceptLanguage('fr-CA;q=0.9, en;q=0.5'); // [{ range: 'fr-CA', q: 0.9 }, { range: 'en', q: 0.5 }]
 */
export function parseAcceptLanguage(header: string): LanguageRange[] {
  const ranges: LanguageRange[] = [];
  for (const element of header.split(',').slice(0, MAX_ELEMENTS)) {
    const [rawRange = '', ...params] = element.split(';').map((part) => part.trim());
    if (!RANGE.test(rawRange)) continue;
    let q = 1;
    let valid = true;
    for (const param of params) {
      const match = /^q=(.*)$/i.exec(param);
      if (!match || !QVALUE.test(match[1] ?? '')) {
        valid = false;
        break;
      }
      q = Number(match[1]);
    }
    if (valid) ranges.push({ range: rawRange, q });
  }
  return ranges;
}

/**
 * The locale to answer in for an `Accept-Language` header: the acceptable range (q > 0) of
 * highest weight whose language has a catalog (`fr-CA` falls back to French by truncation, keeping
 * its region for formatting), ties in header order; English when none does, for `*`, or without a
 * header. Returns a BCP 47 tag for {@link resolveLocale}.
 *
 * @example
 * negotiateLocale('fr-CA;q=0.9, en;q=0.5'); // 'fr-CA'
 * negotiateLocale('ja, es;q=0.8');           // 'en'
 */
export function negotiateLocale(header: string | undefined): string {
  if (header === undefined) return 'en';
  const acceptable = parseAcceptLanguage(header)
    .map((r, index) => ({ ...r, index }))
    .filter((r) => r.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { range } of acceptable) {
    if (range === '*') return 'en';
    // A range of a language without a catalog is passed over: the next range may have one.
    const language = range.split('-')[0]?.toLowerCase() ?? '';
    if (!isLanguage(language)) continue;
    // A range BCP 47 does not accept as a tag (`de-1234567`) still asks for the language.
    const resolved = resolveLocale(range);
    return resolved.language === language ? resolved.tag : language;
  }
  return 'en';
}
