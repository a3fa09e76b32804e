import type { AuditChainer } from '../audit/chain.js';
import type { AuditEvent, ChainHead } from '../audit/event.js';
import { CorruptAuditChainError } from '../store/store-errors.js';
import type { StoreTransaction } from '../store/store.js';

/** Queued events chained per statement round: bounds one chaining transaction's reads. */
export const CHAIN_BATCH = 500;

/**
 * Chains what waits in a tenant's queue onto `head`, which `tx` has taken: every event committed
 * by then, in queue order, a few statements for a batch of any size. Each read is a fresh snapshot
 * of what waits, oldest first, so an event that committed late with an older place in the queue is
 * still chained before any that depended on it. Reads again while it finds events, at most `reads`
 * times (more while batches are full): what commits meanwhile is chained too, and its callers need
 * not wait for another pass. Returns the new head and the events chained, by id.
 *
 * A row the key did not seal was written by hand, and a copy of a row already chained was inserted
 * again: neither is ever chained (so never sealed by the server); both stay queued, where
 * `verifyAudit` names them. Throws `CorruptAuditChainError` when a place the batch needs holds an
 * event the ledger did not write: the transaction rolls back and the batch stays queued.
 */
export async function drainQueue(
  tx: StoreTransaction,
  tenant: string,
  start: ChainHead | undefined,
  chainer: AuditChainer,
  reads: number,
): Promise<{ readonly head: ChainHead | undefined; readonly chained: Map<string, AuditEvent> }> {
  const chained = new Map<string, AuditEvent>();
  const refused = new Set<number>();
  let head = start;
  let rows = await tx.readAuditQueue(tenant, CHAIN_BATCH);
  for (let read = 1; ; read++) {
    const taken: number[] = [];
    const events: AuditEvent[] = [];
    for (const entry of rows) {
      if (refused.has(entry.n)) continue;
      if (entry.replayed || !chainer.acceptsQueued(entry.event, entry.seal)) {
        refused.add(entry.n);
        continue;
      }
      const linked = chainer.link(head, entry.event);
      head = { seq: linked.seq, chainHash: linked.chainHash };
      taken.push(entry.n);
      events.push(linked);
      chained.set(linked.id, linked);
    }
    if (events.length === 0 || head === undefined) break;
    const again = events.length >= CHAIN_BATCH || read < reads;
    const { written, next } = await tx.writeChainedAudit(tenant, {
      events,
      head,
      dequeue: taken,
      ...(again ? { readNext: CHAIN_BATCH + refused.size } : {}),
    });
    if (written !== events.length) throw new CorruptAuditChainError(tenant, events[0]!.seq);
    if (!again) break;
    rows = next;
  }
  return { head, chained };
}
