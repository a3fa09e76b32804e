import type { OutboxRecord } from '../store/sql-outbox.js';
import type { DeliveryError } from './delivery-error.js';

/**
 * What one delivery attempt came to. `failed` is tried again on the retry schedule; `skipped` ends
 * the delivery without sending (`not_pending`: an email about a proposal no longer pending;
 * `no_message`: a Slack update of a proposal that was never posted, as it was decided first). The
 * delivery's `lastError` is stored from the code, never from a message.
 */
export type SendResult =
  | { readonly kind: 'delivered' }
  | { readonly kind: 'skipped'; readonly reason: 'not_pending' | 'no_message' }
  | { readonly kind: 'failed'; readonly error: DeliveryError };

/** Delivers one outbox row over one channel. Never throws for a receiver's failure: answers `failed`. */
export type ChannelSender = (delivery: OutboxRecord) => Promise<SendResult>;

/** The console's public URL, or a function giving it (known only once the server listens). */
export type PublicUrl = string | (() => string);

/** The approval link of a proposal on the console at `publicUrl`. */
export function approvalLink(publicUrl: PublicUrl, proposalId: string): string {
  const base = typeof publicUrl === 'function' ? publicUrl() : publicUrl;
  return `${base.replace(/\/+$/, '')}/proposals/${encodeURIComponent(proposalId)}`;
}
