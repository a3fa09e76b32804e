import assert from 'node:assert/strict';
import type { z } from 'zod';
import { canonicalize } from '../canonical/canonicalize.js';
import { childPath, fieldPattern, indexPath } from '../canonical/json-path.js';
import { own } from '../canonical/own.js';
import { type FieldRules, formatScopeChange } from '../canonical/scope-diff.js';
import {
  type ApprovedScope,
  authorizeExecution,
  type ExecutionDecision,
} from '../operation/authorize-execution.js';
import type { AnyOperation, Operation, ProposalFacts } from '../operation/define-operation.js';
import { formatIssues } from '../operation/issues.js';
import { buildScope } from '../operation/scope.js';

/**
 * One generated test of the testing kit. Framework-neutral: run each with your framework's
 * `it`/`test` (`for (const c of suite) it(c.name, c.run)`). `run` throws an `AssertionError`
 * (node:assert) with a message that names the field when the operation misbehaves.
 */
export interface SuiteCase {
  readonly name: string;
  run(): void | Promise<void>;
}

import { TestingKitError } from './testing-kit-error.js';

export { TestingKitError };

/**
 * Any defined operation the kit accepts, scope-only ones included (no `request`/`arguments`
 * schema: their arguments type is `never`, which `AnyOperation` does not admit).
 */
// biome-ignore lint/suspicious/noExplicitAny: the kit is generic over every operation's types, like the engine's AnyOperation.
export type KitOperation = AnyOperation | Operation<any, never, never, any, any>;

/** The kit handles every operation through the engine's erased type. */
export function erased(operation: KitOperation): AnyOperation {
  return operation as AnyOperation;
}

/** The arguments type of an operation, or a plain record for scope-only operations (no `arguments` schema). */
export type ArgumentsOf<Op> =
  Op extends Operation<infer _S, infer _R, infer A, infer _P, infer _Res>
    ? [A] extends [never]
      ? Readonly<Record<string, unknown>>
      : A
    : never;

/** The facts a kit builds scopes with, unless a test overrides them. `operation` is always the operation's kind. */
export function kitFacts(operation: KitOperation, facts: Partial<ProposalFacts> = {}): ProposalFacts {
  return {
    tenant: facts.tenant ?? 'tenant-a',
    section: facts.section ?? null,
    resource: facts.resource ?? 'resource-1',
    requestedBy: facts.requestedBy ?? 'agent:testing-kit',
    runId: facts.runId ?? 'run-testing-kit',
    operation: operation.kind,
  };
}

/**
 * Builds the approved scope of `approvedArguments` exactly as the engine freezes it: the arguments
 * parsed through the operation's `arguments` schema (when it has one), `toScope`, then `buildScope`.
 *
 * @throws {TestingKitError} when the arguments or the scope they produce are invalid.
 */
export function approvedScopeOf(
  operation: AnyOperation,
  approvedArguments: unknown,
  facts: ProposalFacts,
): ApprovedScope {
  let args = approvedArguments;
  if (operation.arguments) {
    const parsed = operation.arguments.safeParse(approvedArguments);
    if (!parsed.success) {
      throw new TestingKitError(
        `${operation.kind}: the approved arguments do not parse: ${parsed.error.message}`,
      );
    }
    args = parsed.data;
  }
  const built = buildScope(operation, operation.toScope(args, facts));
  if (built.kind === 'invalid') {
    throw new TestingKitError(
      `${operation.kind}: the approved arguments build an invalid scope: ${formatIssues(built.issues)}`,
    );
  }
  return { operation, scopeVersion: operation.scopeVersion, scope: built.scope, digest: built.digest.sha256 };
}

/** Which dimension of the scope one mutation case changes. */
export type MutationKind =
  | 'unchanged'
  | 'key_order'
  | 'changed'
  | 'retyped'
  | 'removed'
  | 'added_field'
  | 'member_added'
  | 'member_removed'
  | 'set_reordered'
  | 'reordered';

/** What a case expects the command guard to decide. */
export type MutationExpectation =
  | { readonly kind: 'approved' }
  | {
      readonly kind: 'refused';
      readonly reason: 'scope_mismatch' | 'invalid_requested_scope';
      readonly path: string;
    };

/** One generated mutation case: the changed requested scope and the decision it must get. */
export interface MutationCase extends SuiteCase {
  readonly mutation: MutationKind;
  /** JSON path of the changed field (`$` for the whole-scope cases). */
  readonly path: string;
  readonly expected: MutationExpectation;
  /** The raw requested scope submitted to `authorizeExecution`. */
  readonly requested: unknown;
}

/** Options of {@link mutationSuite}. */
export interface MutationSuiteOptions {
  /** Server-owned facts the scope is built with (tenant, resource…). */
  readonly facts?: Partial<ProposalFacts>;
  /** The unreviewed key added to every object of the scope; default `unreviewed_option`. */
  readonly extraField?: string;
}

type Segment = string | number;
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * Generates one case per dimension of an operation's scope and checks, through the same
 * `authorizeExecution` the engine's command guard uses, that each change is refused with the
 * expected reason and field path, and that the unchanged scope (in any key order) is approved.
 *
 * Walking the approved scope (and its zod schema where it can be introspected), it generates:
 * each field changed, type-aware (number bumped, string swapped, boolean flipped, enum switched
 * to every other member, literal changed), numbers and booleans retyped (`"24049"` for `24049`),
 * each field removed, an unreviewed field added to every object (top level and nested), every
 * nested path changed, a member added to and removed from every array (set or sequence), a
 * sequence reordered; plus a set reordered (approved: order is not scope), the unchanged scope
 * and the scope with its keys in reverse order (both approved).
 *
 * The expected reason is decided by parsing the mutated scope through the operation's scope
 * schema: `invalid_requested_scope` naming the path when it no longer parses, else
 * `scope_mismatch` with a diff at that path (at the set's path for set members).
 *
 * @throws {TestingKitError} when `approvedArguments` do not build a valid scope.
 *
 * @example
 * import { describe, it } from 'vitest';
 * import { mutationSuite } from 'countersign/testing';
 *
 * describe('invoice.pay scope', () => {
 *   const args = { invoice_id: 'inv-104', destination_account_id: 'acct-7', amount_minor: 24049, currency: 'USD' };
 *   for (const c of mutationSuite(payInvoice, args)) it(c.name, c.run);
 * });
 */
export function mutationSuite<Op extends KitOperation>(
  kitOperation: Op,
  approvedArguments: ArgumentsOf<Op>,
  options: MutationSuiteOptions = {},
): MutationCase[] {
  const operation = erased(kitOperation);
  const facts = kitFacts(operation, options.facts);
  const approval = approvedScopeOf(operation, approvedArguments, facts);
  const root = approval.scope as Json;
  const generator = new Generator(operation, approval, options.extraField ?? 'unreviewed_option');
  generator.add('unchanged', [], structuredClone(root), 'the unchanged scope', { kind: 'approved' });
  generator.add('key_order', [], reverseKeys(root), 'the same scope, keys in reverse order', {
    kind: 'approved',
  });
  generator.walk(root, operation.scope, []);
  return generator.cases;
}

class Generator {
  readonly cases: MutationCase[] = [];
  readonly #names = new Set<string>();
  readonly #operation: AnyOperation;
  readonly #approval: ApprovedScope;
  readonly #root: Json;
  readonly #rules: FieldRules;
  readonly #extra: string;

  constructor(operation: AnyOperation, approval: ApprovedScope, extraField: string) {
    this.#operation = operation;
    this.#approval = approval;
    this.#root = approval.scope as Json;
    this.#rules = operation.fields;
    this.#extra = extraField;
  }

  walk(value: Json, schema: z.ZodType | undefined, segments: readonly Segment[]): void {
    const base = resolveSchema(schema, value);
    if (Array.isArray(value)) {
      this.#array(value, base, segments);
      return;
    }
    if (value !== null && typeof value === 'object') {
      this.#object(value, base, segments);
      return;
    }
    if (segments.length > 0) this.#leaf(value, base, segments);
  }

  #object(value: { [key: string]: Json }, schema: z.ZodType | undefined, segments: readonly Segment[]): void {
    const extraPath = [...segments, this.#extra];
    this.#mutate('added_field', extraPath, `unreviewed field ${this.#extra}: true added`, (root) =>
      setAt(root, extraPath, true),
    );
    for (const key of Object.keys(value).sort()) {
      const child = [...segments, key];
      this.#mutate('removed', child, 'removed', (root) => removeAt(root, child));
      this.walk(value[key]!, childSchema(schema, key), child);
    }
  }

  #array(value: Json[], schema: z.ZodType | undefined, segments: readonly Segment[]): void {
    const path = pathOf(segments);
    const isSet = own(this.#rules, fieldPattern(path))?.set === true;
    const what = isSet ? 'set' : 'sequence';
    const element = childSchema(schema, 0);
    const candidates = newMembers(value, element);
    this.#pick(
      'member_added',
      segments,
      candidates.map((member) => ({
        label: `${what} member ${this.#show([...segments, value.length], member)} added`,
        build: (root: Json) => setAt(root, segments, [...value, member]),
      })),
    );
    if (value.length > 0) {
      this.#mutate(
        'member_removed',
        segments,
        `${what} member ${this.#show([...segments, value.length - 1], value[value.length - 1]!)} removed`,
        (root) => setAt(root, segments, value.slice(0, -1)),
      );
    }
    const distinct = new Set(value.map((m) => canonicalize(m))).size;
    if (distinct >= 2) {
      const reordered = reorder(value);
      if (isSet) {
        this.add(
          'set_reordered',
          segments,
          setAt(this.#root, segments, reordered),
          `set ${path} in another order (order is not scope)`,
          {
            kind: 'approved',
          },
        );
      } else {
        this.#mutate('reordered', segments, 'sequence reordered', (root) => setAt(root, segments, reordered));
      }
    }
    value.forEach((item, i) => {
      this.walk(item, element, [...segments, i]);
    });
  }

  #leaf(value: Json, schema: z.ZodType | undefined, segments: readonly Segment[]): void {
    const def = defOf(schema);
    if (def?.type === 'enum' && typeof value !== 'object') {
      const others = Object.values(
        (def as unknown as { entries: Record<string, string | number> }).entries,
      ).filter((m) => m !== value);
      for (const member of others) {
        this.#mutate(
          'changed',
          segments,
          `enum ${this.#show(segments, value)} switched to ${this.#show(segments, member)}`,
          (root) => setAt(root, segments, member),
        );
      }
      if (others.length > 0) return;
    }
    const candidates = changedValues(value);
    const change = def?.type === 'literal' ? 'literal changed' : describeChange(value);
    this.#pick(
      'changed',
      segments,
      candidates.map((next) => ({
        label: `${change} ${this.#show(segments, value)} → ${this.#show(segments, next)}`,
        build: (root: Json) => setAt(root, segments, next),
      })),
    );
    const retyped =
      typeof value === 'number' ? String(value) : typeof value === 'boolean' ? (value ? 1 : 0) : undefined;
    if (retyped !== undefined) {
      this.#mutate(
        'retyped',
        segments,
        `retyped ${this.#show(segments, value)} → ${JSON.stringify(retyped)} (${typeof retyped})`,
        (root) => setAt(root, segments, retyped),
      );
    }
  }

  /** Adds the first candidate that keeps the scope valid (a sharper test); else the first one. */
  #pick(
    kind: MutationKind,
    segments: readonly Segment[],
    candidates: { label: string; build: (root: Json) => Json }[],
  ): void {
    if (candidates.length === 0) return;
    const built = candidates.map((c) => ({ ...c, requested: c.build(this.#root) }));
    const valid = built.find((c) => this.#operation.scope.safeParse(c.requested).success);
    const chosen = valid ?? built[0]!;
    this.add(kind, segments, chosen.requested, chosen.label, this.#expect(chosen.requested, segments));
  }

  #mutate(
    kind: MutationKind,
    segments: readonly Segment[],
    label: string,
    build: (root: Json) => Json,
  ): void {
    const requested = build(this.#root);
    this.add(kind, segments, requested, label, this.#expect(requested, segments));
  }

  #expect(requested: Json, segments: readonly Segment[]): MutationExpectation {
    const path = pathOf(segments);
    if (!this.#operation.scope.safeParse(requested).success)
      return { kind: 'refused', reason: 'invalid_requested_scope', path };
    return { kind: 'refused', reason: 'scope_mismatch', path: this.#setAncestor(segments) ?? path };
  }

  // A set is diffed by member: a change anywhere inside a member shows at the set's own path.
  #setAncestor(segments: readonly Segment[]): string | undefined {
    for (let n = 1; n <= segments.length; n++) {
      const path = pathOf(segments.slice(0, n));
      if (own(this.#rules, fieldPattern(path))?.set) return path;
    }
    return undefined;
  }

  #show(segments: readonly Segment[], value: Json): string {
    const redact = own(this.#rules, fieldPattern(pathOf(segments)))?.redact;
    const text = redact ? JSON.stringify(redact(value)) : canonicalize(value);
    return text.length > 48 ? `${text.slice(0, 45)}…` : text;
  }

  add(
    kind: MutationKind,
    segments: readonly Segment[],
    requested: Json,
    label: string,
    expected: MutationExpectation,
  ): void {
    const path = pathOf(segments);
    const verdict = expected.kind === 'approved' ? 'approved' : expected.reason;
    let name = `${kind} ${path}: ${label} → ${verdict}`;
    for (let n = 2; this.#names.has(name); n++) name = `${kind} ${path}: ${label} → ${verdict} (#${n})`;
    this.#names.add(name);
    const operation = this.#operation;
    const approval = this.#approval;
    this.cases.push({
      name,
      mutation: kind,
      path,
      expected,
      requested,
      run: () => {
        const decision = authorizeExecution(approval, structuredClone(requested));
        checkDecision(operation, `${kind} ${path}: ${label}`, decision, expected);
      },
    });
  }
}

function checkDecision(
  operation: AnyOperation,
  label: string,
  decision: ExecutionDecision,
  expected: MutationExpectation,
): void {
  const what = `${operation.kind}: ${label}`;
  if (expected.kind === 'approved') {
    if (decision.kind !== 'allowed')
      assert.fail(`${what}: expected approved, got ${decision.reason}: ${decision.message}`);
    return;
  }
  if (decision.kind === 'allowed') {
    // Allowed means the requested scope parsed and normalized back to the approved one.
    assert.fail(
      `${what}: the change was NOT refused (expected ${expected.reason} at ${expected.path}). The scope schema turns it back into the approved value (a stripped key, a coercion, a default or a transform), so it would ride on the old approval. Make the scope exact: z.strictObject, no defaults, no coercion, no transforms.`,
    );
  }
  if (decision.reason !== expected.reason) {
    assert.fail(
      `${what}: refused as ${decision.reason}, expected ${expected.reason} at ${expected.path} (${decision.message})`,
    );
  }
  if (decision.reason === 'scope_mismatch') {
    const paths = decision.diff.map((d) => d.path);
    const inside = paths.filter((p) => within(p, expected.path));
    if (inside.length === 0 || inside.length !== paths.length) {
      assert.fail(
        `${what}: scope_mismatch named ${paths.join(', ') || 'no field'}, expected ${expected.path} only (${decision.diff.map(formatScopeChange).join('; ')})`,
      );
    }
    return;
  }
  const named = decision.issues.some((i) => related(i.path, expected.path));
  if (!named) {
    assert.fail(
      `${what}: invalid_requested_scope did not name ${expected.path}: ${formatIssues(decision.issues)}`,
    );
  }
}

/** True when `path` is `base` or inside it. */
function within(path: string, base: string): boolean {
  return path === base || path.startsWith(`${base}.`) || path.startsWith(`${base}[`);
}

// A union reports at its own path, a discriminated union at its discriminator: an issue names the
// field when it is the field, inside it, or a container of it other than the whole scope.
function related(issuePath: string, expected: string): boolean {
  return (
    within(issuePath, expected) ||
    (issuePath !== '$' && within(expected, issuePath)) ||
    (expected === '$' && issuePath === '$')
  );
}

function pathOf(segments: readonly Segment[]): string {
  let path = '$';
  for (const s of segments) path = typeof s === 'number' ? indexPath(path, s) : childPath(path, s);
  return path;
}

function setAt(root: Json, segments: readonly Segment[], value: Json): Json {
  if (segments.length === 0) return structuredClone(value);
  const copy = structuredClone(root);
  const parent = nodeAt(copy, segments.slice(0, -1));
  const last = segments[segments.length - 1]!;
  if (Array.isArray(parent) && typeof last === 'number') parent[last] = structuredClone(value);
  else if (parent !== null && typeof parent === 'object' && !Array.isArray(parent)) {
    Object.defineProperty(parent, String(last), {
      value: structuredClone(value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

function removeAt(root: Json, segments: readonly Segment[]): Json {
  const copy = structuredClone(root);
  const parent = nodeAt(copy, segments.slice(0, -1));
  const last = segments[segments.length - 1]!;
  if (parent !== null && typeof parent === 'object' && !Array.isArray(parent)) delete parent[String(last)];
  return copy;
}

function nodeAt(root: Json, segments: readonly Segment[]): Json {
  let node = root;
  for (const s of segments) {
    if (Array.isArray(node) && typeof s === 'number') node = node[s]!;
    else if (node !== null && typeof node === 'object' && !Array.isArray(node)) node = node[String(s)]!;
  }
  return node;
}

function reverseKeys(value: Json): Json {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (value !== null && typeof value === 'object') {
    const out: { [key: string]: Json } = {};
    for (const key of Object.keys(value).reverse()) {
      Object.defineProperty(out, key, {
        value: reverseKeys(value[key]!),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}

function reorder(items: readonly Json[]): Json[] {
  const reversed = [...items].reverse();
  if (canonicalize(reversed) !== canonicalize(items)) return reversed;
  return [...items.slice(1), items[0]!];
}

/** Rotates every letter and digit by one (`USD` → `VTE`, `acct-7` → `bddu-8`): same shape, other value. */
export function rotateText(text: string): string {
  return text
    .replace(/[a-z]/g, (c) => (c === 'z' ? 'a' : String.fromCharCode(c.charCodeAt(0) + 1)))
    .replace(/[A-Z]/g, (c) => (c === 'Z' ? 'A' : String.fromCharCode(c.charCodeAt(0) + 1)))
    .replace(/[0-9]/g, (c) => String((Number(c) + 1) % 10));
}

function describeChange(value: Json): string {
  if (typeof value === 'number') return 'number bumped';
  if (typeof value === 'string') return 'string swapped';
  if (typeof value === 'boolean') return 'boolean flipped';
  return 'value changed';
}

function changedValues(value: Json): Json[] {
  if (typeof value === 'boolean') return [!value];
  if (typeof value === 'number') {
    const step = Number.isInteger(value) ? 1 : Math.max(Math.abs(value) / 1_000, Number.EPSILON * 1_000);
    return [value + step, value - step, value * 10 || 1].filter((n) => n !== value && Number.isFinite(n));
  }
  if (typeof value === 'string') {
    return [
      ...new Set([rotateText(value), `${value}-x`, `x${value}`, value.length > 1 ? value.slice(0, -1) : 'x']),
    ].filter((s) => s !== value);
  }
  if (value === null) return ['changed', 0, false];
  return [];
}

// Candidate new members: one derived from each existing member, then one sampled from the schema.
function newMembers(items: readonly Json[], element: z.ZodType | undefined): Json[] {
  const taken = new Set(items.map((m) => canonicalize(m)));
  const out: Json[] = [];
  for (const item of items) {
    let next = deriveMember(item);
    for (let i = 0; i < 30 && next !== undefined && taken.has(canonicalize(next)); i++)
      next = deriveMember(next);
    if (next !== undefined && !taken.has(canonicalize(next))) {
      out.push(next);
      taken.add(canonicalize(next));
    }
  }
  const sampled = sampleOf(element);
  if (sampled !== undefined && !taken.has(canonicalize(sampled))) out.push(sampled);
  return out;
}

function deriveMember(value: Json): Json | undefined {
  if (typeof value === 'string') return rotateText(value) === value ? `${value}-x` : rotateText(value);
  if (typeof value === 'number') return value + 1;
  if (typeof value === 'boolean') return !value;
  if (Array.isArray(value))
    return value.length > 0 ? [deriveMember(value[0]!) ?? null, ...value.slice(1)] : undefined;
  if (value !== null && typeof value === 'object') {
    // Change the first string (else number) field, so the new member keeps every other field.
    const keys = Object.keys(value).sort();
    const key =
      keys.find((k) => typeof value[k] === 'string') ?? keys.find((k) => typeof value[k] === 'number');
    if (key === undefined) return undefined;
    const copy = structuredClone(value);
    copy[key] = deriveMember(value[key]!) ?? null;
    return copy;
  }
  return undefined;
}

interface SchemaDef {
  readonly type: string;
}

function defOf(schema: z.ZodType | undefined): SchemaDef | undefined {
  const def = (schema as { def?: unknown } | undefined)?.def;
  return typeof def === 'object' && def !== null && typeof (def as { type?: unknown }).type === 'string'
    ? (def as SchemaDef)
    : undefined;
}

function field<T>(def: SchemaDef, name: string): T | undefined {
  return (def as unknown as Record<string, T | undefined>)[name];
}

/** Unwraps optional/nullable/default/pipe/lazy wrappers and picks the union option the value parses as. */
function resolveSchema(schema: z.ZodType | undefined, value: unknown): z.ZodType | undefined {
  let current = schema;
  for (let depth = 0; depth < 32; depth++) {
    const def = defOf(current);
    if (!def) return current;
    switch (def.type) {
      case 'optional':
      case 'nullable':
      case 'default':
      case 'prefault':
      case 'readonly':
      case 'catch':
      case 'nonoptional':
        current = field<z.ZodType>(def, 'innerType');
        break;
      case 'pipe':
        current = field<z.ZodType>(def, 'in');
        break;
      case 'lazy':
        current = field<() => z.ZodType>(def, 'getter')?.();
        break;
      case 'union': {
        const options = field<z.ZodType[]>(def, 'options') ?? [];
        current = options.find((o) => o.safeParse(value).success) ?? options[0];
        break;
      }
      default:
        return current;
    }
  }
  return current;
}

function childSchema(schema: z.ZodType | undefined, key: Segment): z.ZodType | undefined {
  const def = defOf(schema);
  if (!def) return undefined;
  switch (def.type) {
    case 'object':
      return typeof key === 'string' ? own(field<Record<string, z.ZodType>>(def, 'shape'), key) : undefined;
    case 'array':
      return field<z.ZodType>(def, 'element');
    case 'tuple':
      return typeof key === 'number' ? field<z.ZodType[]>(def, 'items')?.[key] : undefined;
    case 'record':
      return field<z.ZodType>(def, 'valueType');
    default:
      return undefined;
  }
}

/** A plain value of a schema's shape, for adding a member to an empty array. */
function sampleOf(schema: z.ZodType | undefined, depth = 0): Json | undefined {
  const base = resolveSchema(schema, undefined);
  const def = defOf(base);
  if (!def || depth > 8) return undefined;
  switch (def.type) {
    case 'string':
      return 'added-member';
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'enum':
      return Object.values(field<Record<string, string>>(def, 'entries') ?? {})[0];
    case 'literal':
      return (field<Json[]>(def, 'values') ?? [])[0];
    case 'object': {
      const out: { [key: string]: Json } = {};
      for (const [key, child] of Object.entries(field<Record<string, z.ZodType>>(def, 'shape') ?? {})) {
        const v = sampleOf(child, depth + 1);
        if (v !== undefined)
          Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    case 'array':
      return [];
    default:
      return undefined;
  }
}
