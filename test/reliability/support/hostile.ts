import fc from 'fast-check';
import { invoiceId } from './world.js';

/** Keys that have broken parsers, mergers and validators before. */
export const hostileKey = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 10 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '__proto__',
      'constructor',
      'prototype',
      'toString',
      'valueOf',
      'hasOwnProperty',
      '',
      'invoice_id',
      'amount_minor',
    ),
  },
);

/** Number lexemes a lax parser gets wrong: overflow, precision loss, exotic spellings. */
export const hostileNumber = fc.oneof(
  fc.constantFrom(
    '1e400',
    '-1e400',
    '1e-400',
    '9007199254740993',
    '-9007199254740993',
    '9007199254740992.5',
    '9007199254740993.0',
    '1e23',
    '-0',
    '0.1e1',
    '00',
    '01',
    '1.',
    '.5',
    '+1',
    '1e',
    'NaN',
    'Infinity',
    '0x10',
    '1_000',
  ),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
  fc.double().map(String),
  fc.stringMatching(/^-?[0-9]{1,40}(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,4})?$/),
);

/** String literals (as JSON text) with lone surrogates, raw and escaped, and control characters. */
export const hostileStringLiteral = fc.oneof(
  fc.constantFrom(
    '"\ud800"',
    '"\udc00"',
    '"\\ud800"',
    '"\\udc00x"',
    '"\\udbff\\udbff"',
    '"\udc00\ud800"',
    '"a\u0000b"',
    '"\\u00"',
    '"\\x41"',
    '"\t"',
  ),
  fc.string({ unit: 'binary', maxLength: 20 }).map((s) => JSON.stringify(s)),
  fc.string({ unit: 'binary', maxLength: 20 }).map((s) => `"${s}"`),
);

type Text = fc.Arbitrary<string>;

const literal: Text = fc.oneof(
  { weight: 3, arbitrary: hostileNumber },
  { weight: 3, arbitrary: hostileStringLiteral },
  { weight: 1, arbitrary: fc.constantFrom('true', 'false', 'null', 'nul', 'True', 'undefined') },
);

/** JSON-like texts built to hit duplicate keys, prototype keys and bad literals at every depth. */
export const hostileStructure: Text = fc.letrec<{ value: string; object: string; array: string }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', maxDepth: 5 }, literal, tie('object'), tie('array')),
  object: fc
    .array(fc.tuple(hostileKey, tie('value')), { maxLength: 5 })
    .chain((members) =>
      fc.oneof(
        fc.constant(members),
        // Repeat a key: duplicates must be refused, never "last one wins".
        fc.constant(
          members.length > 0 ? [...members, [members[0]![0], 'true'] as [string, string]] : members,
        ),
      ),
    )
    .map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  array: fc.array(tie('value'), { maxLength: 5 }).map((items) => `[${items.join(',')}]`),
})).value;

/** Deep nesting up to 10^4 levels, closed or not, of arrays or objects. */
export const deepText: Text = fc
  .tuple(fc.integer({ min: 1, max: 10_000 }), fc.constantFrom('[', '{"a":'), fc.boolean())
  .map(([depth, open, closed]) => {
    const close = open === '[' ? ']' : '}';
    return open.repeat(depth) + (closed ? `1${close.repeat(depth)}` : '');
  });

/** Long strings (up to 2 MB), sometimes with a lone surrogate at the end. */
export const hugeText: Text = fc
  .tuple(
    fc.oneof(
      { weight: 19, arbitrary: fc.integer({ min: 1_000, max: 100_000 }) },
      { weight: 1, arbitrary: fc.integer({ min: 100_000, max: 2_000_000 }) },
    ),
    fc.boolean(),
  )
  .map(([n, lone]) => `{"invoice_id":"${'x'.repeat(n)}${lone ? '\ud800' : ''}"}`);

/** A text damaged at one place: a character inserted, removed or replaced. */
function damaged(text: Text): Text {
  return fc
    .tuple(
      text,
      fc.nat(),
      fc.constantFrom('insert', 'remove', 'replace'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 2 }),
    )
    .map(([t, at, how, c]) => {
      const i = t.length === 0 ? 0 : at % t.length;
      if (how === 'insert') return t.slice(0, i) + c + t.slice(i);
      if (how === 'remove') return t.slice(0, i) + t.slice(i + 1);
      return t.slice(0, i) + c + t.slice(i + 1);
    });
}

/** Every kind of hostile JSON text, valid ones among them. */
export const hostileText: Text = fc.oneof(
  { weight: 3, arbitrary: fc.json() },
  { weight: 4, arbitrary: hostileStructure },
  { weight: 2, arbitrary: damaged(fc.oneof(fc.json(), hostileStructure)) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: deepText },
  { weight: 1, arbitrary: hugeText },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\ufeff{}',
      '{} {}',
      '{"a":1}\u0000',
      '/* */ {}',
      "{'a':1}",
      '[1,]',
      '{"a":1,}',
      '\u00a0{}',
    ),
  },
);

/** A value nested `depth` levels deep, built without recursion. */
export function deepValue(depth: number, kind: 'array' | 'object'): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = kind === 'array' ? [value] : { invoice_id: value };
  return value;
}

/** Objects carrying `__proto__` (as own data, the way a JSON parser hands it over) and `constructor.prototype`. */
export const prototypeValue: fc.Arbitrary<unknown> = fc.constantFrom(
  JSON.parse('{"__proto__":{"polluted":"yes","isAdmin":true}}'),
  JSON.parse('{"invoice_id":"inv-104","__proto__":{"amount_minor":1}}'),
  JSON.parse('{"constructor":{"prototype":{"polluted":"yes"}}}'),
  JSON.parse('{"invoice_id":{"constructor":{"prototype":{"polluted":"yes"}}}}'),
  JSON.parse('[{"__proto__":{"polluted":"yes"}}]'),
  { ['__proto__']: { polluted: 'yes' } },
  Object.assign(Object.create(null) as object, { invoice_id: 'inv-104' }),
);

/** Values a request field may hold: JSON data of every shape, and JavaScript values JSON cannot hold. */
export const hostileRequest: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue() },
  {
    weight: 3,
    arbitrary: fc.anything({
      withBigInt: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withNullPrototype: true,
      withTypedArray: true,
      withSparseArray: true,
      withBoxedValues: true,
    }),
  },
  {
    weight: 4,
    // Close to valid: the right field with a wrong type, an extra key, or a hostile value.
    arbitrary: fc.record(
      {
        invoice_id: fc.oneof(
          fc.nat({ max: 40 }).map(invoiceId),
          fc.string({ unit: 'binary', maxLength: 70 }),
          fc.integer(),
          fc.constant(null),
          fc.constant('\ud800'),
          fc.constant(Number('9007199254740993')),
          fc.constant(Number.POSITIVE_INFINITY),
          fc.constant(Number.NaN),
        ),
        amount_minor: fc.oneof(fc.integer(), fc.double()),
        broadcast_id: fc.constantFrom('bc-spring', 'bc-none', ''),
        subject: fc.string({ unit: 'binary', maxLength: 30 }),
        body: fc.oneof(fc.string({ maxLength: 30 }), fc.constant('y'.repeat(25_000))),
        order_id: fc.constantFrom('ord-81', 'ord-x'),
        line_item_id: fc.constantFrom('line-1', 'line-2'),
        discount_id: fc.constantFrom('disc-sibling', 'disc-x'),
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: prototypeValue },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 1, max: 10_000 }), fc.constantFrom<'array' | 'object'>('array', 'object'))
      .map(([d, k]) => deepValue(d, k)),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1_000, max: 1_000_000 }).map((n) => ({ invoice_id: 'x'.repeat(n) })),
  },
);
