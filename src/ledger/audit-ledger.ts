import type { AuditChainer } from '../audit/chain.js';
import type { AuditEvent, PendingAuditEvent } from '../audit/event.js';
import { CorruptAuditChainError } from '../store/store-errors.js';
import type { Store, StoreTransaction } from '../store/store.js';
import { drainQueue } from './drain-queue.js';
import { enterHead, type LedgerState, leaveHead, ledgerState } from './ledger-state.js';
import { type AuditAppender, TransactionAppends } from './transaction-appends.js';

// Queue reads of one chaining pass while it keeps finding events (see drainQueue).
const PASS_READS = 3;

/** How {@link AuditLedger.transaction} ends for the audit events it appended. */
export interface LedgerTransactionOptions {
  /**
   * Resolve at the commit, without waiting for the events the transaction queued to be chained:
   * a chaining pass chains them in the background, and the store's reads and `close()` wait for
   * it (see `Store.finishBeforeReads`). Default false: resolve once they are chained.
   */
  readonly chainInBackground?: boolean;
  /**
   * Called once, after the commit, with the transaction's events as chained (in the order they
   * were appended), once every one of them is: before `transaction()` resolves, or, with
   * `chainInBackground`, when the pass that chains the last of them ends. The only way a caller
   * learns an appended event's place in the chain. Events that could not be chained then (they
   * stay queued for a later pass) are left out. Must not throw.
   */
  readonly onChained?: (events: readonly AuditEvent[]) => void;
}

/**
 * The audit ledger over a store: the one place audit events are appended and chained. It decides,
 * per transaction and tenant, whether to chain at the commit or queue, runs the chaining passes
 * that move queued events into the chain (one shared pass per tenant at a time in this process),
 * and hands its callers chained events only. `docs/design.md` ("The audit chain") describes the
 * window between a queued event's commit and its pass, and what holds within it.
 *
 * @example
 * const ledger = new AuditLedger(store, auditChainer(sealKey));
 * await ledger.transaction(async (tx, audit) => {
 *   await tx.insertProposal(record);
 *   audit.append({ ...draft, id: newId('evt') });
 * }, { onChained: (events) => console.log(events[0]?.seq) });
 */
export class AuditLedger {
  readonly #store: Store;
  readonly #chainer: AuditChainer;
  readonly #state: LedgerState;

  constructor(store: Store, chainer: AuditChainer) {
    this.#store = store;
    this.#chainer = chainer;
    this.#state = ledgerState(store);
  }

  /**
   * Runs `fn` in one store transaction with an {@link AuditAppender}; its events are chained at the
   * commit or queued with it and chained right after (see {@link LedgerTransactionOptions}).
   * Throws `CorruptAuditChainError`, rolled back, when the chain's next place holds an event the
   * ledger did not write.
   */
  async transaction<T>(
    fn: (tx: StoreTransaction, audit: AuditAppender) => Promise<T>,
    options: LedgerTransactionOptions = {},
  ): Promise<T> {
    let committed: TransactionAppends | undefined;
    const tries: TransactionAppends[] = [];
    const result = await this.#store
      .transaction(async (tx) => {
        // A store may run `fn` again (a deadlock): only the committed run's events count.
        const appends = new TransactionAppends(tx, this.#chainer, this.#state);
        tries.push(appends);
        const value = await fn(tx, appends);
        await appends.beforeCommit();
        committed = appends;
        return value;
      })
      .finally(() => {
        // After COMMIT (or ROLLBACK): until then the heads stay locked.
        for (const appends of tries) appends.leaveHeads();
      });
    const appends = committed;
    if (appends === undefined || appends.appended.length === 0) return result;
    const report = (later: ReadonlyMap<string, AuditEvent>) => {
      if (options.onChained === undefined) return;
      const events: AuditEvent[] = [];
      for (const { id } of appends.appended) {
        const event = appends.chained.get(id) ?? later.get(id);
        if (event !== undefined) events.push(event);
      }
      try {
        options.onChained(events);
      } catch {
        // Documented as never throwing; a caller's bug must not fail a committed transaction.
      }
    };
    if (appends.queued.length === 0) {
      report(new Map());
      return result;
    }
    const chaining = this.#chainAfterCommit(appends.queued).then(report);
    if (!options.chainInBackground) await chaining;
    else {
      // The caller goes on: its events are committed in the queue, and this pass (or whoever takes
      // the head first) chains them, then reports them. The store's reads and close() wait for it.
      this.#store.finishBeforeReads?.(chaining);
    }
    return result;
  }

  /**
   * Chains every audit event still queued, of one tenant or of all: what a crash between a commit
   * and its chaining left behind. Returns how many were chained. Queued events the chainer refuses
   * (a seal its key did not make) stay queued, and so does a tenant's whole queue while its chain
   * holds an event the ledger did not write where the next one goes.
   */
  async chainQueued(options: { readonly tenant?: string } = {}): Promise<number> {
    const tenants =
      options.tenant !== undefined
        ? [options.tenant]
        : await this.#store.read((reader) => reader.queuedAuditTenants());
    let count = 0;
    for (const tenant of tenants) {
      try {
        count += (await this.#chainTenant(tenant)).size;
      } catch (error) {
        // The tenant's next place holds an event the ledger did not write: its queue waits, like
        // a queued row the key did not seal, until an operator repairs the chain.
        if (!(error instanceof CorruptAuditChainError)) throw error;
      }
    }
    return count;
  }

  /**
   * Chains what a committed transaction queued and returns those events as chained, by id.
   * Another transaction may chain them first (it drains the queue when it takes the head): then
   * they are read back. If chaining fails here the events stay queued, committed, for the next
   * transaction that takes the head or `chainQueued`, and are missing from the answer; the
   * caller's commit stands either way.
   */
  async #chainAfterCommit(queued: readonly PendingAuditEvent[]): Promise<Map<string, AuditEvent>> {
    const found = new Map<string, AuditEvent>();
    try {
      const byTenant = new Map<string, PendingAuditEvent[]>();
      for (const event of queued) byTenant.set(event.tenant, [...(byTenant.get(event.tenant) ?? []), event]);
      for (const [tenant, mine] of byTenant) {
        const take = (chained: ReadonlyMap<string, AuditEvent> | undefined) => {
          for (const { id } of mine) {
            const event = chained?.get(id);
            if (event !== undefined) found.set(id, event);
          }
        };
        const missing = () => mine.filter(({ id }) => !found.has(id)).map(({ id }) => id);
        // A pass already running may have read the queue after this commit: wait for it first.
        take(await this.#state.passes.get(tenant)?.running?.catch(() => undefined));
        if (missing().length > 0) take(await this.#pass(tenant));
        if (missing().length === 0) continue;
        // In a transaction, not a read: the store's reads wait for this very chaining to finish.
        const events = await this.#store.transaction((tx) => tx.getAuditEvents(tenant, missing()));
        for (const event of events) found.set(event.id, event);
      }
    } catch {
      // Committed and queued: chained later (see above). Nothing the caller did is undone.
    }
    return found;
  }

  /**
   * A chaining pass for a tenant, shared by this store's callers: while one runs, later callers
   * wait for the next (the running one may have read the queue before their commit), and every
   * caller arriving meanwhile joins that same next pass. Under contention, one pass per batch.
   */
  #pass(tenant: string): Promise<Map<string, AuditEvent>> {
    const { passes } = this.#state;
    let slot = passes.get(tenant);
    if (slot === undefined) {
      slot = { running: undefined, next: undefined };
      passes.set(tenant, slot);
    }
    const s = slot;
    if (s.next) return s.next;
    const run = () => {
      const pass = this.#chainTenant(tenant);
      s.running = pass;
      const done = () => {
        if (s.running === pass) s.running = undefined;
        if (!s.running && !s.next) passes.delete(tenant);
      };
      pass.then(done, done);
      return pass;
    };
    if (!s.running) return run();
    s.next = s.running
      .catch(() => undefined)
      .then(() => {
        s.next = undefined;
        return run();
      });
    return s.next;
  }

  /** One chaining transaction: takes the tenant's head (waiting for it) and chains its queue. */
  async #chainTenant(tenant: string): Promise<Map<string, AuditEvent>> {
    enterHead(this.#state, tenant);
    try {
      return await this.#store.transaction(async (tx) => {
        const taken = await tx.takeAuditHead(tenant, 'pass');
        if (!taken?.waiting) return new Map<string, AuditEvent>();
        return (await drainQueue(tx, tenant, taken.head, this.#chainer, PASS_READS)).chained;
      });
    } finally {
      leaveHead(this.#state, tenant);
    }
  }
}
