import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { currencyCode, defineOperation, hidden, last4, minorUnits } from '../../src/index.js';
import { editChanges } from '../../src/server/console/review/edit-changes.js';
import { eventHashFacts } from '../../src/server/console/review/event-hashes.js';
import { declaredOrder, isHighImpact, reviewFields } from '../../src/server/console/review/field-order.js';

const scope = z.strictObject({
  tenant: z.string(),
  operation: z.literal('payout.send'),
  payee: z.string(),
  account: z.string(),
  amount_minor: minorUnits(),
  currency: currencyCode(),
  cc: z.array(z.string()),
});

const withPreviewSchema = defineOperation({
  kind: 'payout.send',
  scopeVersion: 1,
  scope,
  preview: z.object({
    title: z.string(),
    payee: z.string(),
    amount: z.object({ minor: z.number(), currency: z.string() }),
    account: z.string(),
  }),
  fields: {
    account: { redact: last4, highImpact: true },
    'amount.minor': { highImpact: true },
    cc: { set: true, redact: hidden },
  },
});

const withoutPreviewSchema = defineOperation({
  kind: 'payout.send',
  scopeVersion: 1,
  scope,
  fields: { account: { redact: last4, highImpact: true } },
});

describe('reviewFields', () => {
  // Stored previews are canonical JSON: their keys arrive sorted alphabetically.
  const stored = {
    account: 'acct-9911',
    amount: { minor: 500, currency: 'USD' },
    note: 'x',
    payee: 'Northwind',
    title: 'Pay',
  };

  it('orders the preview as its schema declares, undeclared fields last in stored order', () => {
    expect(reviewFields(stored, withPreviewSchema, ['title']).map((f) => f.key)).toEqual([
      'payee',
      'amount',
      'account',
      'note',
    ]);
  });

  it('without a preview schema, orders by fields, then arguments, then scope', () => {
    expect(declaredOrder(withoutPreviewSchema)).toEqual([
      'account',
      'tenant',
      'operation',
      'payee',
      'amount_minor',
      'currency',
      'cc',
    ]);
    expect(reviewFields(stored, withoutPreviewSchema, ['title']).map((f) => f.key)).toEqual([
      'account',
      'payee',
      'amount',
      'note',
    ]);
  });

  it('keeps the stored order when the operation is not registered', () => {
    expect(reviewFields(stored, undefined).map((f) => f.key)).toEqual([
      'account',
      'amount',
      'note',
      'payee',
      'title',
    ]);
  });

  it('marks a field high-impact when it or anything inside it is declared so', () => {
    const marks = Object.fromEntries(
      reviewFields(stored, withPreviewSchema).map((f) => [f.key, f.highImpact]),
    );
    expect(marks).toEqual({ payee: false, amount: true, account: true, note: false, title: false });
    expect(isHighImpact(withPreviewSchema, 'cc')).toBe(false);
    expect(isHighImpact(undefined, 'account')).toBe(false);
    // A key named like an Object.prototype member is not declared by anyone.
    expect(isHighImpact(withPreviewSchema, 'constructor')).toBe(false);
  });
});

describe('editChanges', () => {
  const before = {
    tenant: 'acme',
    operation: 'payout.send',
    payee: 'Northwind',
    account: 'acct-supplier-7',
    amount_minor: 4000,
    currency: 'USD',
    cc: ['a@x.test', 'b@x.test'],
  };

  it('lists every changed field with both values in full, redacted, in declared order (preview schema, fields, scope)', () => {
    const after = {
      ...before,
      amount_minor: 40000,
      account: 'acct-personal-2',
      cc: ['a@x.test', 'c@x.test'],
    };
    const changes = editChanges(before, after, withPreviewSchema);
    expect(changes).toEqual([
      {
        key: 'account',
        change: 'changed',
        highImpact: true,
        from: '…er-7',
        to: '…al-2',
        lines: ['$.account: "…er-7" -> "…al-2"'],
      },
      {
        key: 'cc',
        change: 'changed',
        highImpact: false,
        from: ['[redacted]', '[redacted]'],
        to: ['[redacted]', '[redacted]'],
        lines: ['$.cc: removed "[redacted]"', '$.cc: added "[redacted]"'],
      },
      {
        key: 'amount_minor',
        change: 'changed',
        highImpact: false,
        from: 4000,
        to: 40000,
        lines: ['$.amount_minor: 4000 -> 40000'],
      },
    ]);
    // Nothing unredacted reaches the result.
    expect(JSON.stringify(changes)).not.toMatch(/supplier|personal|b@x|c@x/);
  });

  it('reports added and removed fields and nothing for equal scopes', () => {
    const { cc: _cc, ...withoutCc } = before;
    expect(editChanges(before, { ...before }, withPreviewSchema)).toEqual([]);
    const removed = editChanges(before, withoutCc, withoutPreviewSchema);
    expect(removed.map((c) => [c.key, c.change, 'to' in c])).toEqual([['cc', 'removed', false]]);
    const added = editChanges(withoutCc, before, withoutPreviewSchema);
    expect(added.map((c) => [c.key, c.change, 'from' in c])).toEqual([['cc', 'added', false]]);
  });

  it('does not count a field whose name is a prefix of a changed one', () => {
    const a = { amount: 1, amount_minor: 1 };
    const changes = editChanges(a, { amount: 1, amount_minor: 2 }, undefined);
    expect(changes.map((c) => [c.key, c.lines])).toEqual([['amount_minor', ['$.amount_minor: 1 -> 2']]]);
  });

  it('shows a money field as money in each side’s currency, exactly, and leaves other values as they are', () => {
    const operation = (money: { currencyField: string } | { currency: string }, redact?: typeof last4) =>
      defineOperation({
        kind: 'payout.send',
        scopeVersion: 1,
        scope,
        fields: { amount_minor: { highImpact: true, money, ...(redact ? { redact } : {}) } },
      });
    const after = { ...before, amount_minor: 240_490, currency: 'EUR' };
    const byField = operation({ currencyField: 'currency' });
    expect(editChanges(before, after, byField).map((c) => [c.key, c.from, c.to])).toEqual([
      ['amount_minor', { minor: 4000, currency: 'USD' }, { minor: 240_490, currency: 'EUR' }],
      ['currency', 'USD', 'EUR'],
    ]);
    const fixed = operation({ currency: 'JPY' });
    expect(editChanges(before, after, fixed)[0]).toMatchObject({
      from: { minor: 4000, currency: 'JPY' },
      to: { minor: 240_490, currency: 'JPY' },
    });
    // Redaction wins: a redacted amount is never shown in full, as money or otherwise.
    expect(editChanges(before, after, operation({ currencyField: 'currency' }, last4))[0]).toMatchObject({
      from: '…4000',
      to: '…0490',
    });
    // No currency to show it in: the raw value.
    const noCurrency = { ...after, currency: 'not a code' };
    expect(editChanges(before, noCurrency, byField)[0]).toMatchObject({
      from: { minor: 4000, currency: 'USD' },
      to: 240_490,
    });
  });

  it('refuses a money rule without a currency field or with a currency that is not an ISO 4217 code', () => {
    const define = (money: unknown) => () =>
      defineOperation({
        kind: 'payout.send',
        scopeVersion: 1,
        scope,
        fields: { amount_minor: { money: money as { currency: string } } },
      });
    expect(define({ currency: 'usd' })).toThrow(
      'payout.send: fields.amount_minor.money.currency must be an ISO 4217 code such as "USD"',
    );
    expect(define({ currencyField: '' })).toThrow(
      "payout.send: fields.amount_minor.money must name the scope field holding the currency ({ currencyField: 'currency' }) or fix one ({ currency: 'USD' })",
    );
    expect(define('USD')).toThrow(
      'payout.send: fields.amount_minor.money must be { currencyField } or { currency }',
    );
  });
});

describe('eventHashFacts', () => {
  const contract = '6d8d'.repeat(16);
  const scopeDigest = 'ab12'.repeat(16);

  it('compares the requested scope with the approved scope and shows the contract on its own', () => {
    const facts = eventHashFacts(
      { approved: contract, requested: scopeDigest },
      { approvedScope: scopeDigest },
    );
    expect(facts).toEqual([
      { kind: 'single', hash: { label: 'contract', short: contract.slice(0, 12), valid: true } },
      {
        kind: 'compare',
        left: { label: 'approved scope', short: scopeDigest.slice(0, 12), valid: true },
        right: { label: 'requested scope', short: scopeDigest.slice(0, 12), valid: true },
        equal: true,
      },
    ]);
  });

  it('marks a requested scope that differs, with the proposal scope when the event names none', () => {
    const other = 'ff00'.repeat(16);
    const [fact] = eventHashFacts({ requested: other }, {}, scopeDigest);
    expect(fact).toMatchObject({ kind: 'compare', equal: false, left: { label: 'approved scope' } });
    expect(eventHashFacts({ requested: other }, {})).toEqual([
      { kind: 'single', hash: { label: 'requested scope', short: other.slice(0, 12), valid: true } },
    ]);
  });

  it('compares the digest an approver saw with the contract, once', () => {
    const seen = 'c0ffee'.padEnd(64, '0');
    expect(eventHashFacts({ proposed: contract, seen: contract, approved: contract }, {})).toEqual([
      {
        kind: 'compare',
        left: { label: 'seen contract', short: contract.slice(0, 12), valid: true },
        right: { label: 'contract', short: contract.slice(0, 12), valid: true },
        equal: true,
      },
    ]);
    expect(eventHashFacts({ proposed: contract, seen }, {})[0]).toMatchObject({
      kind: 'compare',
      equal: false,
    });
  });

  it('never calls two stored values that are not digests equal', () => {
    const facts = eventHashFacts({ requested: 'short' }, { approvedScope: 'short' });
    expect(facts).toEqual([
      {
        kind: 'compare',
        left: { label: 'approved scope', short: 'invalid:"short"', valid: false },
        right: { label: 'requested scope', short: 'invalid:"short"', valid: false },
        equal: false,
      },
    ]);
  });
});
