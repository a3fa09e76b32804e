import { redact } from '../../../ledger/incident-export.js';
import { canonicalize } from '../../../canonical/canonicalize.js';
import { childPath } from '../../../canonical/json-path.js';
import { own } from '../../../canonical/own.js';
import { diffScopes, formatScopeChange } from '../../../canonical/scope-diff.js';
import { declaredOrder, type FieldDeclarations, isHighImpact } from './field-order.js';

/** One top-level scope field an edit changed, with both values in full (redacted as the operation says). */
export interface FieldChange {
  readonly key: string;
  readonly change: 'changed' | 'added' | 'removed';
  readonly highImpact: boolean;
  /** The value before the edit, redacted; absent when the edit added the field. */
  readonly from?: unknown;
  /** The value after the edit, redacted; absent when the edit removed the field. */
  readonly to?: unknown;
  /** The scope diff's lines inside this field (a set's members, a list's items), redacted. */
  readonly lines: readonly string[];
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether a diff path lies inside the field at `fieldPath` (`$.a`, not `$.ab`). */
function inside(path: string, fieldPath: string): boolean {
  if (!path.startsWith(fieldPath)) return false;
  const next = path.charAt(fieldPath.length);
  return next === '' || next === '.' || next === '[';
}

/**
 * What an edit changed, field by field: every top-level scope field whose value differs between
 * the superseded proposal's scope (`before`) and the edit's (`after`), both values in full with
 * the operation's redaction applied (a redacted field shows only its redacted forms), in the
 * order the operation declares its fields. Empty when the scopes are canonically equal.
 */
export function editChanges(
  before: unknown,
  after: unknown,
  operation: FieldDeclarations | undefined,
): FieldChange[] {
  const rules = operation?.fields ?? {};
  const lines = diffScopes(before, after, rules).map((c) => ({ path: c.path, text: formatScopeChange(c) }));
  if (!isRecord(before) || !isRecord(after)) {
    return lines.length === 0
      ? []
      : [
          {
            key: '',
            change: 'changed',
            highImpact: false,
            from: redact(before, rules, '$'),
            to: redact(after, rules, '$'),
            lines: lines.map((l) => l.text),
          },
        ];
  }
  const order = operation ? declaredOrder(operation) : [];
  const rank = (key: string) => (order.includes(key) ? order.indexOf(key) : order.length);
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .filter((key) => {
      const a = Object.hasOwn(before, key);
      const b = Object.hasOwn(after, key);
      return a !== b || canonicalize(before[key]) !== canonicalize(after[key]);
    })
    .sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  // A value in minor units is shown as money in its side's currency (the value stays exact).
  const shown = (side: Readonly<Record<string, unknown>>, key: string, path: string): unknown => {
    const value = redact(side[key], rules, path);
    const money = own(rules, key)?.money;
    if (money === undefined || !Number.isSafeInteger(value)) return value;
    const currency = 'currency' in money ? money.currency : side[money.currencyField];
    return typeof currency === 'string' && /^[A-Z]{3}$/.test(currency) ? { minor: value, currency } : value;
  };
  return keys.map((key): FieldChange => {
    const path = childPath('$', key);
    const inBefore = Object.hasOwn(before, key);
    const inAfter = Object.hasOwn(after, key);
    return {
      key,
      change: !inBefore ? 'added' : !inAfter ? 'removed' : 'changed',
      highImpact: isHighImpact(operation, key),
      ...(inBefore ? { from: shown(before, key, path) } : {}),
      ...(inAfter ? { to: shown(after, key, path) } : {}),
      lines: lines.filter((l) => inside(l.path, path)).map((l) => l.text),
    };
  });
}
