import type { AuditChainer } from '../audit/chain.js';
import type { AuditEvent, PendingAuditEvent } from '../audit/event.js';
import { CorruptAuditChainError } from '../store/store-errors.js';
import type { QueuedAuditRow, StoreTransaction } from '../store/store.js';
import { CHAIN_BATCH, drainQueue } from './drain-queue.js';
import { enterHead, type LedgerState, leaveHead } from './ledger-state.js';

/** Appends audit events inside one ledger transaction (see `AuditLedger.transaction`). */
export interface AuditAppender {
  /**
   * Appends one event to its tenant's chain: chained just before the transaction commits, or
   * queued with it and chained right after. It commits or rolls back with the transaction.
   */
  append(event: PendingAuditEvent): void;
}

/**
 * The audit events of one store transaction, kept until just before its COMMIT. Then, for each
 * tenant, if the tenant's chain head is free (no other transaction of this process at it, and
 * `SKIP LOCKED` takes it), they are chained onto it, with whatever waits in the queue first, and
 * written with the new head: the head is held only for that last statement and the COMMIT, never
 * while the transaction does its work. Otherwise they are queued with their seals, to be chained
 * by a pass after the commit. Where the whole database is locked for writing (SQLite) the head is
 * always free: events are chained in their transaction.
 */
export class TransactionAppends implements AuditAppender {
  readonly #tx: StoreTransaction;
  readonly #chainer: AuditChainer;
  readonly #state: LedgerState;
  readonly #pending = new Map<string, PendingAuditEvent[]>();
  readonly #entered: string[] = [];
  /** The events appended, in order. */
  readonly appended: PendingAuditEvent[] = [];
  /** The events this transaction chained itself, by id. */
  readonly chained = new Map<string, AuditEvent>();
  /** The events it queued, to be chained after its commit. */
  readonly queued: PendingAuditEvent[] = [];

  constructor(tx: StoreTransaction, chainer: AuditChainer, state: LedgerState) {
    this.#tx = tx;
    this.#chainer = chainer;
    this.#state = state;
  }

  append(event: PendingAuditEvent): void {
    this.appended.push(event);
    const pending = this.#pending.get(event.tenant);
    if (pending) pending.push(event);
    else this.#pending.set(event.tenant, [event]);
  }

  /** Chains or queues every tenant's events: the transaction's last statements before COMMIT. */
  async beforeCommit(): Promise<void> {
    const queue: QueuedAuditRow[] = [];
    for (const [tenant, events] of this.#pending) {
      if (await this.#chainAtHead(tenant, events)) continue;
      for (const event of events) {
        queue.push({ event, seal: this.#chainer.queueSeal(event) });
        this.queued.push(event);
      }
    }
    this.#pending.clear();
    // One statement for every queued event; refused here when the chain holds a foreign event.
    await this.#tx.enqueueAudit(queue);
  }

  /** Ends this transaction's part at its tenants' heads (after COMMIT or ROLLBACK). */
  leaveHeads(): void {
    for (const tenant of this.#entered.splice(0)) leaveHead(this.#state, tenant);
  }

  /**
   * Takes the tenant's head if it is free and chains the events onto it, what waits in the queue
   * first (so the chain keeps the order things happened in). False when the head is held: queuing
   * costs one statement and no wait, while waiting for the head would serialize the tenant's commits.
   */
  async #chainAtHead(tenant: string, events: readonly PendingAuditEvent[]): Promise<boolean> {
    if (this.#state.atHead.has(tenant)) return false;
    enterHead(this.#state, tenant);
    this.#entered.push(tenant);
    const taken = await this.#tx.takeAuditHead(tenant, 'skip');
    if (taken === undefined) {
      // Held by another process, or the tenant's first event, whose head a pass creates.
      this.#entered.pop();
      leaveHead(this.#state, tenant);
      return false;
    }
    let head = taken.head;
    if (taken.waiting) head = (await drainQueue(this.#tx, tenant, head, this.#chainer, 1)).head;
    const linked = events.map((event) => {
      const chained = this.#chainer.link(head, event);
      head = { seq: chained.seq, chainHash: chained.chainHash };
      return chained;
    });
    // Written with the head in one statement (a transaction's few events), or per batch of many.
    for (let start = 0; start < linked.length; start += CHAIN_BATCH) {
      const batch = linked.slice(start, start + CHAIN_BATCH);
      const last = batch[batch.length - 1]!;
      const end = { seq: last.seq, chainHash: last.chainHash };
      const { written } = await this.#tx.writeChainedAudit(tenant, { events: batch, head: end, dequeue: [] });
      // Thrown, the transaction rolls back: a place it needed holds an event the ledger did not write.
      if (written !== batch.length) throw new CorruptAuditChainError(tenant, batch[0]!.seq);
    }
    for (const event of linked) this.chained.set(event.id, event);
    return true;
  }
}
