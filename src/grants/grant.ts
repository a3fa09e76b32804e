import { canonicalize } from '../canonical/canonicalize.js';
import { own } from '../canonical/own.js';
import { parseStoredJson } from '../canonical/stored-json.js';
import type { InputIssue } from '../operation/issues.js';
import type { AnyOperation } from '../operation/define-operation.js';
import type { GrantRecord } from '../store/records.js';
import { type Constraint, type Constraints, constraintSchema, violation } from './constraints.js';
import { z } from 'zod';

/** A grant as callers see it. */
export interface Grant {
  readonly id: string;
  readonly tenant: string;
  readonly subject: string;
  readonly operations: readonly string[];
  readonly resource: string;
  readonly constraints: Constraints;
  readonly cap: {
    readonly field: string | null;
    readonly total: number | null;
    readonly uses: number | null;
  };
  readonly usage: { readonly uses: number; readonly total: number };
  readonly expiresAt: Date;
  readonly createdAt: Date;
  readonly createdBy: string;
  readonly revokedAt: Date | null;
  readonly revokedBy: string | null;
  readonly note: string | null;
  /** `live`, `revoked`, `expired` or `exhausted`, at the time it was read. */
  readonly state: 'live' | 'revoked' | 'expired' | 'exhausted';
}

/** The public view of a stored grant at time `now`. */
export function toGrant(record: GrantRecord, now: number): Grant {
  const exhausted =
    (record.capUses !== null && record.usedCount >= record.capUses) ||
    (record.capTotal !== null && record.usedTotal >= record.capTotal);
  return {
    id: record.id,
    tenant: record.tenant,
    subject: record.subject,
    operations: parseStoredJson(record.operationsJson) as string[],
    resource: record.resource,
    constraints: parseStoredJson(record.constraintsJson) as Constraints,
    cap: { field: record.capField, total: record.capTotal, uses: record.capUses },
    usage: { uses: record.usedCount, total: record.usedTotal },
    expiresAt: new Date(record.expiresAt),
    createdAt: new Date(record.createdAt),
    createdBy: record.createdBy,
    revokedAt: record.revokedAt === null ? null : new Date(record.revokedAt),
    revokedBy: record.revokedBy,
    note: record.note,
    state:
      record.revokedAt !== null
        ? 'revoked'
        : now >= record.expiresAt
          ? 'expired'
          : exhausted
            ? 'exhausted'
            : 'live',
  };
}

/** True when `resource` is inside the grant's boundary: equal, or under a `prefix*`. */
export function withinResource(boundary: string, resource: string): boolean {
  return boundary.endsWith('*') ? resource.startsWith(boundary.slice(0, -1)) : boundary === resource;
}

function objectShape(operation: AnyOperation): Record<string, z.ZodType> | undefined {
  return operation.scope instanceof z.ZodObject
    ? (operation.scope.shape as Record<string, z.ZodType>)
    : undefined;
}

/**
 * Checks a grant's constraints and cap against the scopes of the operations it covers: every
 * constrained field must be a scope field of each operation, each `equals`/`oneOf` value must be a
 * valid value of that field, ranges and caps only on numbers, `subsetOf` only on arrays.
 */
export function grantIssues(
  operations: readonly AnyOperation[],
  constraints: Readonly<Record<string, unknown>>,
  capField: string | null,
): InputIssue[] {
  const issues: InputIssue[] = [];
  for (const [field, raw] of Object.entries(constraints)) {
    const path = `$.constraints.${field}`;
    const parsed = constraintSchema.safeParse(raw);
    if (!parsed.success) {
      issues.push({
        path,
        message: 'expected { equals } | { oneOf: [...] } | { min?, max? } | { subsetOf: [...] }',
      });
      continue;
    }
    const constraint = parsed.data as Constraint;
    for (const operation of operations) {
      const fieldSchema = own(objectShape(operation), field);
      if (!fieldSchema) {
        issues.push({ path, message: `not a scope field of ${operation.kind}` });
        continue;
      }
      const values =
        'equals' in constraint ? [constraint.equals] : 'oneOf' in constraint ? constraint.oneOf : [];
      for (const value of values) {
        if (!fieldSchema.safeParse(value).success)
          issues.push({
            path,
            message: `${canonicalize(value ?? null)} is not a valid ${field} of ${operation.kind}`,
          });
      }
      if (
        'subsetOf' in constraint &&
        !fieldSchema.safeParse([]).success &&
        !fieldSchema.safeParse(constraint.subsetOf).success
      ) {
        issues.push({ path, message: `${field} of ${operation.kind} is not a set` });
      }
      if (
        ('min' in constraint || 'max' in constraint) &&
        !fieldSchema.safeParse(0).success &&
        !fieldSchema.safeParse(1).success
      ) {
        issues.push({ path, message: `${field} of ${operation.kind} is not a number` });
      }
    }
  }
  if (capField !== null) {
    for (const operation of operations) {
      const fieldSchema = own(objectShape(operation), capField);
      if (!fieldSchema || (!fieldSchema.safeParse(1).success && !fieldSchema.safeParse(0).success)) {
        issues.push({
          path: '$.cap.field',
          message: `${capField} is not a numeric scope field of ${operation.kind}`,
        });
      }
    }
  }
  return issues;
}

/** Why a proposal is not covered by one grant, or that it fits (before the cap is spent). */
export type GrantFit =
  | { readonly kind: 'fits'; readonly amount: number }
  | {
      readonly kind: 'refused';
      readonly reason: 'outside_grant' | 'grant_revoked' | 'expired' | 'grant_exhausted';
      readonly detail: string;
    };

/** Evaluates one grant against a proposal's frozen scope at time `now`. */
export function evaluateGrant(
  record: GrantRecord,
  scope: Readonly<Record<string, unknown>>,
  resource: string,
  now: number,
): GrantFit {
  if (record.revokedAt !== null)
    return { kind: 'refused', reason: 'grant_revoked', detail: `grant ${record.id} was revoked` };
  if (now >= record.expiresAt)
    return {
      kind: 'refused',
      reason: 'expired',
      detail: `grant ${record.id} expired at ${new Date(record.expiresAt).toISOString()}`,
    };
  if (!withinResource(record.resource, resource)) {
    return {
      kind: 'refused',
      reason: 'outside_grant',
      detail: `resource ${resource} is outside ${record.resource}`,
    };
  }
  const constraints = parseStoredJson(record.constraintsJson) as Constraints;
  for (const [field, constraint] of Object.entries(constraints)) {
    const problem = violation(field, constraint, own(scope, field));
    if (problem) return { kind: 'refused', reason: 'outside_grant', detail: problem };
  }
  const amount = record.capField === null ? 0 : Number(own(scope, record.capField) ?? Number.NaN);
  if (record.capField !== null && !Number.isSafeInteger(amount)) {
    return { kind: 'refused', reason: 'outside_grant', detail: `$.${record.capField} is not a whole number` };
  }
  if (record.capUses !== null && record.usedCount + 1 > record.capUses) {
    return {
      kind: 'refused',
      reason: 'grant_exhausted',
      detail: `grant ${record.id} was used ${record.usedCount} of ${record.capUses} times`,
    };
  }
  if (record.capTotal !== null && record.usedTotal + amount > record.capTotal) {
    return {
      kind: 'refused',
      reason: 'grant_exhausted',
      detail: `$.${record.capField}: ${record.usedTotal} + ${amount} > cap ${record.capTotal}`,
    };
  }
  return { kind: 'fits', amount };
}
