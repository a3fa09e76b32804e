import type { AuditEvent } from '../audit/event.js';
import type { Store } from '../store/store.js';

/** One tenant's chaining passes in this process: the one running and the one callers wait to join. */
export interface PassSlot {
  running: Promise<Map<string, AuditEvent>> | undefined;
  next: Promise<Map<string, AuditEvent>> | undefined;
}

/**
 * What every ledger over one store shares in this process: who is at each tenant's chain head and
 * the passes under way. Kept per
 * store object, so two ledgers over one store (the engine's, the directory's) do not queue behind
 * each other's transactions as if they were another process.
 */
export interface LedgerState {
  /** This store's transactions and passes holding or waiting for each tenant's head. */
  readonly atHead: Map<string, number>;
  readonly passes: Map<string, PassSlot>;
}

const STATES = new WeakMap<Store, LedgerState>();

/** The shared ledger state of a store (made on first use). */
export function ledgerState(store: Store): LedgerState {
  let state = STATES.get(store);
  if (state === undefined) {
    state = { atHead: new Map(), passes: new Map() };
    STATES.set(store, state);
  }
  return state;
}

/** Counts one holder or waiter more at a tenant's head. */
export function enterHead(state: LedgerState, tenant: string): void {
  state.atHead.set(tenant, (state.atHead.get(tenant) ?? 0) + 1);
}

/** Counts one holder or waiter less at a tenant's head. */
export function leaveHead(state: LedgerState, tenant: string): void {
  const left = (state.atHead.get(tenant) ?? 1) - 1;
  if (left > 0) state.atHead.set(tenant, left);
  else state.atHead.delete(tenant);
}
