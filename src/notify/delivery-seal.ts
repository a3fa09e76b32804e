import { CanonicalizationError, ConfigurationError } from '../canonical/errors.js';
import { MIN_SEAL_KEY_BYTES, seal, verifySeal } from '../canonical/seal.js';
import type { OutboxRecord } from '../store/sql-outbox.js';

/**
 * The columns of a delivery that decide what is sent and to whom: the tenant (whose approvers are
 * mailed), the delivery and event ids (`webhook-id`), the channel, the event type, the proposal
 * (the approval link) and the payload, and when it was written. Status, attempts, leases and
 * errors change on every attempt and are not sealed.
 */
export type SealedDelivery = Pick<
  OutboxRecord,
  'tenant' | 'id' | 'eventId' | 'channel' | 'type' | 'proposalId' | 'payloadJson' | 'createdAt'
>;

/**
 * Why a delivery's seal does not verify: it has none, or it is not this key's seal of this row.
 * The reason is what a refused delivery's `lastError` says.
 */
export type DeliverySealCheck =
  | { readonly kind: 'intact' }
  | { readonly kind: 'refused'; readonly reason: 'unsealed' | 'seal_mismatch' };

/** The sealed fields of a delivery, and nothing else (so an unsealed column cannot sway it). */
export function deliverySealed(record: SealedDelivery): SealedDelivery {
  return {
    tenant: record.tenant,
    id: record.id,
    eventId: record.eventId,
    channel: record.channel,
    type: record.type,
    proposalId: record.proposalId,
    payloadJson: record.payloadJson,
    createdAt: record.createdAt,
  };
}

// The one top-level key keeps a delivery's seal apart from every other record the key seals
// (proposals, approvals, grants): no other seal can be passed off as a delivery's.
const sealedValue = (record: SealedDelivery) => ({ notificationDelivery: deliverySealed(record) });

/**
 * Checks a seal key for the outbox as the engine does: at least 32 bytes.
 *
 * @throws {ConfigurationError} when it is shorter.
 */
export function checkDeliverySealKey(key: string | Uint8Array): void {
  const bytes = typeof key === 'string' ? Buffer.byteLength(key, 'utf8') : key.length;
  if (bytes < MIN_SEAL_KEY_BYTES)
    throw new ConfigurationError(`sealKey: must be at least ${MIN_SEAL_KEY_BYTES} bytes`);
}

/**
 * Seals one delivery with the server key: HMAC-SHA-256 (the engine's `seal`) over
 * the RFC 8785 canonical JSON of `{ notificationDelivery: … }` holding its {@link SealedDelivery}
 * fields. The outbox writer stores it beside the row, in the step's transaction; a database writer
 * without the key cannot make one for a row it inserts or edits, so the webhook secret never signs
 * a forged event.
 *
 * @throws {ConfigurationError} when the key is shorter than 32 bytes.
 *
 * @example
 * const stamp = sealDelivery(row, process.env.COUNTERSIGN_SEAL_KEY!);
 * checkDeliverySeal({ ...row, seal: stamp }, key); // { kind: 'intact' }
 */
export function sealDelivery(record: SealedDelivery, key: string | Uint8Array): string {
  return seal(sealedValue(record), key);
}

/**
 * Whether a delivery read from the outbox was sealed by this key as it is now (constant-time
 * compare). A row without a seal (inserted by hand, or written before store migration 16 or
 * without a key) is `unsealed`; a seal that does not match its columns (payload edited, seal
 * copied from another row, another key) is `seal_mismatch`. Neither may be sent.
 *
 * @throws {ConfigurationError} when the key is shorter than 32 bytes.
 */
export function checkDeliverySeal(
  record: SealedDelivery & { readonly seal: string | null },
  key: string | Uint8Array,
): DeliverySealCheck {
  if (record.seal === null || record.seal === '') return { kind: 'refused', reason: 'unsealed' };
  return sealMatches(record, key, record.seal)
    ? { kind: 'intact' }
    : { kind: 'refused', reason: 'seal_mismatch' };
}

// A column a database writer filled with what no sealed row holds (a creation time that is not a
// number) cannot be canonicalized: it does not match, rather than failing every dispatch of it.
function sealMatches(record: SealedDelivery, key: string | Uint8Array, stamp: string): boolean {
  try {
    return verifySeal(sealedValue(record), key, stamp);
  } catch (error) {
    if (error instanceof CanonicalizationError) return false;
    throw error;
  }
}
