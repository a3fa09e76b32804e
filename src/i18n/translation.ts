import type { ProposalStatus } from '../records/status.js';
import type { en } from './catalogs/en.js';

/** The key of one message; the English catalog defines them. */
export type MessageKey = keyof typeof en;

/** The `{name}` placeholders of a message template, as a union of names. */
export type Placeholders<Template extends string> = Template extends `${string}{${infer Name}}${infer Rest}`
  ? Name | Placeholders<Rest>
  : never;

/** The values a message needs: one string per placeholder of its English template. */
export type MessageParams<K extends MessageKey> = Readonly<Record<Placeholders<(typeof en)[K]>, string>>;

/** A message catalog: every key of the English one, each a template string. */
export type Catalog = { readonly [K in MessageKey]: string };

// Every status must have a label: a new status without one fails to compile here.
type StatusLabelsComplete = `status.${ProposalStatus}` extends MessageKey ? true : never;
const statusLabelsComplete: StatusLabelsComplete = true;
void statusLabelsComplete;

type SamePlaceholders<C extends Catalog> = {
  readonly [K in MessageKey]: [Placeholders<C[K]>] extends [Placeholders<(typeof en)[K]>]
    ? [Placeholders<(typeof en)[K]>] extends [Placeholders<C[K]>]
      ? C[K]
      : `must use the placeholders {${Placeholders<(typeof en)[K]>}}`
    : `must use the placeholders {${Placeholders<(typeof en)[K]>}}`;
};

/**
 * Declares a translation of the English catalog. A missing or unknown key, or a message whose
 * placeholders differ from the English one, is a compile error.
 *
 * @example
 * export const de = translation({ 'handback.pending': 'Wartet auf eine menschliche Entscheidung.', … });
 */
export function translation<const C extends Catalog>(
  catalog: C & SamePlaceholders<C> & { readonly [K in Exclude<keyof C, MessageKey>]: never },
): C {
  return Object.freeze(catalog);
}
