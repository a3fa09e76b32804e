import type { LocalTransaction } from '../operation/define-operation.js';
import { sql, valuesStatement } from '../sql/sql.js';
import type { StoreCapabilities, StoreTransaction } from './store.js';

/** Where a notification can go. */
export type NotificationChannel = 'webhook' | 'email' | 'slack';

/**
 * Where one delivery is: waiting (or being tried), delivered, skipped (nothing to send any more),
 * or dead (given up after its retry budget).
 */
export type DeliveryStatus = 'pending' | 'delivered' | 'skipped' | 'dead';

/**
 * One delivery of one lifecycle event to one channel, written in the transaction of the step that
 * caused the event. `eventId` is the same for every channel and every retry (the `webhook-id`).
 */
export interface OutboxRecord {
  readonly tenant: string;
  /** `dlv_…`, the delivery (one per event and channel). */
  readonly id: string;
  readonly eventId: string;
  readonly channel: NotificationChannel;
  /** `proposal.created`, `proposal.approval_given`, `proposal.decided` or `proposal.outcome`. */
  readonly type: string;
  readonly proposalId: string;
  /** Canonical JSON of the payload as written (without the approval URL, built at delivery). */
  readonly payloadJson: string;
  readonly status: DeliveryStatus;
  /** Attempts finished so far (successful or not). */
  readonly attempts: number;
  /** Not tried before this time. */
  readonly nextAt: number;
  /** While a dispatcher holds it: until when (another may claim it after). */
  readonly leaseUntil: number | null;
  readonly leaseOwner: string | null;
  readonly lastError: string | null;
  readonly lastAttemptAt: number | null;
  readonly deliveredAt: number | null;
  /** The retry budget counts from here: the event's time, or the last manual redelivery. */
  readonly retryFrom: number;
  readonly createdAt: number;
  /**
   * HMAC-SHA-256 with the server's seal key of what the row sends and to whom (see
   * `deliverySealed`), or null without a key. Written once: retries and redeliveries keep it. With a
   * key, the dispatcher sends no row whose seal does not verify.
   */
  readonly seal: string | null;
}

const COLUMNS = [
  ['tenant', 'tenant'],
  ['id', 'id'],
  ['eventId', 'event_id'],
  ['channel', 'channel'],
  ['type', 'type'],
  ['proposalId', 'proposal_id'],
  ['payloadJson', 'payload_json'],
  ['status', 'status'],
  ['attempts', 'attempts'],
  ['nextAt', 'next_at'],
  ['leaseUntil', 'lease_until'],
  ['leaseOwner', 'lease_owner'],
  ['lastError', 'last_error'],
  ['lastAttemptAt', 'last_attempt_at'],
  ['deliveredAt', 'delivered_at'],
  ['retryFrom', 'retry_from'],
  ['createdAt', 'created_at'],
  ['seal', 'seal'],
] as const;

const NUMBERS = new Set([
  'attempts',
  'nextAt',
  'leaseUntil',
  'lastAttemptAt',
  'deliveredAt',
  'retryFrom',
  'createdAt',
]);

function fromRow(row: Record<string, unknown>): OutboxRecord {
  const out: Record<string, unknown> = {};
  for (const [field, column] of COLUMNS) {
    const value = row[column] ?? null;
    // PostgreSQL returns BIGINT as text.
    out[field] = value !== null && NUMBERS.has(field) ? Number(value) : value;
  }
  return out as unknown as OutboxRecord;
}

const INSERT = valuesStatement(
  `INSERT INTO countersign_outbox (${COLUMNS.map(([, c]) => c).join(', ')}) VALUES (`,
  COLUMNS.length,
  ')',
);
const due = (now: number) =>
  sql`status = 'pending' AND next_at <= ${now} AND (lease_until IS NULL OR lease_until <= ${now})`;
const byId = (tenant: unknown, id: unknown) =>
  sql`SELECT * FROM countersign_outbox WHERE tenant = ${tenant} AND id = ${id}`;

/** How a tenant's deliveries are listed: newest first, optionally one status, paged by position. */
export interface OutboxQuery {
  readonly status?: DeliveryStatus;
  readonly limit: number;
  readonly before?: { readonly createdAt: number; readonly id: string };
}

/** What one finished attempt sets. */
export interface AttemptResult {
  readonly status: DeliveryStatus;
  readonly nextAt: number;
  readonly lastError: string | null;
  readonly at: number;
}

/**
 * The outbox statements, run through a store transaction's `local` SQL (the `sql` tag), so
 * SQLite and PostgreSQL run the same statements. Every statement names its tenant except the claim,
 * the resume and the prune, which (like the expiry sweep) serve every tenant.
 */
export interface Outbox {
  insert(record: OutboxRecord): Promise<void>;
  get(tenant: string, id: string): Promise<OutboxRecord | undefined>;
  list(tenant: string, query: OutboxQuery): Promise<OutboxRecord[]>;
  /**
   * Leases up to `limit` due deliveries to `owner` until `leaseUntil`, oldest due first. Each
   * lease is a compare-and-set on the due condition, so two dispatchers never hold one delivery at
   * once; one whose lease ended (its dispatcher was killed) is due again.
   */
  claim(claim: {
    readonly now: number;
    readonly leaseUntil: number;
    readonly owner: string;
    readonly limit: number;
  }): Promise<OutboxRecord[]>;
  /** Records an attempt's result; applies only while `owner` still holds the lease. */
  finish(tenant: string, id: string, owner: string, result: AttemptResult): Promise<boolean>;
  /**
   * Makes every waiting retry of `channel` (in every tenant, like the claim: a channel's endpoint
   * is the server's) due at `now`: called when the endpoint answers again, so a backlog left by an
   * outage is sent at once instead of on its retry schedule (up to an hour later). Deliveries held
   * by a dispatcher are left alone; attempts and the retry budget are unchanged. Returns how many.
   */
  resume(channel: NotificationChannel, now: number): Promise<number>;
  /** Queues a finished (delivered, skipped or dead) delivery again, due at `now` with a fresh retry budget (same event id). */
  redeliver(tenant: string, id: string, now: number): Promise<boolean>;
  /**
   * Deletes up to `limit` finished (delivered, skipped or dead) deliveries of every tenant whose
   * event (or last manual redelivery) is older than `before`, oldest first; returns how many. A
   * pending delivery is never deleted, however old.
   */
  prune(before: number, limit: number): Promise<number>;
}

/**
 * The outbox of one store transaction. With `skipLocked` (the store's capability flag), concurrent
 * claimers skip each other's candidate rows instead of waiting on them.
 */
export function outboxOf(
  tx: Pick<StoreTransaction, 'local'>,
  capabilities: Pick<StoreCapabilities, 'skipLocked'>,
): Outbox {
  const local: LocalTransaction = tx.local;
  const lock = capabilities.skipLocked === true ? sql.raw(' FOR UPDATE SKIP LOCKED') : sql.empty;
  return {
    insert: async (record) => {
      const r = record as unknown as Record<string, unknown>;
      await local.run(INSERT(COLUMNS.map(([field]) => r[field] ?? null)));
    },
    get: async (tenant, id) => {
      const rows = await local.all(byId(tenant, id));
      return rows[0] ? fromRow(rows[0]) : undefined;
    },
    list: async (tenant, query) => {
      const where = [sql`tenant = ${tenant}`];
      if (query.status) where.push(sql`status = ${query.status}`);
      if (query.before) {
        const { createdAt, id } = query.before;
        where.push(sql`(created_at < ${createdAt} OR (created_at = ${createdAt} AND id < ${id}))`);
      }
      const rows = await local.all(
        sql`SELECT * FROM countersign_outbox WHERE ${sql.join(where, ' AND ')} ORDER BY created_at DESC, id DESC LIMIT ${query.limit}`,
      );
      return rows.map(fromRow);
    },
    claim: async ({ now, leaseUntil, owner, limit }) => {
      const candidates = await local.all(
        sql`SELECT tenant, id FROM countersign_outbox WHERE ${due(now)} ORDER BY next_at, id LIMIT ${limit}${lock}`,
      );
      const claimed: OutboxRecord[] = [];
      for (const c of candidates) {
        const { changes } = await local.run(
          sql`UPDATE countersign_outbox SET lease_until = ${leaseUntil}, lease_owner = ${owner} WHERE tenant = ${c['tenant']} AND id = ${c['id']} AND ${due(now)}`,
        );
        if (changes !== 1) continue;
        const rows = await local.all(byId(c['tenant'], c['id']));
        if (rows[0]) claimed.push(fromRow(rows[0]));
      }
      return claimed;
    },
    finish: async (tenant, id, owner, result) => {
      const delivered = result.status === 'delivered' ? result.at : null;
      const { changes } = await local.run(
        sql`UPDATE countersign_outbox SET status = ${result.status}, attempts = attempts + 1, next_at = ${result.nextAt}, last_error = ${result.lastError}, last_attempt_at = ${result.at}, delivered_at = ${delivered}, lease_until = NULL, lease_owner = NULL WHERE tenant = ${tenant} AND id = ${id} AND lease_owner = ${owner} AND status = 'pending'`,
      );
      return changes === 1;
    },
    resume: async (channel, now) => {
      const { changes } = await local.run(
        sql`UPDATE countersign_outbox SET next_at = ${now} WHERE status = 'pending' AND next_at > ${now} AND channel = ${channel} AND attempts > 0 AND (lease_until IS NULL OR lease_until <= ${now})`,
      );
      return changes;
    },
    redeliver: async (tenant, id, now) => {
      const { changes } = await local.run(
        sql`UPDATE countersign_outbox SET status = 'pending', next_at = ${now}, retry_from = ${now}, attempts = 0, lease_until = NULL, lease_owner = NULL, delivered_at = NULL WHERE tenant = ${tenant} AND id = ${id} AND status <> 'pending'`,
      );
      return changes === 1;
    },
    prune: async (before, limit) => {
      const { changes } = await local.run(
        sql`DELETE FROM countersign_outbox WHERE (tenant, id) IN (SELECT tenant, id FROM countersign_outbox WHERE status <> 'pending' AND retry_from < ${before} ORDER BY retry_from LIMIT ${limit})`,
      );
      return changes;
    },
  };
}
