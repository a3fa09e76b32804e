import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { waitForStore } from '../../src/cli/wait-for-store.js';
import { StoreFaultError, StoreUnavailableError } from '../../src/errors.js';
import { PostgresStore } from '../../src/store/postgres/index.js';
import { sampleProposal } from '../../src/testing/index.js';
import { TEST_PG_URL, testPostgres } from '../support/postgres.js';

// A port nothing listens on: connections are refused at once.
const NOBODY = 'postgres://postgres@127.0.0.1:1/countersign';

describe('PostgreSQL that cannot be reached', () => {
  it('is a StoreFaultError (unreachable), never a raw pool error', async () => {
    const store = new PostgresStore({ connectionString: NOBODY, timeouts: { connectMs: 2_000 } });
    const failure = await store.migrate().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(StoreFaultError);
    expect(failure).toMatchObject({ condition: 'unreachable', retryAfterSeconds: 5 });
    await store.close();
  });

  it('is waited for at start with one line per cause, and the wait stops on a signal', async () => {
    const store = new PostgresStore({ connectionString: NOBODY, timeouts: { connectMs: 2_000 } });
    const lines: string[] = [];
    const stop = new AbortController();
    let tries = 0;
    const migrate = store.migrate.bind(store);
    store.migrate = async () => {
      tries++;
      if (tries === 3) stop.abort();
      return migrate();
    };
    const waited = await waitForStore(store, {
      name: 'postgres://postgres@127.0.0.1:1/countersign',
      stderr: (text) => lines.push(text),
      signal: stop.signal,
      firstDelayMs: 1,
    });
    expect(waited).toEqual({ kind: 'stopped' });
    expect(tries).toBe(3);
    expect(lines).toEqual([
      'countersign serve: the store postgres://postgres@127.0.0.1:1/countersign is unavailable (unreachable: the database cannot be reached (ECONNREFUSED); the step it was taking was rolled back; try again shortly); trying again with backoff until it answers\n',
    ]);
    await store.close();
  });

  it('reports a refusal that waiting cannot cure (no such database) at once, naming the store', async () => {
    if (!TEST_PG_URL) return;
    const url = new URL(TEST_PG_URL);
    url.pathname = '/countersign_no_such_database';
    const store = new PostgresStore({ connectionString: url.toString() });
    const waited = waitForStore(store, { name: 'the test store', stderr: () => {}, firstDelayMs: 1 });
    await expect(waited).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(waited).rejects.toThrow(
      /cannot use the store the test store: .*countersign_no_such_database/,
    );
    await store.close();
  });
});

// Terminating backends and holding locks needs a server of our own to act on.
describe.skipIf(!TEST_PG_URL)('PostgreSQL failing under a running store (COUNTERSIGN_TEST_PG_URL)', () => {
  const backend = testPostgres();
  afterAll(() => backend.cleanup());
  const admin = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: TEST_PG_URL });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };

  it('survives its held connection’s backend being terminated: the transaction fails unreachable, nothing of it remains, the next one runs', async () => {
    const schema = backend.newSchema();
    const pool = new pg.Pool({ connectionString: TEST_PG_URL, options: `-c search_path=${schema}`, max: 2 });
    pool.on('error', () => {});
    const pids = new Set<number>();
    pool.on('acquire', (client) => pids.add((client as unknown as { processID: number }).processID));
    await admin((c) => c.query(`CREATE SCHEMA ${schema}`));
    const store = new PostgresStore({ pool });
    await store.migrate();
    let inside: () => void = () => {};
    const entered = new Promise<void>((resolve) => (inside = resolve));
    let resume: () => void = () => {};
    const terminated = new Promise<void>((resolve) => (resume = resolve));
    const written = sampleProposal();
    const cut = store.transaction(async (tx) => {
      await tx.insertProposal(written);
      inside();
      await terminated;
      return tx.getProposal('acme', written.id);
    });
    await entered;
    // pg emits 'error' on the held connection as its socket dies: unheard, that ended the process.
    await admin((c) =>
      c.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [[...pids]]),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    resume();
    const failure = await cut.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(StoreFaultError);
    expect((failure as StoreFaultError).condition).toBe('unreachable');
    // Cut mid-way: nothing of it remains, and the pool serves the next caller.
    expect(await store.read((r) => r.getProposal('acme', written.id))).toBeUndefined();
    await store.close();
    await pool.end();
  });

  it('gives up on a lock held past the statement timeout as a timeout, then reads once it is free', async () => {
    const schema = backend.newSchema();
    const store = new PostgresStore({
      connectionString: TEST_PG_URL!,
      schema,
      timeouts: { statementMs: 300 },
    });
    await store.migrate();
    const holder = new pg.Client({ connectionString: TEST_PG_URL });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`LOCK TABLE ${schema}.countersign_proposals IN ACCESS EXCLUSIVE MODE`);
      const failure = await store
        .read((r) => r.getProposal('acme', 'prp_none'))
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(failure).toBeInstanceOf(StoreFaultError);
      expect(failure).toMatchObject({ condition: 'timeout' });
      // lock_timeout (55P03) or statement_timeout (57014), whichever the server checks first.
      expect((failure as StoreFaultError).message).toMatch(/\((55P03|57014)\)/);
      await holder.query('ROLLBACK');
      expect(await store.read((r) => r.getProposal('acme', 'prp_none'))).toBeUndefined();
    } finally {
      await holder.end();
      await store.close();
    }
  });
});
