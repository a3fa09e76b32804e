import { declaredOrder, type FieldDeclarations, isHighImpact } from '../../../operation/field-emphasis.js';

export { declaredOrder, type FieldDeclarations, isHighImpact };

/** One top-level field of a preview as the review page shows it. */
export interface ReviewField {
  readonly key: string;
  readonly value: unknown;
  /** Declared `highImpact` in the operation's `fields`: shown emphasised. */
  readonly highImpact: boolean;
}

/**
 * The preview's top-level fields in the order the operation declares them (see
 * {@link declaredOrder}); fields it does not declare follow in their stored order. Without the
 * operation (no longer registered), the stored order. `omit` leaves fields out (the title, shown
 * as the heading).
 */
export function reviewFields(
  preview: Readonly<Record<string, unknown>>,
  operation: FieldDeclarations | undefined,
  omit: readonly string[] = [],
): ReviewField[] {
  const keys = Object.keys(preview).filter((k) => !omit.includes(k));
  const order = operation ? declaredOrder(operation) : [];
  const rank = (key: string) => {
    const i = order.indexOf(key);
    return i === -1 ? order.length : i;
  };
  // Array.prototype.sort is stable: undeclared fields keep their stored order.
  return keys
    .map((key, stored) => ({ key, stored }))
    .sort((a, b) => rank(a.key) - rank(b.key) || a.stored - b.stored)
    .map(({ key }) => ({ key, value: preview[key], highImpact: isHighImpact(operation, key) }));
}
