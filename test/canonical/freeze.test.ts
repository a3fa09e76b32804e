import { describe, expect, expectTypeOf, it } from 'vitest';
import { canonicalize } from '../../src/canonical/canonicalize.js';
import { digest, digestCanonical } from '../../src/canonical/digest.js';
import { CanonicalizationError } from '../../src/canonical/errors.js';
import {
  type DeepReadonly,
  freeze,
  freezeWithDigest,
  type ReadonlyJsonValue,
} from '../../src/canonical/freeze.js';
import { parseJson } from '../../src/canonical/parse-json.js';

// The bugs of the first source note ("Freeze the Approval Payload"), each shown with the
// broken approach first and then with freeze.

type Args = { order_id: string; amount: number; customer: { id: string; email: string } };

function liveArgs(): Args {
  return { order_id: 'ord_1', amount: 40, customer: { id: 'cus_1', email: 'a@example.com' } };
}

describe('a reference is not a freeze', () => {
  it('an alias changes when the live arguments change', () => {
    const args = liveArgs();
    const frozen = args; // the bug: a second name for the same object
    args.amount = 400;
    expect(frozen.amount).toBe(400);
  });

  it('freeze keeps what was approved when the live arguments change', () => {
    const args = liveArgs();
    const frozen = freeze(args);
    args.amount = 400;
    expect(frozen.amount).toBe(40);
    expect(args.amount).toBe(400);
  });

  it('a shallow copy still aliases the nested customer', () => {
    const args = liveArgs();
    const shallow = { ...args };
    args.customer.id = 'cus_2';
    expect(shallow.customer.id).toBe('cus_2');
  });

  it('freeze copies every level, so the nested customer does not move', () => {
    const args = liveArgs();
    const frozen = freeze(args);
    args.customer.id = 'cus_2';
    args.customer.email = 'attacker@example.com';
    expect(frozen.customer).toEqual({ id: 'cus_1', email: 'a@example.com' });
  });
});

describe('the digest is the contract', () => {
  it('stays 40 while the live object becomes 400, and the live digest no longer matches', () => {
    const live = liveArgs();
    const ticket = freezeWithDigest(live);
    live.amount = 400;
    expect(ticket.value.amount).toBe(40);
    expect(digest(live).sha256).not.toBe(ticket.digest.sha256); // resume with live args: refuse
    expect(digest(ticket.value).sha256).toBe(ticket.digest.sha256); // resume with the ticket: passes
  });

  it('changes when a key is added after approval', () => {
    const ticket = freezeWithDigest(liveArgs());
    expect(digest({ ...ticket.value, note: 'merged later' }).sha256).not.toBe(ticket.digest.sha256);
    expect(digest({ ...ticket.value, order_id: 'ord_2' }).sha256).not.toBe(ticket.digest.sha256);
  });

  it('canonicalizes once: canonical is canonicalize(value) and digest is its digest', () => {
    const args = liveArgs();
    const ticket = freezeWithDigest(args);
    expect(ticket.canonical).toBe(canonicalize(args));
    expect(ticket.digest).toEqual(digestCanonical(ticket.canonical));
    expect(ticket.digest).toEqual(digest(args));
    expect(ticket.digest.short).toBe(ticket.digest.sha256.slice(0, 12));
    expect(Object.isFrozen(ticket)).toBe(true);
  });
});

describe('freeze', () => {
  it('makes every level immutable: writes throw in strict mode', () => {
    const frozen = freeze({ amount: 40, customer: { id: 'cus_1' }, items: [{ sku: 'a' }] });
    const writable = frozen as unknown as {
      amount: number;
      customer: { id: string };
      items: { sku: string }[];
      extra?: number;
    };
    expect(() => {
      writable.amount = 400;
    }).toThrow(TypeError);
    expect(() => {
      writable.customer.id = 'cus_2';
    }).toThrow(TypeError);
    expect(() => {
      writable.extra = 1;
    }).toThrow(TypeError);
    expect(() => writable.items.push({ sku: 'b' })).toThrow(TypeError);
    expect(() => {
      writable.items[0]!.sku = 'b';
    }).toThrow(TypeError);
    expect(() => {
      delete (writable as { amount?: number }).amount;
    }).toThrow(TypeError);
    expect(frozen).toEqual({ amount: 40, customer: { id: 'cus_1' }, items: [{ sku: 'a' }] });
  });

  it('returns a copy, never the input, and leaves the input mutable', () => {
    const args = liveArgs();
    const frozen = freeze(args);
    expect(frozen).not.toBe(args);
    expect(frozen.customer).not.toBe(args.customer);
    expect(Object.isFrozen(args)).toBe(false);
  });

  it('returns canonical data: keys sorted, -0 as 0, __proto__ kept as data', () => {
    const input = JSON.parse('{"b": -0, "a": 1, "__proto__": {"x": 1}}') as Record<string, unknown>;
    const frozen = freeze(input) as Record<string, unknown>;
    expect(Object.keys(frozen)).toEqual(['__proto__', 'a', 'b']);
    expect(Object.is(frozen['b'], 0)).toBe(true);
    expect(Object.hasOwn(frozen, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(frozen)).toBe(Object.prototype);
  });

  it('copies numbers beyond 2^53 exactly (they come from its own canonical text)', () => {
    const big = { a: 2 ** 60, b: 1e300, c: -Number.MAX_VALUE, d: 5e-324 };
    expect(freeze(big)).toEqual(big);
  });

  it('refuses what canonicalize refuses', () => {
    expect(() => freeze({ when: new Date() })).toThrow(CanonicalizationError);
    expect(() => freezeWithDigest({ n: Number.NaN })).toThrow(CanonicalizationError);
  });

  it('freezes primitives and deep values within maxDepth', () => {
    expect(freeze('text')).toBe('text');
    expect(freeze(null)).toBeNull();
    let deep: unknown = 1;
    for (let i = 0; i < 1000; i++) deep = [deep];
    const frozen = freeze(deep, { maxDepth: 1000 });
    expect(canonicalize(frozen, { maxDepth: 1000 })).toBe(canonicalize(deep, { maxDepth: 1000 }));
  });

  it('types the copy as deeply read-only', () => {
    const frozen = freeze(liveArgs());
    expectTypeOf(frozen).toEqualTypeOf<{
      readonly order_id: string;
      readonly amount: number;
      readonly customer: { readonly id: string; readonly email: string };
    }>();
    expectTypeOf(freeze({ items: [1, 2] }).items).toEqualTypeOf<readonly number[]>();
    expectTypeOf(freeze(parseJson('[1]'))).toEqualTypeOf<ReadonlyJsonValue>();
    expectTypeOf<DeepReadonly<unknown>>().toEqualTypeOf<unknown>();
    expect(() => {
      // @ts-expect-error the copy is read-only at compile time as well as at run time
      frozen.customer.id = 'x';
    }).toThrow(TypeError);
  });
});
