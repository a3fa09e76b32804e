import { own } from '../canonical/own.js';
import { translate } from './catalog.js';
import { dateFormatIn, formatDateIn, formatMoneyIn, formatNumberIn } from './format.js';
import { type Language, resolveLocale } from './locale.js';
import type { MessageKey, MessageParams } from './translation.js';

/** Which language and time zone a text is for. Both optional: English, UTC. */
export interface LocaleOptions {
  /** A BCP 47 tag (`de`, `de-CH`, `fr-CA`); a language without a catalog, or a malformed tag, is English. */
  readonly locale?: string;
  /** An IANA time zone for dates (`Europe/Berlin`); default `UTC`. */
  readonly timeZone?: string;
}

/**
 * Texts in one language, per language: `en` is required and is what every language without its own
 * entry gets. Keys are languages (`de`) or full tags (`de-CH`), the more specific one winning.
 */
export type PerLocale<T> = { readonly en: T } & { readonly [tag: string]: T };

/**
 * What an operation's own texts are written with: the language, and `Intl` formatting of money,
 * dates and numbers in it.
 */
export interface Localizer {
  /** The BCP 47 tag formatting follows, e.g. `de-CH`. */
  readonly locale: string;
  /** The catalog language, `en`, `de` or `fr`. */
  readonly language: Language;
  readonly timeZone: string;
  /** Integer minor units as money: `money(123456, 'EUR')` → `1.234,56 €` in `de-DE`. */
  money(minor: number, currency: string): string;
  /** A moment with its time zone: `1. Dez. 2026, 10:30 UTC` in `de-DE`. */
  date(value: Date | string | number): string;
  /** A number with the locale's separators. */
  number(value: number): string;
  /**
   * The entry for this locale: the full tag (`de-CH`), then the language (`de`), then `en`.
   *
   * @example
   * text.pick({ en: `Paid ${text.money(m, c)}.`, de: `Bezahlt: ${text.money(m, c)}.` })
   */
  pick<T>(choices: PerLocale<T>): T;
  /** One of countersign's own messages in this language. */
  t<K extends MessageKey>(
    key: K,
    ...params: keyof MessageParams<K> extends never ? [] : [MessageParams<K>]
  ): string;
}

/**
 * A {@link Localizer} for a locale and time zone.
 *
 * @example
 * const text = localizer({ locale: 'de-DE', timeZone: 'Europe/Berlin' });
 * text.money(123456, 'EUR'); // '1.234,56 €'
 * @throws {RangeError} for an unknown time zone (a configuration mistake).
 */
export function localizer(options: LocaleOptions = {}): Localizer {
  const { tag, language } = resolveLocale(options.locale);
  const timeZone = options.timeZone ?? 'UTC';
  // Fail where the zone is chosen, not at the first date someone formats.
  dateFormatIn(tag, timeZone);
  return Object.freeze({
    locale: tag,
    language,
    timeZone,
    money: (minor: number, currency: string) => formatMoneyIn(tag, minor, currency),
    date: (value: Date | string | number) => formatDateIn(tag, value, timeZone),
    number: (value: number) => formatNumberIn(tag, value),
    pick: <T>(choices: PerLocale<T>): T => pickEntry(choices, tag, language).value,
    t: <K extends MessageKey>(
      key: K,
      ...params: keyof MessageParams<K> extends never ? [] : [MessageParams<K>]
    ) => translate(language, key, ...params),
  });
}

/**
 * The entry of `choices` for a locale: the full tag (`de-CH`), then the language (`de`), then `en`;
 * `matched` is false when none of the first two was there and `en` stands in for another language.
 */
export function pickEntry<T>(
  choices: PerLocale<T>,
  tag: string,
  language: Language,
): { readonly value: T; readonly matched: boolean } {
  const keys = Object.keys(choices);
  for (const wanted of [tag.toLowerCase(), language]) {
    const key = keys.find((k) => k.toLowerCase() === wanted);
    if (key !== undefined) return { value: own(choices, key) as T, matched: true };
  }
  return { value: choices.en, matched: language === 'en' };
}
