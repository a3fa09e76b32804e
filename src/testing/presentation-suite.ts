import assert from 'node:assert/strict';
import { canonicalize } from '../canonical/canonicalize.js';
import { childPath, fieldPattern, indexPath } from '../canonical/json-path.js';
import { own } from '../canonical/own.js';
import type { AnyOperation, Operation, ProposalFacts } from '../operation/define-operation.js';
import { formatMoney } from '../operation/money.js';
import {
  type ArgumentsOf,
  approvedScopeOf,
  erased,
  type KitOperation,
  kitFacts,
  type SuiteCase,
  TestingKitError,
} from './mutation-suite.js';

/** The preview type of an operation. */
export type PreviewOf<Op> =
  Op extends Operation<infer _S, infer _R, infer _A, infer P, infer _Res> ? P : never;

/** Where the preview under test comes from: your renderer, or a preview you already built. */
export type PreviewSource<Args, Preview> =
  | {
      /** Renders the preview for the arguments: the function your `prepare` builds its preview with. */
      readonly render: (args: Args, facts: ProposalFacts) => Preview | Promise<Preview>;
      readonly preview?: never;
    }
  | {
      /** A preview already built for the boundary arguments (e.g. by calling your `prepare`). */
      readonly preview: Preview;
      readonly render?: never;
    };

/** Options of {@link presentationSuite}. Every exception to "the preview shows it verbatim" is named here. */
export type PresentationSuiteOptions<Args, Preview> = PreviewSource<Args, Preview> & {
  /** Server-owned facts the scope is built with (tenant, resource…). */
  readonly facts?: Partial<ProposalFacts>;
  /**
   * Integer minor-unit money fields: amount field pattern → its currency field (a sibling key) or
   * an ISO code. A field named `…_minor` with a sibling `currency` is money without saying so.
   * Money must appear as its exact decimal (24049 USD → `240.49`), never rounded.
   */
  readonly money?: Readonly<Record<string, string>>;
  /**
   * Scope fields (patterns, covering everything inside them) the preview does not show on
   * purpose, each with the reason, e.g. `{ tenant: 'the console header shows the tenant' }`.
   */
  readonly notInPreview?: Readonly<Record<string, string>>;
  /**
   * Fields shown as another text than their value (a label, a name looked up from an id): the
   * text the preview must contain for a value, e.g. `{ recursive: (v) => (v ? 'and everything inside' : 'this file only') }`.
   */
  readonly shownAs?: Readonly<Record<string, (value: unknown) => string>>;
};

type Segment = string | number;

interface ScopeLeaf {
  readonly segments: readonly Segment[];
  readonly path: string;
  readonly pattern: string;
  readonly key: string | undefined;
  readonly value: unknown;
}

interface PreviewLeaf {
  readonly path: string;
  readonly key: string | undefined;
  readonly value: unknown;
}

/**
 * Presentation contract tests: renders the preview of `boundaryArguments` (choose values where
 * rounding shows: 24049 minor units, several set members) and generates one case per scope field
 * checking that the preview exposes it at full precision: money as its exact decimal (never
 * `240` or `240.5` for 240.49, not even in a title next to the currency), every array and set
 * member (no "1 contact" hiding one), strings verbatim, numbers exactly, booleans as a preview
 * field of the same name. Fields not shown on purpose must be listed in `notInPreview` with a
 * reason; fields shown as a label in `shownAs`.
 *
 * @throws {TestingKitError} when the arguments do not build a valid scope, or an option names a field the scope does not have.
 *
 * @example
 * for (const c of presentationSuite(payInvoice, { invoice_id: 'inv-104', destination_account_id: 'acct-7', amount_minor: 24049, currency: 'USD' }, {
 *   render: (args) => invoicePreview(args),
 *   notInPreview: { tenant: 'the console header shows the tenant', operation: 'the card title names the operation' },
 * })) it(c.name, c.run);
 */
export function presentationSuite<Op extends KitOperation>(
  kitOperation: Op,
  boundaryArguments: ArgumentsOf<Op>,
  options: PresentationSuiteOptions<ArgumentsOf<Op>, PreviewOf<Op>>,
): SuiteCase[] {
  const operation = erased(kitOperation);
  const facts = kitFacts(operation, options.facts);
  const scope = approvedScopeOf(operation, boundaryArguments, facts).scope;
  const args = operation.arguments ? operation.arguments.parse(boundaryArguments) : boundaryArguments;
  const leaves = scopeLeaves(scope, []);
  const notInPreview = options.notInPreview ?? {};
  const shownAs = options.shownAs ?? {};
  const money = options.money ?? {};
  const patterns = new Set(leaves.flatMap((l) => prefixPatterns(l.segments)));
  for (const [option, map] of [
    ['notInPreview', notInPreview],
    ['shownAs', shownAs],
    ['money', money],
  ] as const) {
    for (const pattern of Object.keys(map)) {
      if (!patterns.has(pattern)) {
        throw new TestingKitError(
          `${operation.kind}: ${option} names "${pattern}", which is not a field of the scope (fields: ${[...patterns].join(', ')})`,
        );
      }
    }
  }
  for (const [pattern, reason] of Object.entries(notInPreview)) {
    if (typeof reason !== 'string' || reason.trim().length === 0) {
      throw new TestingKitError(
        `${operation.kind}: notInPreview "${pattern}" needs a reason (why the preview does not show it)`,
      );
    }
  }

  let rendered: Promise<PreviewLeaf[]> | undefined;
  const previewLeaves = (): Promise<PreviewLeaf[]> => {
    rendered ??= (async () => {
      const preview: unknown = options.render
        ? await options.render(args as ArgumentsOf<Op>, facts)
        : options.preview;
      try {
        canonicalize(preview);
      } catch (error) {
        assert.fail(
          `${operation.kind}: the preview is not JSON data: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      return flattenPreview(preview, '$', undefined);
    })();
    return rendered;
  };

  const cases: SuiteCase[] = [
    {
      name: 'renders a preview (JSON data with at least one field)',
      run: async () => {
        const shown = await previewLeaves();
        assert.ok(shown.length > 0, `${operation.kind}: the preview is empty`);
      },
    },
  ];
  for (const leaf of leaves) {
    if (prefixPatterns(leaf.segments).some((p) => Object.hasOwn(notInPreview, p))) continue;
    const check = checkFor(operation, leaf, scope, { money, shownAs });
    if (!check) continue;
    cases.push({
      name: check.name,
      run: async () => {
        const problem = check.verify(await previewLeaves());
        if (problem) assert.fail(`${operation.kind}: ${problem}`);
      },
    });
  }
  return cases;
}

interface FieldCheck {
  readonly name: string;
  /** Returns the problem, or undefined when the preview shows the field. */
  verify(preview: readonly PreviewLeaf[]): string | undefined;
}

function checkFor(
  operation: AnyOperation,
  leaf: ScopeLeaf,
  scope: unknown,
  options: {
    money: Readonly<Record<string, string>>;
    shownAs: Readonly<Record<string, (value: unknown) => string>>;
  },
): FieldCheck | undefined {
  const label = own(operation.fields, leaf.pattern)?.redact ? leaf.path : `${leaf.path} ${short(leaf.value)}`;
  const shownAs = own(options.shownAs, leaf.pattern);
  if (shownAs) {
    const text = shownAs(leaf.value);
    return {
      name: `shows ${label} as ${JSON.stringify(text)}`,
      verify: (preview) =>
        strings(preview).some((s) => s.value.includes(text))
          ? undefined
          : `the preview does not show ${leaf.path} as ${JSON.stringify(text)}`,
    };
  }
  const currency = currencyOf(operation, leaf, scope, options.money);
  if (currency !== undefined && typeof leaf.value === 'number') return moneyCheck(leaf, leaf.value, currency);
  switch (typeof leaf.value) {
    case 'string': {
      const text = leaf.value;
      return {
        name: `shows ${label} verbatim`,
        verify: (preview) =>
          strings(preview).some((s) => s.value.includes(text))
            ? undefined
            : `the preview does not show ${leaf.path} (${JSON.stringify(text)}) verbatim anywhere`,
      };
    }
    case 'number': {
      const n = leaf.value;
      const texts = numberTexts(n);
      return {
        name: `shows ${label} exactly`,
        verify: (preview) =>
          preview.some((p) => p.key === leaf.key && p.value === n) ||
          strings(preview).some((s) => texts.some((t) => containsNumber(s.value, t)))
            ? undefined
            : `the preview does not show ${leaf.path} (${n}) exactly: expected ${texts.map((t) => JSON.stringify(t)).join(' or ')}`,
      };
    }
    case 'boolean':
    case 'object': {
      if (leaf.value !== null && typeof leaf.value === 'object') return undefined;
      const value = leaf.value;
      const key = leaf.key;
      return {
        name: `shows ${label} as a preview field "${key ?? leaf.path}"`,
        verify: (preview) =>
          key !== undefined && preview.some((p) => p.key === key && p.value === value)
            ? undefined
            : `the preview has no field "${key ?? leaf.path}" showing ${leaf.path} = ${JSON.stringify(value)}; show it, or declare how it is shown in shownAs`,
      };
    }
    default:
      return undefined;
  }
}

function moneyCheck(leaf: ScopeLeaf, minor: number, currency: string): FieldCheck {
  const grouped = formatMoney(minor, currency).slice(0, -(currency.length + 1));
  const plain = grouped.replaceAll(',', '');
  const misleading = roundedForms(minor, currency, plain);
  return {
    name: `shows ${leaf.path} (${minor} minor units of ${currency}) as "${grouped}", never rounded`,
    verify: (preview) => {
      const texts = strings(preview);
      if (!texts.some((s) => containsNumber(s.value, grouped) || containsNumber(s.value, plain))) {
        const found = texts.filter((s) => misleading.some((m) => m.test(s.value)));
        const hint =
          found.length > 0
            ? `; it shows a rounded amount instead: ${found.map((s) => `${s.path} ${JSON.stringify(s.value)}`).join(', ')}`
            : '';
        return `the preview does not show ${leaf.path} at full precision: expected "${grouped}" (${minor} minor units of ${currency})${hint}`;
      }
      const rounded = texts.filter((s) => misleading.some((m) => m.test(s.value)));
      if (rounded.length > 0) {
        return `the preview also shows ${leaf.path} rounded: ${rounded.map((s) => `${s.path} ${JSON.stringify(s.value)}`).join(', ')} (exact: "${grouped} ${currency}")`;
      }
      return undefined;
    },
  };
}

const SYMBOLS: Readonly<Record<string, string>> = { USD: '$', EUR: '€', GBP: '£', JPY: '¥', INR: '₹' };

// The amount at fewer decimals (rounded and truncated) next to its currency code or symbol:
// "240 USD", "$240.5", "USD 240" for 240.49 USD. Forms equal in value to the exact amount are fine.
function roundedForms(minor: number, currency: string, exact: string): RegExp[] {
  const exponent = (exact.split('.')[1] ?? '').length;
  const scale = 10 ** exponent;
  const forms = new Set<string>();
  for (let d = 0; d < exponent; d++) {
    const rounded = (minor / scale).toFixed(d);
    const truncated = (Math.trunc(minor / 10 ** (exponent - d)) / 10 ** d).toFixed(d);
    for (const form of [rounded, truncated]) {
      if (Number(form) * scale !== minor) {
        forms.add(form);
        forms.add(group(form));
      }
    }
  }
  const symbol = own(SYMBOLS, currency);
  const marker = symbol ? `(?:${escapeRegExp(currency)}|${escapeRegExp(symbol)})` : escapeRegExp(currency);
  return [...forms].map((form) => {
    const n = `(?<![0-9.,])${escapeRegExp(form)}(?![0-9]|[.,][0-9])`;
    return new RegExp(`${marker}\\s?${n}|${n}\\s?${escapeRegExp(currency)}`);
  });
}

function group(decimal: string): string {
  const [whole, fraction] = decimal.split('.');
  const grouped = (whole ?? '').replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function containsNumber(haystack: string, number: string): boolean {
  return new RegExp(`(?<![0-9.,])${escapeRegExp(number)}(?![0-9]|[.,][0-9])`).test(haystack);
}

function numberTexts(n: number): string[] {
  const plain = String(n);
  return [...new Set([plain, group(plain)])];
}

function currencyOf(
  operation: AnyOperation,
  leaf: ScopeLeaf,
  scope: unknown,
  money: Readonly<Record<string, string>>,
): string | undefined {
  const declared = own(money, leaf.pattern);
  const parent = valueAt(scope, leaf.segments.slice(0, -1));
  const sibling = (key: string): unknown =>
    parent !== null && typeof parent === 'object' && !Array.isArray(parent) && Object.hasOwn(parent, key)
      ? (parent as Record<string, unknown>)[key]
      : undefined;
  if (declared !== undefined) {
    const fromSibling = sibling(declared);
    if (typeof fromSibling === 'string') return fromSibling;
    if (/^[A-Z]{3}$/.test(declared)) return declared;
    throw new TestingKitError(
      `${operation.kind}: money "${leaf.pattern}" names "${declared}", neither a sibling currency field nor an ISO code`,
    );
  }
  if (leaf.key !== undefined && /(^|_)minor$/.test(leaf.key)) {
    const currency = sibling('currency');
    if (typeof currency === 'string') return currency;
  }
  return undefined;
}

function strings(preview: readonly PreviewLeaf[]): { path: string; value: string }[] {
  return preview.filter((p): p is PreviewLeaf & { value: string } => typeof p.value === 'string');
}

function short(value: unknown): string {
  const text = canonicalize(value);
  return text.length > 40 ? `${text.slice(0, 37)}…` : text;
}

function scopeLeaves(value: unknown, segments: readonly Segment[]): ScopeLeaf[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => scopeLeaves(item, [...segments, i]));
  if (value !== null && typeof value === 'object') {
    return Object.keys(value)
      .sort()
      .flatMap((key) => scopeLeaves((value as Record<string, unknown>)[key], [...segments, key]));
  }
  const path = pathOf(segments);
  const last = segments[segments.length - 1];
  return [
    { segments, path, pattern: fieldPattern(path), key: typeof last === 'string' ? last : undefined, value },
  ];
}

function flattenPreview(value: unknown, path: string, key: string | undefined): PreviewLeaf[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => flattenPreview(item, indexPath(path, i), key));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => flattenPreview(v, childPath(path, k), k));
  }
  return [{ path, key, value }];
}

/** The field patterns of a path and of each container above it: `a[].b` → `a`, `a[]`, `a[].b`. */
function prefixPatterns(segments: readonly Segment[]): string[] {
  const out: string[] = [];
  for (let n = 1; n <= segments.length; n++) out.push(fieldPattern(pathOf(segments.slice(0, n))));
  return out;
}

function pathOf(segments: readonly Segment[]): string {
  let path = '$';
  for (const s of segments) path = typeof s === 'number' ? indexPath(path, s) : childPath(path, s);
  return path;
}

function valueAt(root: unknown, segments: readonly Segment[]): unknown {
  let node = root;
  for (const s of segments) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[s];
  }
  return node;
}
