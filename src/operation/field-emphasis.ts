import { z } from 'zod';
import { own } from '../canonical/own.js';
import type { AnyOperation } from './define-operation.js';

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
 * `fields`, then the arguments' and the scope's shapes (each key once, first place wins). The
 * review page and the notification emails list a preview's fields in it.
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
