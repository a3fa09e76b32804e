import { canonicalize } from '../canonical/canonicalize.js';
import { own } from '../canonical/own.js';
import { parseStoredJson } from '../canonical/stored-json.js';
import { type Digest, digestOf } from '../canonical/digest.js';
import type { FieldRules } from '../canonical/scope-diff.js';
import { childPath, fieldPattern, indexPath } from '../canonical/json-path.js';
import type { AnyOperation } from './define-operation.js';
import { type InputIssue, toInputIssues } from './issues.js';

/** A scope that parsed through its operation's schema, normalized, canonicalized and digested. */
export interface BuiltScope<Scope = unknown> {
  readonly kind: 'ok';
  readonly scope: Scope;
  readonly canonical: string;
  readonly digest: Digest;
}

/** The raw value is not a valid scope of the operation; every issue names its field. */
export interface InvalidScope {
  readonly kind: 'invalid';
  readonly issues: readonly InputIssue[];
}

/** A scope's canonical text and digest, without the parsed value ({@link canonicalScope}). */
export interface CanonicalScope {
  readonly kind: 'ok';
  readonly canonical: string;
  readonly digest: Digest;
}

/**
 * Parses a raw value through the operation's strict scope schema, then normalizes it: fields
 * declared `set` are deduplicated and sorted (membership is scope, order is not); sequences keep
 * their order. Unknown, missing and ill-typed fields are issues, never stripped or merged.
 */
export function buildScope(operation: AnyOperation, raw: unknown): BuiltScope | InvalidScope {
  const built = canonicalScope(operation, raw);
  if (built.kind === 'invalid') return built;
  return {
    kind: 'ok',
    scope: parseStoredJson(built.canonical),
    canonical: built.canonical,
    digest: built.digest,
  };
}

/**
 * {@link buildScope} without the frozen value: the canonical text and its digest, which is all the
 * engine stores and compares when it freezes or claims a proposal.
 *
 * @internal
 */
export function canonicalScope(operation: AnyOperation, raw: unknown): CanonicalScope | InvalidScope {
  const parsed = operation.scope.safeParse(raw);
  if (!parsed.success) return { kind: 'invalid', issues: toInputIssues(parsed.error) };
  let canonical: string;
  try {
    canonical = canonicalize(
      hasSetField(operation.fields) ? normalizeSets(parsed.data, operation.fields) : parsed.data,
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { kind: 'invalid', issues: [{ path: '$', message }] };
  }
  return { kind: 'ok', canonical, digest: digestOf(canonical) };
}

/** Whether any field of `rules` is a set; without one, normalizing would only copy the value. */
function hasSetField(rules: FieldRules): boolean {
  for (const key in rules) if (own(rules, key)?.set === true) return true;
  return false;
}

/** Returns a copy of `value` whose `set` fields are deduplicated and sorted by canonical JSON. */
export function normalizeSets(value: unknown, rules: FieldRules, path = '$'): unknown {
  const rule = own(rules, fieldPattern(path));
  if (Array.isArray(value)) {
    const items = value.map((item, i) => normalizeSets(item, rules, indexPath(path, i)));
    if (!rule?.set) return items;
    const byKey = new Map<string, unknown>();
    for (const item of items) byKey.set(canonicalize(item), item);
    return [...byKey.keys()].sort().map((key) => byKey.get(key));
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      Object.defineProperty(out, key, {
        value: normalizeSets(child, rules, childPath(path, key)),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}
