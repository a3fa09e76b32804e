import { chmodSync, existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakePaymentProvider } from '../../src/demo/demo-world.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { tempDir } from '../support/engine.js';
import { serve } from '../support/serve.js';

// Issue 10, hole 14: database files were created 0644, so any local user could read proposals,
// sessions and the audit trail. They are now created 0600, and SQLite gives -wal and -shm the
// database file's mode.

const modeOf = (file: string) => statSync(file).mode & 0o777;

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempDir());
});
afterEach(() => cleanup());

describe('SQLite files are private to their owner', () => {
  it('SqliteStore creates the database, its -wal and its -shm with mode 0600', async () => {
    const db = join(dir, 'app.db');
    const store = new SqliteStore({ path: db });
    await store.migrate();
    for (const file of [db, `${db}-wal`, `${db}-shm`]) {
      expect(existsSync(file), file).toBe(true);
      expect(modeOf(file), file).toBe(0o600);
    }
    await store.close();
  });

  it('an existing database keeps the mode its owner gave it', async () => {
    const db = join(dir, 'shared.db');
    writeFileSync(db, '');
    chmodSync(db, 0o640);
    const store = new SqliteStore({ path: db });
    await store.migrate();
    expect(modeOf(db)).toBe(0o640);
    await store.close();
  });

  it('a database in a missing directory still fails with SQLite’s own error', () => {
    expect(() => new SqliteStore({ path: join(dir, 'no-such-dir', 'app.db') })).toThrow(
      /directory does not exist/,
    );
  });

  it('countersign serve --demo: database, -wal, -shm, and credentials are 0600', async () => {
    const db = join(dir, 'countersign.db');
    const running = await serve(['--demo', '--db', db, '--port', '0']);
    try {
      for (const file of [db, `${db}-wal`, `${db}-shm`, join(dir, 'countersign-demo-credentials.json')]) {
        expect(modeOf(file), file).toBe(0o600);
      }
    } finally {
      expect(await running.stop()).toBe(0);
    }
  });

  it('the demo payment provider writes its journal 0600', async () => {
    const journal = join(dir, 'countersign-demo-provider.jsonl');
    await new FakePaymentProvider({ journal }).pay(
      { destination_account_id: 'acct-1', amount_minor: 100, currency: 'USD', reference: 'r' },
      { idempotencyKey: 'k' },
    );
    expect(modeOf(journal)).toBe(0o600);
  });
});
