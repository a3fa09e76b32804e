/**
 * Reason codes: stable strings, part of the public contract. Every refusal names exactly one.
 * @see DESIGN.md "Reason codes"
 */
export const REASONS = [
  'approved',
  'approved_by_grant',
  'not_found',
  'forbidden',
  'expired',
  'declined',
  'superseded',
  'stale_view',
  'replayed',
  'scope_mismatch',
  'invalid_request',
  'invalid_requested_scope',
  'corrupt_approval_record',
  'unsupported_scope_version',
  'run_id_missing',
  'run_mismatch',
  'revision_required',
  'grant_exhausted',
  'grant_revoked',
  'outside_grant',
  'invalid_digest',
  'resource_mismatch',
  'section_mismatch',
  'separation_of_duties',
  'rate_limited',
  'already_approved',
] as const;

/** One of the stable reason codes in {@link REASONS}. */
export type Reason = (typeof REASONS)[number];

/** A reason that refuses: every reason except the two approvals. */
export type DenialReason = Exclude<Reason, 'approved' | 'approved_by_grant'>;

/** True when `value` is one of the stable reason codes. */
export function isReason(value: unknown): value is Reason {
  return typeof value === 'string' && (REASONS as readonly string[]).includes(value);
}
