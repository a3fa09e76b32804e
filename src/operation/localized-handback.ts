import type { FieldRules } from '../canonical/scope-diff.js';
import { type Localizer, localizer, type PerLocale, pickEntry } from '../i18n/localizer.js';
import type { Outcome } from './outcome.js';
import { resultIdentifiers } from './result-identifiers.js';

/**
 * Writes an outcome as safe text for the next model turn and the API. `text` carries the locale
 * asked for and `Intl` formatting of money and dates; a function that ignores it writes one language.
 */
export type HandbackFunction<Result> = (outcome: Outcome<Result>, text: Localizer) => string;

/**
 * An operation's handback: one function, or one per language (`{ en, de, fr }`, `en` required and
 * the fallback for every language without its own entry).
 */
export type HandbackText<Result> = HandbackFunction<Result> | PerLocale<HandbackFunction<Result>>;

/** A handback text and the language it is written in. */
export interface WrittenHandback {
  readonly text: string;
  /**
   * The BCP 47 tag of the language the text is in (what `Content-Language` names): the locale asked
   * for when the text was written in it (`fr-CA`), else the language it fell back to (`en`).
   */
  readonly language: string;
}

/**
 * The sentence of an outcome when the operation writes none, in the localizer's language. A
 * succeeded outcome names the identifiers its result carries (`payment_id pay_1`; see
 * {@link resultIdentifiers}, redacted by `rules`).
 */
export function defaultHandback(outcome: Outcome, text: Localizer, rules: FieldRules = {}): string {
  switch (outcome.kind) {
    case 'succeeded': {
      const ids = resultIdentifiers(outcome.result, rules);
      if (ids.length === 0) return text.t('outcome.succeeded');
      return text.t('outcome.succeeded_ids', {
        identifiers: ids.map((id) => `${id.name} ${id.value}`).join(', '),
      });
    }
    case 'needs_reconciliation':
      return text.t('outcome.needs_reconciliation');
    case 'revision_required':
      return text.t('outcome.revision_required', { reason: outcome.reason });
    case 'terminal_failure':
      return text.t('outcome.terminal_failure', { correlationId: outcome.correlationId });
  }
}

/**
 * Writes an outcome with an operation's `handback` and says in which language it came out:
 * - none: the catalog sentence ({@link defaultHandback}), in the localizer's language;
 * - one per language: the entry for the locale, else `en`, which is then written with an English
 *   localizer (English money and dates, never a French amount inside an English sentence);
 * - one function: in the localizer's language when it reads the localizer's `language` or
 *   `locale`, or writes with `t`; in the entry's language when it writes with `pick`; otherwise
 *   English, as every definition written before locales did.
 */
export function writeHandback<Result>(
  handback: HandbackText<Result> | undefined,
  outcome: Outcome<Result>,
  text: Localizer,
  rules: FieldRules = {},
): WrittenHandback {
  if (handback === undefined)
    return { text: defaultHandback(outcome as Outcome, text, rules), language: text.locale };
  if (typeof handback !== 'function') {
    const entry = pickEntry(handback, text.locale, text.language);
    if (entry.matched) return { text: entry.value(outcome, text), language: text.locale };
    const english = localizer({ locale: 'en', timeZone: text.timeZone });
    return { text: entry.value(outcome, english), language: 'en' };
  }
  const watched = watchedLocalizer(text);
  const written = handback(outcome, watched.text);
  return { text: written, language: watched.language() };
}

/** A localizer that notes whether (and in which language) a function used it to choose words. */
function watchedLocalizer(text: Localizer): { readonly text: Localizer; language(): string } {
  let chosen: string | undefined;
  const honoured = () => {
    chosen ??= text.locale;
  };
  const watched: Localizer = Object.freeze({
    get locale() {
      honoured();
      return text.locale;
    },
    get language() {
      honoured();
      return text.language;
    },
    timeZone: text.timeZone,
    money: text.money,
    date: text.date,
    number: text.number,
    pick: <T>(choices: PerLocale<T>): T => {
      const entry = pickEntry(choices, text.locale, text.language);
      chosen = entry.matched ? text.locale : 'en';
      return entry.value;
    },
    t: ((...args: Parameters<Localizer['t']>) => {
      honoured();
      return text.t(...args);
    }) as Localizer['t'],
  });
  return { text: watched, language: () => chosen ?? 'en' };
}

/**
 * The operation's `handback` as the engine calls it: without a localizer it writes English, as
 * every definition written before locales did.
 */
export function localizedHandback<Result>(
  handback: HandbackText<Result> | undefined,
  rules: FieldRules = {},
): (outcome: Outcome<Result>, text?: Localizer) => string {
  return (outcome, text = localizer()) => writeHandback(handback, outcome, text, rules).text;
}

/** Why a per-language handback cannot work, or undefined when it can. */
export function handbackDefinitionProblem(handback: unknown): string | undefined {
  if (handback === undefined || typeof handback === 'function') return undefined;
  if (typeof handback !== 'object' || handback === null) return 'handback must be a function or { en, … }';
  if (typeof (handback as { en?: unknown }).en !== 'function')
    return 'a per-language handback needs an `en` function (every other language falls back to it)';
  for (const [tag, write] of Object.entries(handback)) {
    if (typeof write !== 'function') return `handback.${tag} must be a function`;
  }
  return undefined;
}
