export { type LanguageRange, negotiateLocale, parseAcceptLanguage } from './accept-language.js';
export { CATALOGS, translate } from './catalog.js';
export { formatDateIn, formatMoneyIn } from './format.js';
export { type Language, LANGUAGES, type ResolvedLocale, resolveLocale } from './locale.js';
export { type LocaleOptions, type Localizer, localizer, type PerLocale } from './localizer.js';
export type { Catalog, MessageKey, MessageParams } from './translation.js';
