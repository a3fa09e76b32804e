/**
 * The audit ledger: appends audit events, chains them (at the commit, or queued and chained by a
 * pass right after), and hands out chained events only. The store beneath it is plain storage.
 *
 * @packageDocumentation
 */
export { AuditLedger, type LedgerTransactionOptions } from './audit-ledger.js';
export type { AuditAppender } from './transaction-appends.js';
