import { existsSync, readFileSync } from 'node:fs';

/** What the journaled fake payment provider heard, per proposal (from the idempotency keys `prp_….N`). */
export interface ProviderJournal {
  /** `pay` calls received, per proposal id. */
  readonly calls: ReadonlyMap<string, number>;
  /** Payments committed, per proposal id (each with its idempotency key). */
  readonly payments: ReadonlyMap<string, readonly string[]>;
  readonly totalCalls: number;
}

function proposalOf(key: string): string {
  return key.slice(0, key.lastIndexOf('.'));
}

/** Reads the provider journal written by `FakePaymentProvider({ journal })` across processes. */
export function readJournal(path: string): ProviderJournal {
  const calls = new Map<string, number>();
  const payments = new Map<string, string[]>();
  let totalCalls = 0;
  if (existsSync(path)) {
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      if (!line) continue;
      const entry = JSON.parse(line) as
        | { type: 'call'; key: string }
        | { type: 'payment'; payment: { idempotencyKey: string } };
      if (entry.type === 'call') {
        totalCalls++;
        const id = proposalOf(entry.key);
        calls.set(id, (calls.get(id) ?? 0) + 1);
      } else {
        const id = proposalOf(entry.payment.idempotencyKey);
        payments.set(id, [...(payments.get(id) ?? []), entry.payment.idempotencyKey]);
      }
    }
  }
  return { calls, payments, totalCalls };
}
