import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/index.js';
import { hashPassword, PrincipalDirectory, verifyPassword } from '../../src/server/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { ManualClock } from '../support/engine.js';

const PASSWORD = 'correct horse battery staple';

/** The `scrypt$N$r$p$salt$hash` parts of a stored hash. */
function parts(stored: string): string[] {
  expect(stored).toMatch(/^scrypt\$\d+\$\d+\$\d+\$[\w-]{22}\$[\w-]{43}$/);
  return stored.split('$');
}

/** A migrated directory on an in-memory SQLite store, with tenant acme and one operator. */
async function directoryWithOperator(options: { passwordCost?: number }): Promise<{
  directory: PrincipalDirectory;
  storedHash: () => Promise<string>;
  close: () => Promise<void>;
}> {
  const store = new SqliteStore({ path: ':memory:' });
  await store.migrate();
  const directory = new PrincipalDirectory(store, { clock: new ManualClock(), ...options });
  await directory.migrate();
  await directory.ensureTenant('acme');
  await directory.addOperator({
    tenant: 'acme',
    email: 'ada@acme.test',
    password: PASSWORD,
    roles: ['approver'],
  });
  return {
    directory,
    storedHash: async () => {
      const rows = await store.transaction((tx) =>
        tx.local.all('SELECT password_hash FROM countersign_operators WHERE email = ?', ['ada@acme.test']),
      );
      return String(rows[0]?.['password_hash']);
    },
    close: () => store.close(),
  };
}

describe('password hashes', () => {
  it('hash at OWASP’s scrypt floor by default: N = 2^15, r = 8, p = 1', async () => {
    const stored = await hashPassword(PASSWORD);
    expect(parts(stored).slice(0, 4)).toEqual(['scrypt', '32768', '8', '1']);
    expect(await verifyPassword(PASSWORD, stored)).toBe(true);
  });

  it('take a lower cost when asked (for tests): a fresh salt each time, only the right password verifies', async () => {
    const one = await hashPassword(PASSWORD, { cost: 2 ** 10 });
    const two = await hashPassword(PASSWORD, { cost: 2 ** 10 });
    expect(parts(one).slice(0, 4)).toEqual(['scrypt', '1024', '8', '1']);
    expect(parts(one)[4]).not.toBe(parts(two)[4]);
    expect(await verifyPassword(PASSWORD, one)).toBe(true);
    expect(await verifyPassword(`${PASSWORD}!`, one)).toBe(false);
  });

  it('refuse a cost that is not a power of two from 2^10 to 2^20', async () => {
    for (const cost of [2 ** 9, 3000, 2 ** 21, Number.NaN, 1.5 * 2 ** 10])
      await expect(hashPassword(PASSWORD, { cost })).rejects.toThrow(ConfigurationError);
  });
});

describe('PrincipalDirectory passwords', () => {
  it('stores production-cost hashes unless told otherwise, and signs the operator in with them', async () => {
    const d = await directoryWithOperator({});
    try {
      expect(parts(await d.storedHash()).slice(0, 4)).toEqual(['scrypt', '32768', '8', '1']);
      const login = await d.directory.login({ email: 'ada@acme.test', password: PASSWORD, client: 'c' });
      expect(login.kind).toBe('signed_in');
    } finally {
      await d.close();
    }
  });

  it('passwordCost sets the cost of new hashes; wrong passwords and unknown emails are still refused', async () => {
    const d = await directoryWithOperator({ passwordCost: 2 ** 10 });
    try {
      expect(parts(await d.storedHash()).slice(0, 4)).toEqual(['scrypt', '1024', '8', '1']);
      const ok = await d.directory.login({ email: 'ada@acme.test', password: PASSWORD, client: 'c' });
      expect(ok.kind).toBe('signed_in');
      const wrong = await d.directory.login({
        email: 'ada@acme.test',
        password: `${PASSWORD}!`,
        client: 'c',
      });
      expect(wrong).toEqual({ kind: 'invalid_credentials' });
      const unknown = await d.directory.login({ email: 'nobody@acme.test', password: PASSWORD, client: 'c' });
      expect(unknown).toEqual({ kind: 'invalid_credentials' });
    } finally {
      await d.close();
    }
  });

  it('refuses an out-of-range passwordCost when it is built', () => {
    const store = new SqliteStore({ path: ':memory:' });
    expect(() => new PrincipalDirectory(store, { passwordCost: 2 ** 9 })).toThrow(ConfigurationError);
    expect(() => new PrincipalDirectory(store, { passwordCost: 2 ** 21 })).toThrow(ConfigurationError);
  });
});
