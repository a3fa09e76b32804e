import { describe, expect, it } from 'vitest';
import { own } from '../../src/canonical/own.js';
import { diffScopes } from '../../src/canonical/scope-diff.js';
import { formatMoney } from '../../src/operation/money.js';

describe('own', () => {
  it('reads own properties only, never a member of Object.prototype', () => {
    const record: Record<string, number> = { amount_minor: 1 };
    expect(own(record, 'amount_minor')).toBe(1);
    for (const key of ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'])
      expect(own(record, key)).toBeUndefined();
    expect(own(JSON.parse('{"__proto__":2,"constructor":3}') as Record<string, number>, '__proto__')).toBe(2);
    expect(own(undefined, 'x')).toBeUndefined();
  });

  it('scope fields named like prototype members diff as plain fields', () => {
    expect(diffScopes({ constructor: 'a', toString: 1 }, { constructor: 'b', toString: 1 })).toEqual([
      { path: '$.constructor', change: 'changed', from: '"a"', to: '"b"' },
    ]);
  });

  it('a currency code named like a prototype member gets the default exponent, not a function', () => {
    expect(formatMoney(24_049, 'constructor')).toBe('240.49 constructor');
    expect(formatMoney(24_049, 'KWD')).toBe('24.049 KWD');
  });
});
