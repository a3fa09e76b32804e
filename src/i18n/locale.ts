/** The languages countersign ships message catalogs for. */
export const LANGUAGES = ['en', 'de', 'fr'] as const;

/** A language with a message catalog. */
export type Language = (typeof LANGUAGES)[number];

/** A locale as countersign uses it: the BCP 47 tag for `Intl`, and the catalog's language. */
export interface ResolvedLocale {
  /** Canonical BCP 47 tag, e.g. `de-CH`: numbers, money and dates follow its region. */
  readonly tag: string;
  /** The catalog the sentences come from: the tag's language, or `en` when there is none for it. */
  readonly language: Language;
}

const ENGLISH: ResolvedLocale = Object.freeze({ tag: 'en', language: 'en' });

/** True for a language countersign has a catalog for. */
export function isLanguage(value: string): value is Language {
  return (LANGUAGES as readonly string[]).includes(value);
}

/**
 * Resolves a BCP 47 tag to a supported locale: `de-CH` keeps its region for formatting and uses the
 * German catalog; extensions are dropped; a tag that is malformed or of a language without a
 * catalog is English.
 *
 * @example
 * resolveLocale('fr-CA'); // { tag: 'fr-CA', language: 'fr' }
 * resolveLocale('es');    // { tag: 'en', language: 'en' }
 */
export function resolveLocale(tag: string | undefined): ResolvedLocale {
  if (tag === undefined) return ENGLISH;
  let canonical: string | undefined;
  try {
    canonical = Intl.getCanonicalLocales(tag)[0];
  } catch {
    return ENGLISH;
  }
  if (canonical === undefined) return ENGLISH;
  // Extensions (`-u-nu-arab`, `-u-tz-…`) are dropped: digits, currency and zone are ours to choose.
  const { baseName, language } = new Intl.Locale(canonical);
  // Formatting in a language whose sentences we cannot write would mix two languages in one line.
  return isLanguage(language) ? Object.freeze({ tag: baseName, language }) : ENGLISH;
}
