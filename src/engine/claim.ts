import type { ProposalRecord } from '../store/records.js';
import type { ApproveResult } from './approve.js';
import type { StepTransaction } from './audit-step.js';
import type { EngineContext } from './engine-context.js';
import { contractOf, type VerifiedParts } from './execution-contract.js';
import { idempotencyKeyOf, newId } from './ids.js';
import { leaseClock } from './attempt-lease.js';

/** Who claims, and on what authority: a human's approval (or the one completing a quorum), or a grant. */
export interface ClaimApproval {
  /** The principal whose approval claims (a grant's claim names the agent it approved for). */
  readonly actor: string;
  readonly kind: 'exact' | 'grant';
  readonly grantId?: string;
  /** The digest the approver saw (a grant's: the stored one). */
  readonly seenDigest: string;
  /** The editor's own approval, allowed by configuration: audited as such. */
  readonly byEditor?: boolean;
  /** The approval that completes a quorum names every approver it counted. */
  readonly quorum?: { readonly approvers: readonly string[]; readonly required: number };
  /** The stored arguments and scope as the integrity checks read them (not parsed again). */
  readonly verified?: VerifiedParts;
}

/**
 * Thrown by {@link claim} when its attempt cannot be inserted after the compare-and-set took the
 * proposal: the transaction rolls back, and {@link approve} finds out why.
 */
export class AttemptInsertFailed extends Error {
  readonly record: ProposalRecord;
  readonly attemptNumber: number;

  constructor(record: ProposalRecord, attemptNumber: number, cause: unknown) {
    super(`attempt ${attemptNumber} of ${record.id} could not be inserted`, { cause });
    this.record = record;
    this.attemptNumber = attemptNumber;
  }
}

/**
 * The compare-and-set from pending to executing, with the first attempt recorded (and its
 * idempotency key) before anything runs. Shared by human and grant approvals.
 */
export async function claim(
  ctx: EngineContext,
  t: StepTransaction,
  record: ProposalRecord,
  approval: ClaimApproval,
): Promise<ApproveResult> {
  const { actor, seenDigest, quorum, verified } = approval;
  const approvalKind = approval.kind;
  const grantId = approval.grantId ?? null;
  const byEditor = approval.byEditor === true;
  const { now } = t;
  const attemptNumber = record.currentAttempt + 1;
  // Read before the lease is written, so its age is never underestimated (see leaseMayHaveLapsed).
  const lease = leaseClock(ctx);
  const applied = await t.tx.updateProposal(
    record.tenant,
    record.id,
    { status: 'pending' },
    {
      status: 'executing',
      decidedBy: actor,
      decidedAt: now,
      approvalKind,
      grantId,
      currentAttempt: attemptNumber,
      updatedAt: now,
    },
  );
  if (!applied)
    return { kind: 'not_approvable', reason: 'replayed', message: 'another approval claimed it first' };
  const attemptId = newId('att');
  const idempotencyKey = idempotencyKeyOf(record.id, attemptNumber);
  try {
    await t.tx.insertAttempt({
      tenant: record.tenant,
      id: attemptId,
      proposalId: record.id,
      number: attemptNumber,
      idempotencyKey,
      status: 'executing',
      leaseUntil: now + ctx.leaseMs,
      commandId: null,
      startedAt: now,
      finishedAt: null,
    });
  } catch (error) {
    throw new AttemptInsertFailed(record, attemptNumber, error);
  }
  // Two literals rather than one base spread into each: in V8 a spread followed by more members
  // costs microseconds.
  await t.record({
    tenant: record.tenant,
    proposalId: record.id,
    operation: record.operation,
    proposedAt: record.createdAt,
    runId: record.runId,
    actor,
    step: 'approved',
    reason: approvalKind === 'grant' ? 'approved_by_grant' : 'approved',
    digests: { proposed: record.digest, seen: seenDigest, approved: record.digest },
    detail: {
      ...(grantId ? { grantId } : {}),
      // Audited whenever the editor's own approval was allowed by configuration.
      ...(byEditor ? { editorApproval: true } : {}),
      // The approval that completed a quorum names every approver it counted.
      ...(quorum ? { approvers: [...quorum.approvers], required: quorum.required } : {}),
    },
  });
  await t.record({
    tenant: record.tenant,
    proposalId: record.id,
    operation: record.operation,
    proposedAt: record.createdAt,
    runId: record.runId,
    actor,
    step: 'claimed',
    attemptId,
    digests: { approved: record.digest },
    detail: { attempt: attemptNumber },
  });
  // The row exactly as the compare-and-set above left it.
  const claimed: ProposalRecord = {
    ...record,
    status: 'executing',
    decidedBy: actor,
    decidedAt: now,
    approvalKind,
    grantId,
    currentAttempt: attemptNumber,
    updatedAt: now,
  };
  return {
    kind: 'claimed',
    contract: contractOf(record, { id: attemptId, number: attemptNumber, idempotencyKey }, verified, {
      record: claimed,
      lease,
    }),
  };
}
