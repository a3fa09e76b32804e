import { type Localizer, localizer, type PerLocale } from '../i18n/localizer.js';
import type { Outcome } from './outcome.js';

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

/** The sentence of an outcome when the operation writes none, in the localizer's language. */
export function defaultHandback(outcome: Outcome, text: Localizer): string {
  switch (outcome.kind) {
    case 'succeeded':
      return text.t('outcome.succeeded');
    case 'needs_reconciliation':
      return text.t('outcome.needs_reconciliation');
    case 'revision_required':
      return text.t('outcome.revision_required', { reason: outcome.reason });
    case 'terminal_failure':
      return text.t('outcome.terminal_failure', { correlationId: outcome.correlationId });
  }
}

/**
 * The operation's `handback` as the engine calls it: without a localizer it writes English, as
 * every definition written before locales did.
 */
export function localizedHandback<Result>(
  handback: HandbackText<Result> | undefined,
): (outcome: Outcome<Result>, text?: Localizer) => string {
  return (outcome, text = localizer()) => {
    if (handback === undefined) return defaultHandback(outcome as Outcome, text);
    const write = typeof handback === 'function' ? handback : text.pick(handback);
    return write(outcome, text);
  };
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
