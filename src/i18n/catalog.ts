import { own } from '../canonical/own.js';
import { de } from './catalogs/de.js';
import { en } from './catalogs/en.js';
import { fr } from './catalogs/fr.js';
import type { Language } from './locale.js';
import type { Catalog, MessageKey, MessageParams } from './translation.js';

/** Every catalog, by language. */
export const CATALOGS: Readonly<Record<Language, Catalog>> = Object.freeze({ en, de, fr });

const PLACEHOLDER = /\{([A-Za-z][A-Za-z0-9_]*)\}/g;

/** The placeholder names of a template, sorted: what a translation must keep. */
export function placeholdersOf(template: string): string[] {
  return [...new Set(Array.from(template.matchAll(PLACEHOLDER), (m) => m[1] ?? ''))].sort();
}

/**
 * One message in a language, its placeholders filled. Values are inserted as given, in one pass:
 * a value that looks like a placeholder stays text.
 *
 * @example
 * translate('de', 'handback.superseded', { next: 'prp_2' }); // 'Ein Operator hat ihn bearbeitet; …'
 */
export function translate<K extends MessageKey>(
  language: Language,
  key: K,
  ...params: keyof MessageParams<K> extends never ? [] : [MessageParams<K>]
): string {
  const values: Readonly<Record<string, string>> = params[0] ?? {};
  return CATALOGS[language][key].replace(PLACEHOLDER, (match, name: string) => own(values, name) ?? match);
}
