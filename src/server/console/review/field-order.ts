import { z } from 'zod';
import { own } from '../../../canonical/own.js';
import type { AnyOperation } from '../../../operation/define-operation.js';

/** One top-level field of a preview as the review page shows it. */
export interface ReviewField {
  readonly key: string;
  readonly value: unknown;
  /** Declared `highImpact` in the operation's `fields`: shown emphasised. */
  readonly highImpact: boolean;
}

/** The parts of an operation that say how its preview is ordered and emphasised. */
export type FieldDeclarations = Pick<AnyOperation, 'fields' | 'preview' | 'arguments' | 'scope'>;

function shapeKeys(schema: z.ZodType | undefined): readonly string[] {
  return schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
}

/** The top-level field of a field pattern: `customer.id` → `customer`, `recipients[]` → `recipients`. */
function topLevel(pattern: string): string {
  return pattern.split(/[.[]/, 1)[0] ?? pattern;
}

/**
 * The order the operation's author declared: the preview schema's shape, then the patterns of
 * `fields`, then the arguments' and the scope's shapes (each key once, first place wins).
 */
export function declaredOrder(operation: FieldDeclarations): readonly string[] {
  return [
    ...new Set([
      ...shapeKeys(operation.preview),
      ...Object.keys(operation.fields).map(topLevel),
      ...shapeKeys(operation.arguments),
      ...shapeKeys(operation.scope),
    ]),
  ];
}

/** Whether the operation declares this top-level field (or anything inside it) `highImpact`. */
export function isHighImpact(operation: FieldDeclarations | undefined, key: string): boolean {
  if (!operation) return false;
  if (own(operation.fields, key)?.highImpact === true) return true;
  return Object.entries(operation.fields).some(
    ([pattern, rule]) => rule.highImpact === true && topLevel(pattern) === key,
  );
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
