import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineOperation, formatMoney, OperationDefinitionError } from '../../src/index.js';
import { diffScopes, formatScopeChange } from '../../src/canonical/index.js';
import { buildScope, parseDuration } from '../../src/operation/index.js';

const scope = z.strictObject({
  tenant: z.string(),
  operation: z.literal('x.y'),
  items: z.array(z.string()),
  tags: z.array(z.string()),
});

describe('defineOperation', () => {
  it('refuses a scope schema that would strip or pass unknown keys', () => {
    expect(() =>
      defineOperation({ kind: 'x.y', scopeVersion: 1, scope: z.object({ a: z.string() }) }),
    ).toThrow(OperationDefinitionError);
    expect(() =>
      defineOperation({ kind: 'x.y', scopeVersion: 1, scope: z.looseObject({ a: z.string() }) }),
    ).toThrow(/z.strictObject/);
  });

  it('an approval policy: static ones checked at definition, computed ones per arguments, roles sorted', () => {
    for (const required of [0, 1.5, 11, Number.NaN]) {
      expect(() => defineOperation({ kind: 'x.y', scopeVersion: 1, scope, approvals: { required } })).toThrow(
        /approvals.required/,
      );
    }
    expect(() =>
      defineOperation({ kind: 'x.y', scopeVersion: 1, scope, approvals: { required: 2, roles: [''] } }),
    ).toThrow(/approvals.roles/);
    expect(defineOperation({ kind: 'x.y', scopeVersion: 1, scope }).approvalsOf({} as never)).toEqual({
      required: 1,
      roles: [],
    });
    const computed = defineOperation({
      kind: 'x.y',
      scopeVersion: 1,
      scope,
      arguments: z.strictObject({ n: z.number() }),
      toScope: (a, facts) => ({ tenant: facts.tenant, operation: 'x.y', items: [], tags: [String(a.n)] }),
      approvals: (a) =>
        a.n > 5 ? { required: 2, roles: ['treasurer', 'approver', 'treasurer'] } : { required: 1 },
    });
    expect(computed.approvalsOf({ n: 9 })).toEqual({ required: 2, roles: ['approver', 'treasurer'] });
    expect(computed.approvalsOf({ n: 1 })).toEqual({ required: 1, roles: [] });
  });

  it('refuses bad kinds, versions and durations with the field named', () => {
    expect(() => defineOperation({ kind: 'Pay Invoice', scopeVersion: 1, scope })).toThrow(/kind/);
    expect(() => defineOperation({ kind: 'x.y', scopeVersion: 0, scope })).toThrow(/scopeVersion/);
    expect(() =>
      defineOperation({ kind: 'x.y', scopeVersion: 2, supportedScopeVersions: [1], scope }),
    ).toThrow(/supportedScopeVersions/);
    expect(() => defineOperation({ kind: 'x.y', scopeVersion: 1, scope, expiresIn: '30 minutes' })).toThrow(
      /expiresIn/,
    );
  });

  it('an external executor without reconcile is a startup error', () => {
    expect(() =>
      defineOperation({
        kind: 'x.y',
        scopeVersion: 1,
        scope,
        effect: 'external',
        request: z.strictObject({}),
        arguments: z.strictObject({}),
        toScope: (_a, facts) => ({ tenant: facts.tenant, operation: 'x.y', items: [], tags: [] }),
        prepare: async () => ({ arguments: {}, preview: {} }),
        execute: async () => ({}),
      }),
    ).toThrow(/reconcile/);
  });

  it('the returned operation is frozen', () => {
    const op = defineOperation({ kind: 'x.y', scopeVersion: 1, scope });
    expect(Object.isFrozen(op)).toBe(true);
    expect(op.supportedScopeVersions).toEqual([1]);
    expect(op.expiresInMs).toBe(30 * 60_000);
  });

  it('parses durations', () => {
    expect([
      parseDuration('500ms'),
      parseDuration('45s'),
      parseDuration('30m'),
      parseDuration('2h'),
      parseDuration('1d'),
    ]).toEqual([500, 45_000, 1_800_000, 7_200_000, 86_400_000]);
  });
});

describe('sets and sequences', () => {
  const op = defineOperation({ kind: 'x.y', scopeVersion: 1, scope, fields: { tags: { set: true } } });

  it('a set field is deduplicated and sorted before freezing; a sequence keeps its order', () => {
    const built = buildScope(op, {
      tenant: 't',
      operation: 'x.y',
      items: ['b', 'a', 'b'],
      tags: ['b', 'a', 'b'],
    });
    expect(built.kind === 'ok' && built.scope).toEqual({
      tenant: 't',
      operation: 'x.y',
      items: ['b', 'a', 'b'],
      tags: ['a', 'b'],
    });
  });

  it('property: any permutation of a set digests the same; a permutation of a sequence does not (unless equal)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string(), { minLength: 2, maxLength: 8 }), (values) => {
        const reversed = [...values].reverse();
        const a = buildScope(op, { tenant: 't', operation: 'x.y', items: values, tags: values });
        const b = buildScope(op, { tenant: 't', operation: 'x.y', items: values, tags: reversed });
        const c = buildScope(op, { tenant: 't', operation: 'x.y', items: reversed, tags: values });
        if (a.kind !== 'ok' || b.kind !== 'ok' || c.kind !== 'ok') return false;
        return a.digest.sha256 === b.digest.sha256 && a.digest.sha256 !== c.digest.sha256;
      }),
    );
  });
});

describe('diffScopes', () => {
  it('names nested paths, sequence positions, additions, removals and type changes', () => {
    const approved = {
      customer: { id: 'cus-7', email: 'a@x.test' },
      recipients: ['a', 'b'],
      amount: 40,
      note: 'x',
    };
    const requested = {
      customer: { id: 'cus-8', email: 'a@x.test' },
      recipients: ['a', 'b', 'c'],
      amount: true,
      extra: 1,
    };
    expect(diffScopes(approved, requested).map(formatScopeChange)).toEqual([
      '$.amount: type number -> boolean',
      '$.customer.id: "cus-7" -> "cus-8"',
      '$.extra: added 1',
      '$.note: removed "x"',
      '$.recipients[2]: added "c"',
    ]);
  });

  it('diffs set fields by membership and redacts per field', () => {
    const rules = {
      recipients: { set: true },
      'customer.account': { redact: (v: unknown) => `…${String(v).slice(-2)}` },
    };
    const changes = diffScopes(
      { recipients: ['a', 'b'], customer: { account: 'acct-11' } },
      { recipients: ['b', 'c'], customer: { account: 'acct-22' } },
      rules,
    );
    expect(changes.map(formatScopeChange)).toEqual([
      '$.customer.account: "…11" -> "…22"',
      '$.recipients: removed "a"',
      '$.recipients: added "c"',
    ]);
  });

  it('keys that are not identifiers are quoted', () => {
    expect(diffScopes({ 'a b': 1 }, { 'a b': 2 })[0]?.path).toBe('$["a b"]');
  });

  it('property: equal values have no differences; a changed leaf is named', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1 }), fc.integer()), fc.integer(), (obj, bump) => {
        if (diffScopes(obj, structuredClone(obj)).length !== 0) return false;
        const key = Object.keys(obj)[0];
        if (key === undefined || bump === 0) return true;
        const changed = { ...obj, [key]: obj[key]! + bump };
        return diffScopes(obj, changed).length === 1;
      }),
    );
  });
});

describe('formatMoney shows every minor unit', () => {
  it.each([
    [24_049, 'USD', '240.49 USD'],
    [24_000, 'USD', '240.00 USD'],
    [5, 'USD', '0.05 USD'],
    [1_250_000, 'USD', '12,500.00 USD'],
    [1_500, 'JPY', '1,500 JPY'],
    [1_234, 'KWD', '1.234 KWD'],
    [-250, 'EUR', '-2.50 EUR'],
  ])('%i %s → %s', (minor, currency, text) => {
    expect(formatMoney(minor, currency)).toBe(text);
  });
});
