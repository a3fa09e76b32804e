import type { OutboxRecord } from '../store/sql-outbox.js';

/**
 * What one delivery attempt came to. `failed` is tried again on the retry schedule; `skipped` ends
 * the delivery without sending (an email about a proposal that is no longer pending).
 */
export type SendResult =
  | { readonly kind: 'delivered' }
  | { readonly kind: 'skipped'; readonly note: string }
  | { readonly kind: 'failed'; readonly error: string };

/** Delivers one outbox row over one channel. Never throws for a receiver's failure: answers `failed`. */
export type ChannelSender = (delivery: OutboxRecord) => Promise<SendResult>;

/** The console's public URL, or a function giving it (known only once the server listens). */
export type PublicUrl = string | (() => string);

/** The approval link of a proposal on the console at `publicUrl`. */
export function approvalLink(publicUrl: PublicUrl, proposalId: string): string {
  const base = typeof publicUrl === 'function' ? publicUrl() : publicUrl;
  return `${base.replace(/\/+$/, '')}/proposals/${encodeURIComponent(proposalId)}`;
}

/** A short, single-line error text for the deliveries list (never a stack). */
export function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, ' ').slice(0, 300);
}
