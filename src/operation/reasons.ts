/**
 * Reason codes: stable strings, part of the public contract. Every refusal names exactly one.
 * @see docs/design.md "Reason codes"
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
  'corrupt_audit_chain',
  'unsupported_scope_version',
  'unknown_operation',
  'reconcile_unsupported',
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
  'recovering',
] as const;

/** One of the stable reason codes in {@link REASONS}. */
export type Reason = (typeof REASONS)[number];

/**
 * What each reason code means — one thing each. The README, docs/design.md and the OpenAPI document
 * list the same codes; a code is never reused for a second meaning.
 */
export const REASON_DESCRIPTIONS: Readonly<Record<Reason, string>> = {
  approved: 'an operator approved exactly this contract',
  approved_by_grant: 'a live grant covered the proposal and approved it without a human',
  not_found: 'no such proposal, grant or attempt in this tenant',
  forbidden: 'the actor may not take this action (role, tenant, policy, or a route to another group)',
  expired: 'the proposal or approval window has passed',
  declined: 'an operator declined the proposal',
  superseded: 'an edit replaced the proposal with a new revision',
  stale_view: 'the approver saw a different contract than the one stored now',
  replayed: 'the proposal has already been decided or executed; the stored outcome stands',
  scope_mismatch: 'the requested execution differs from the approved scope',
  invalid_request: 'the proposal request does not parse through the operation',
  invalid_requested_scope: 'the scope requested at execution is not a valid scope of the operation',
  corrupt_approval_record:
    'the stored proposal, approval or grant does not match its digest, seal, schema or audit',
  corrupt_audit_chain:
    "the tenant's audit chain holds an event the engine did not write; nothing is recorded or executed until an operator repairs it",
  unsupported_scope_version: 'the operation no longer supports the scope version the proposal was made with',
  unknown_operation: 'the proposal names an operation this engine has not registered',
  reconcile_unsupported: 'the operation defines no reconcile step, so this engine cannot close the attempt',
  run_id_missing: 'the proposal names no agent run',
  run_mismatch: 'the approval link or call belongs to another agent run',
  revision_required: 'revalidation found the world changed; a new proposal is needed',
  grant_exhausted: 'the grant has no uses or amount left',
  grant_revoked: 'the grant was revoked',
  outside_grant: 'the proposal falls outside every live grant',
  invalid_digest: 'the digest sent with the decision is not a well-formed digest',
  resource_mismatch: 'the decision names another resource than the proposal',
  section_mismatch: 'the decision names another section than the proposal',
  separation_of_duties: 'the proposer or editor of a proposal may not approve it',
  rate_limited: 'a proposal quota is used up; retry after the stated time',
  already_approved: 'this operator already approved this proposal; another approver is needed',
  recovering:
    "the proposal is approved, but its attempt's worker stopped (its lease ended) and the next recovery sweep takes it over; retry after the stated time",
};

/** A reason that refuses: every reason except the two approvals. */
export type DenialReason = Exclude<Reason, 'approved' | 'approved_by_grant'>;

/** True when `value` is one of the stable reason codes. */
export function isReason(value: unknown): value is Reason {
  return typeof value === 'string' && (REASONS as readonly string[]).includes(value);
}
