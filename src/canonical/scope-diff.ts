import { canonicalize } from './canonicalize.js';
import { childPath, fieldPattern, indexPath } from './json-path.js';
import { own } from './own.js';

/** Turns a scope value into the text that may appear in diffs and logs (e.g. the last 4 characters). */
export type Redactor = (value: unknown) => string;

/**
 * How one scope field is compared and shown. Keys of a {@link FieldRules} map are field
 * patterns: `recipients`, `customer.id`, `attachments[].content_version`.
 */
export interface FieldRule {
  /** Membership is scope, order is not: deduplicated and sorted before freezing, diffed by member. */
  readonly set?: boolean;
  /** Shown through this function in diffs and logs instead of the raw value. */
  readonly redact?: Redactor;
  /**
   * A field an approver must not miss (an amount, a destination, recipients, a draft→send mode):
   * the review page emphasises it, in the preview and in an edit's changes. Changes no comparison.
   */
  readonly highImpact?: boolean;
  /**
   * An integer amount in minor units, in the currency held by the scope's top-level field
   * `currencyField` or the fixed ISO 4217 `currency`: the review page shows it as money
   * (`240.49 USD`, with the minor units beside it), so an edit from 24049 to 240490 is never read as
   * a change of a few cents. Changes no comparison.
   *
   * @example
   * fields: { amount_minor: { highImpact: true, money: { currencyField: 'currency' } } }
   */
  readonly money?: { readonly currencyField: string } | { readonly currency: string };
}

/** Per-field rules of an operation's scope, keyed by field pattern. */
export type FieldRules = Readonly<Record<string, FieldRule>>;

/** One difference between an approved and a requested scope. */
export interface ScopeChange {
  /** JSON path of the field, e.g. `$.recipients` or `$.customer.id`. */
  readonly path: string;
  readonly change: 'changed' | 'added' | 'removed' | 'type';
  /** The approved value (redacted), or its JSON type for `type` changes. */
  readonly from?: string;
  /** The requested value (redacted), or its JSON type for `type` changes. */
  readonly to?: string;
}

/** Shows the last four characters only: `acct-supplier-7` → `…er-7`. */
export const last4: Redactor = (value) => `…${String(value).slice(-4)}`;

/** Hides the value entirely, keeping only that it is present. */
export const hidden: Redactor = () => '[redacted]';

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function show(value: unknown, rule: FieldRule | undefined): string {
  return rule?.redact ? JSON.stringify(rule.redact(value)) : canonicalize(value);
}

/**
 * Field-level differences between two scope values, approved first. Objects are compared key by
 * key, sequences by position, fields declared `set` by membership; values are redacted per rule.
 * Returns an empty array when the two are canonically equal (key order never matters).
 *
 * @example
 * diffScopes({ amount_minor: 4000 }, { amount_minor: 40000 })
 * // [{ path: '$.amount_minor', change: 'changed', from: '4000', to: '40000' }]
 */
export function diffScopes(approved: unknown, requested: unknown, rules: FieldRules = {}): ScopeChange[] {
  const changes: ScopeChange[] = [];
  walk(approved, requested, '$', rules, changes);
  return changes;
}

function walk(a: unknown, b: unknown, path: string, rules: FieldRules, out: ScopeChange[]): void {
  const typeA = jsonType(a);
  const typeB = jsonType(b);
  if (typeA !== typeB) {
    out.push({ path, change: 'type', from: typeA, to: typeB });
    return;
  }
  const rule = own(rules, fieldPattern(path));
  if (typeA === 'array') {
    const left = a as unknown[];
    const right = b as unknown[];
    if (rule?.set) {
      diffMembers(left, right, path, rule, out);
      return;
    }
    const shared = Math.min(left.length, right.length);
    for (let i = 0; i < shared; i++) walk(left[i], right[i], indexPath(path, i), rules, out);
    for (let i = shared; i < left.length; i++) {
      const p = indexPath(path, i);
      out.push({ path: p, change: 'removed', from: show(left[i], own(rules, fieldPattern(p))) });
    }
    for (let i = shared; i < right.length; i++) {
      const p = indexPath(path, i);
      out.push({ path: p, change: 'added', to: show(right[i], own(rules, fieldPattern(p))) });
    }
    return;
  }
  if (typeA === 'object') {
    const left = a as Record<string, unknown>;
    const right = b as Record<string, unknown>;
    const keys = [...new Set([...Object.keys(left), ...Object.keys(right)])].sort();
    for (const key of keys) {
      const p = childPath(path, key);
      const inLeft = Object.hasOwn(left, key);
      const inRight = Object.hasOwn(right, key);
      if (!inRight)
        out.push({ path: p, change: 'removed', from: show(left[key], own(rules, fieldPattern(p))) });
      else if (!inLeft)
        out.push({ path: p, change: 'added', to: show(right[key], own(rules, fieldPattern(p))) });
      else walk(left[key], right[key], p, rules, out);
    }
    return;
  }
  if (canonicalize(a) !== canonicalize(b)) {
    out.push({ path, change: 'changed', from: show(a, rule), to: show(b, rule) });
  }
}

function diffMembers(
  left: unknown[],
  right: unknown[],
  path: string,
  rule: FieldRule,
  out: ScopeChange[],
): void {
  const memberRule: FieldRule | undefined = rule.redact ? { redact: rule.redact } : undefined;
  const leftKeys = new Set(left.map((m) => canonicalize(m)));
  const rightKeys = new Set(right.map((m) => canonicalize(m)));
  for (const m of left) {
    if (!rightKeys.has(canonicalize(m))) out.push({ path, change: 'removed', from: show(m, memberRule) });
  }
  for (const m of right) {
    if (!leftKeys.has(canonicalize(m))) out.push({ path, change: 'added', to: show(m, memberRule) });
  }
}

/**
 * One line per change, as the CLI and the audit print it:
 * `$.destination_account_id: "acct-supplier-7" -> "acct-personal-2"`.
 */
export function formatScopeChange(change: ScopeChange): string {
  switch (change.change) {
    case 'changed':
      return `${change.path}: ${change.from} -> ${change.to}`;
    case 'added':
      return `${change.path}: added ${change.to}`;
    case 'removed':
      return `${change.path}: removed ${change.from}`;
    case 'type':
      return `${change.path}: type ${change.from} -> ${change.to}`;
  }
}
