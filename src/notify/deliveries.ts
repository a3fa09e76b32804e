import type { Clock } from '../engine/engine-context.js';
import { type DeliveryStatus, type OutboxQuery, type OutboxRecord, outboxOf } from '../store/sql-outbox.js';
import type { Store } from '../store/store.js';

/** A delivery as an admin sees it: where it stands, never its payload. */
export interface DeliveryView {
  readonly id: string;
  readonly eventId: string;
  readonly channel: string;
  readonly type: string;
  readonly proposalId: string;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly lastError: string | null;
  readonly lastAttemptAt: string | null;
  readonly nextAttemptAt: string | null;
  readonly deliveredAt: string | null;
  readonly createdAt: string;
}

/** What an admin may do with a tenant's deliveries. */
export interface DeliveryAdmin {
  list(tenant: string, query: OutboxQuery): Promise<readonly DeliveryView[]>;
  /** `redelivered`, or why not: no such delivery of this tenant, or it is still pending. */
  redeliver(tenant: string, id: string): Promise<'redelivered' | 'not_found' | 'pending'>;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The admin view of one outbox row. */
export function deliveryView(r: OutboxRecord): DeliveryView {
  return {
    id: r.id,
    eventId: r.eventId,
    channel: r.channel,
    type: r.type,
    proposalId: r.proposalId,
    status: r.status,
    attempts: r.attempts,
    lastError: r.lastError,
    lastAttemptAt: iso(r.lastAttemptAt),
    nextAttemptAt: r.status === 'pending' ? iso(r.nextAt) : null,
    deliveredAt: iso(r.deliveredAt),
    createdAt: iso(r.createdAt) ?? '',
  };
}

/** Deliveries of a store, tenant by tenant. */
export function deliveryAdmin(store: Store, clock: Clock = { now: () => Date.now() }): DeliveryAdmin {
  const { capabilities } = store;
  return {
    list: async (tenant, query) =>
      (await store.transaction((tx) => outboxOf(tx, capabilities).list(tenant, query))).map(deliveryView),
    redeliver: (tenant, id) =>
      store.transaction(async (tx) => {
        const outbox = outboxOf(tx, capabilities);
        const found = await outbox.get(tenant, id);
        if (!found) return 'not_found';
        return (await outbox.redeliver(tenant, id, clock.now())) ? 'redelivered' : 'pending';
      }),
  };
}
