import { z } from 'zod';
import { canonicalize } from '../canonical/canonicalize.js';

/**
 * A typed constraint on one scope field: exactly a value, one of some values, a numeric range, or
 * (for set fields) a subset of allowed members.
 */
export type Constraint =
  | { readonly equals: unknown }
  | { readonly oneOf: readonly unknown[] }
  | { readonly min?: number; readonly max?: number }
  | { readonly subsetOf: readonly unknown[] };

/** Constraints by top-level scope field name. */
export type Constraints = Readonly<Record<string, Constraint>>;

/** The strict shape of one constraint, for input from the API, the console and stored rows. */
export const constraintSchema = z.union([
  z.strictObject({ equals: z.unknown() }),
  z.strictObject({ oneOf: z.array(z.unknown()).min(1) }),
  z.strictObject({ subsetOf: z.array(z.unknown()) }),
  z
    .strictObject({ min: z.number().optional(), max: z.number().optional() })
    .refine((c) => c.min !== undefined || c.max !== undefined, 'a range needs min or max'),
]);

/** Why a value falls outside a constraint, as one line naming the field. */
export function violation(field: string, constraint: Constraint, value: unknown): string | undefined {
  const path = `$.${field}`;
  const shown = canonicalize(value ?? null);
  if ('equals' in constraint) {
    return canonicalize(constraint.equals ?? null) === shown
      ? undefined
      : `${path}: ${shown} is not ${canonicalize(constraint.equals ?? null)}`;
  }
  if ('oneOf' in constraint) {
    return constraint.oneOf.some((v) => canonicalize(v ?? null) === shown)
      ? undefined
      : `${path}: ${shown} is not one of ${canonicalize(constraint.oneOf)}`;
  }
  if ('subsetOf' in constraint) {
    if (!Array.isArray(value)) return `${path}: ${shown} is not a set`;
    const allowed = new Set(constraint.subsetOf.map((v) => canonicalize(v ?? null)));
    const outside = value.filter((v) => !allowed.has(canonicalize(v ?? null)));
    return outside.length === 0 ? undefined : `${path}: ${canonicalize(outside)} not in the allowed set`;
  }
  if (typeof value !== 'number') return `${path}: ${shown} is not a number`;
  if (constraint.min !== undefined && value < constraint.min)
    return `${path}: ${value} < min ${constraint.min}`;
  if (constraint.max !== undefined && value > constraint.max)
    return `${path}: ${value} > max ${constraint.max}`;
  return undefined;
}
