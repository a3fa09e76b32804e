import { canonicalize } from '../canonical/canonicalize.js';
import { parseStoredJson } from '../canonical/stored-json.js';
import { isSha256Hex } from '../canonical/digest.js';
import type { DeepReadonly } from '../canonical/freeze.js';
import { seal, verifySeal } from '../canonical/seal.js';
import type { Actor } from '../operation/actor.js';
import type { AnyOperation } from '../operation/define-operation.js';
import type { Outcome } from '../operation/outcome.js';
import type { DenialReason } from '../operation/reasons.js';
import { canonicalScope } from '../operation/scope.js';
import { decodeProposalRecord } from '../store/proposal-format.js';
import type { ApprovalRecord, ProposalRecord } from '../store/records.js';
import { inTransaction, type StepTransaction } from './audit-step.js';
import { refusingCorruptChain } from './corrupt-audit-chain.js';
import { approvalRight } from './decision-right.js';
import { routeOf } from './routing.js';
import type { EngineContext } from './engine-context.js';
import { AttemptInsertFailed, claim } from './claim.js';
import type { VerifiedParts } from './execution-contract.js';
import { expireRecord } from './expire.js';
import { withdrawLapsed } from './withdraw-approvals.js';
import { policyOf, proposalFacts, recomputeContractDigest } from './proposal.js';
import type { ContractOf, Operations, OutcomeOf } from './operation-types.js';

/** An authenticated human's approval: the proposal id and the digest the page displayed, nothing else. */
export interface ApproveInput {
  readonly tenant: string;
  readonly proposalId: string;
  readonly approver: Actor;
  /** The full digest the approver saw. A different one is `stale_view`. */
  readonly seenDigest: string;
  /** The run id from the operator link, when there is one; a different run is `run_mismatch`. */
  readonly runId?: string;
  /**
   * The section the approver expects the proposal to belong to (what their page or link showed;
   * `null` for none). When given, a different stored section is `section_mismatch`.
   */
  readonly expectedSection?: string | null;
  /** The resource the approver expects (`invoice:inv-104`); when given, another is `resource_mismatch`. */
  readonly expectedResource?: string;
}

/**
 * The one atomic decision of `approve`. Only `claimed` may execute. `awaiting_approvals`: this
 * approval was recorded for a proposal whose policy needs more; nothing runs yet.
 */
export type ApproveResult<Ops extends Operations = Operations> =
  | { readonly kind: 'claimed'; readonly contract: ContractOf<Ops> }
  | {
      readonly kind: 'awaiting_approvals';
      readonly required: number;
      readonly given: readonly { readonly by: string; readonly at: Date }[];
    }
  | { readonly kind: 'already_completed'; readonly outcome: OutcomeOf<Ops> }
  | {
      readonly kind: 'not_approvable';
      readonly reason: DenialReason;
      readonly message: string;
      /**
       * With `recovering`: when to retry, when the engine knows how often the recovery sweep runs
       * (`createEngine({ sweepIntervalMs })`). With `rate_limited` (too many refused decisions):
       * when the actor's budget frees.
       */
      readonly retryAfterMs?: number;
    };

const STALE_VIEW = 'the page showed another version of this proposal; reload it';

/** Statuses whose outcome is stored: a replayed approval returns it. */
const COMPLETED = new Set(['succeeded', 'needs_reconciliation', 'revision_required', 'terminal_failure']);

/** Why a stored proposal may not be approved although its status allows it. */
type IntegrityFailure = {
  readonly kind: 'failed';
  readonly reason: 'corrupt_approval_record' | 'unsupported_scope_version';
  readonly message: string;
};

/**
 * The checks every approval path shares, after tenant, authorization and status: expiry aside.
 * An intact record comes with its arguments as read (deep-frozen, and canonical: the checks
 * prove the stored text is), so the claim does not parse and freeze them again.
 */
export function checkIntegrity(
  ctx: EngineContext,
  record: ProposalRecord,
  operation: AnyOperation,
): IntegrityFailure | { readonly kind: 'intact'; readonly arguments: DeepReadonly<unknown> } {
  try {
    decodeProposalRecord(record);
    // Read only to prove it readable: the digest below covers the stored text itself.
    parseStoredJson(record.previewJson);
    if (recomputeContractDigest(record) !== record.digest) {
      return {
        kind: 'failed',
        reason: 'corrupt_approval_record',
        message: 'the stored proposal does not match its digest',
      };
    }
  } catch {
    return {
      kind: 'failed',
      reason: 'corrupt_approval_record',
      message: 'the stored proposal cannot be read',
    };
  }
  if (
    ctx.sealKey &&
    (!record.seal || !verifySeal({ id: record.id, digest: record.digest }, ctx.sealKey, record.seal))
  ) {
    return {
      kind: 'failed',
      reason: 'corrupt_approval_record',
      message: 'the stored proposal is not sealed by this server',
    };
  }
  if (!operation.supportedScopeVersions.includes(record.scopeVersion)) {
    return {
      kind: 'failed',
      reason: 'unsupported_scope_version',
      message: `${operation.kind} no longer supports scope version ${record.scopeVersion}; a new proposal is needed`,
    };
  }
  let stored: DeepReadonly<unknown>;
  try {
    stored = parseStoredJson(record.argumentsJson);
  } catch {
    stored = undefined;
  }
  const args = stored === undefined ? undefined : operation.arguments?.safeParse(stored);
  if (!args?.success || canonicalize(args.data) !== record.argumentsJson) {
    return {
      kind: 'failed',
      reason: 'corrupt_approval_record',
      message: 'the stored arguments do not parse through the operation',
    };
  }
  const scope = canonicalScope(operation, operation.toScope(args.data, proposalFacts(record)));
  if (
    scope.kind !== 'ok' ||
    scope.digest.sha256 !== record.scopeDigest ||
    scope.canonical !== record.scopeJson
  ) {
    return {
      kind: 'failed',
      reason: 'corrupt_approval_record',
      message: 'the stored scope does not follow from the stored arguments',
    };
  }
  return { kind: 'intact', arguments: stored };
}

/**
 * Denies inside the transaction: audits `denied` (or `replayed`) and returns the refusal; past the
 * actor's refusal budget, `rate_limited` with nothing written.
 */
async function refuse(
  t: StepTransaction,
  record: ProposalRecord,
  actor: Actor,
  denial: {
    readonly reason: DenialReason;
    readonly message: string;
    readonly seenDigest: string | undefined;
  },
): Promise<ApproveResult> {
  const { reason, message, seenDigest } = denial;
  const budget = t.budget('refusal', record.tenant, actor.id);
  if (budget)
    return {
      kind: 'not_approvable',
      reason: budget.reason,
      message: budget.message,
      retryAfterMs: budget.retryAfterMs,
    };
  await t.record({
    tenant: record.tenant,
    proposalId: record.id,
    operation: record.operation,
    proposedAt: record.createdAt,
    runId: record.runId,
    step: reason === 'replayed' ? 'replayed' : 'denied',
    actor: actor.id,
    reason,
    digests: { proposed: record.digest, ...(seenDigest ? { seen: seenDigest } : {}) },
    detail: { message },
  });
  return { kind: 'not_approvable', reason, message };
}

/**
 * The current attempt of an executing proposal when its lease has ended and no sweep has taken it
 * over yet (its worker stopped: the attempt is orphaned, awaiting recovery), with the sentence that
 * says so; undefined while the lease is live (the attempt is running).
 */
async function orphanedAttempt(
  ctx: EngineContext,
  t: StepTransaction,
  record: ProposalRecord,
): Promise<{ readonly message: string } | undefined> {
  const attempts = await t.tx.listAttempts(record.tenant, record.id);
  const current = attempts.find((a) => a.number === record.currentAttempt);
  if (current?.status !== 'executing' || current.leaseUntil >= t.now) return undefined;
  const sweep =
    ctx.sweepIntervalMs === undefined
      ? 'the next recovery sweep takes it over'
      : `the next recovery sweep (every ${Math.ceil(ctx.sweepIntervalMs / 1000)}s) takes it over`;
  return {
    message: `already approved, but attempt ${current.number} stopped: its lease ended at ${new Date(current.leaseUntil).toISOString()}; ${sweep}, nothing is done twice`,
  };
}

/**
 * Approves one proposal and claims it for execution, as one atomic compare-and-set from pending to
 * executing. Checks, in order: the proposal exists in the caller's tenant (else `not_found`, the
 * same as a missing id), the caller may approve it (`forbidden`), its status, its expiry, the run,
 * the digest the approver saw (`stale_view`), the stored record's integrity
 * (`corrupt_approval_record`), the scope version (`unsupported_scope_version`). A tenant whose
 * audit chain cannot take the decision's events claims nothing and records nothing: `corrupt_audit_chain`.
 */
export async function approve(ctx: EngineContext, input: ApproveInput): Promise<ApproveResult> {
  const { approver } = input;
  // Refused before anything is read or written: a malformed digest never reaches the audit trail.
  if (!isSha256Hex(input.seenDigest)) {
    ctx.logger.warn(
      { tenant: input.tenant, proposalId: input.proposalId, actor: approver.id, reason: 'invalid_digest' },
      'denied invalid_digest',
    );
    return {
      kind: 'not_approvable',
      reason: 'invalid_digest',
      message: 'seenDigest must be the full digest the page showed: 64 lowercase hex characters',
    };
  }
  return refusingCorruptChain(
    ctx,
    async () => {
      try {
        return await approveInTransaction(ctx, input);
      } catch (error) {
        if (!(error instanceof AttemptInsertFailed)) throw error;
        return refuseStoredAttempt(ctx, input, error);
      }
    },
    (refused): ApproveResult => ({
      kind: 'not_approvable',
      reason: refused.reason,
      message: refused.message,
    }),
  );
}

/**
 * A pending proposal whose next attempt is already stored was set back by hand (the engine never
 * re-pends one): refused as `corrupt_approval_record` and audited, nothing claimed. Any other
 * failure of the insert is rethrown as it was.
 */
async function refuseStoredAttempt(
  ctx: EngineContext,
  input: ApproveInput,
  failed: AttemptInsertFailed,
): Promise<ApproveResult> {
  const { record, attemptNumber } = failed;
  return inTransaction(ctx, async (t) => {
    const stored = await t.tx.listAttempts(record.tenant, record.id);
    if (!stored.some((a) => a.number === attemptNumber)) throw failed.cause;
    return refuse(t, record, input.approver, {
      reason: 'corrupt_approval_record',
      message: `attempt ${attemptNumber} of the proposal is already stored: the proposal was set back to pending by hand`,
      seenDigest: input.seenDigest,
    });
  });
}

async function approveInTransaction(ctx: EngineContext, input: ApproveInput): Promise<ApproveResult> {
  const { approver } = input;
  return inTransaction(ctx, async (t) => {
    const record =
      approver.tenant === input.tenant ? await t.tx.getProposal(input.tenant, input.proposalId) : undefined;
    if (!record) {
      ctx.logger.warn(
        { tenant: input.tenant, proposalId: input.proposalId, actor: approver.id, reason: 'not_found' },
        'denied not_found',
      );
      return { kind: 'not_approvable', reason: 'not_found', message: 'no such proposal' };
    }
    const operation = ctx.operations.get(record.operation);
    const policy = policyOf(record);
    const scope = parseStoredJson(record.scopeJson);
    const right = approvalRight(ctx, approver, {
      tenant: record.tenant,
      operation: record.operation,
      scope,
      requestedBy: record.requestedBy,
      editedBy: record.editedBy,
      policy,
      route: await routeOf(t.tx, record.tenant, record.id),
    });
    if (right.kind === 'refused') {
      return refuse(t, record, approver, {
        reason: right.reason,
        message: right.message,
        seenDigest: input.seenDigest,
      });
    }
    // A replay must name the contract that ran: another digest is a stale page, not a replay.
    if (
      (COMPLETED.has(record.status) || record.status === 'executing') &&
      input.seenDigest !== record.digest
    ) {
      return refuse(t, record, approver, {
        reason: 'stale_view',
        message: STALE_VIEW,
        seenDigest: input.seenDigest,
      });
    }
    if (COMPLETED.has(record.status) && record.outcomeJson) {
      await refuse(t, record, approver, {
        reason: 'replayed',
        message: 'already executed; returning the stored outcome',
        seenDigest: input.seenDigest,
      });
      return { kind: 'already_completed', outcome: parseStoredJson(record.outcomeJson) as Outcome };
    }
    if (record.status === 'executing') {
      const orphan = await orphanedAttempt(ctx, t, record);
      if (orphan) {
        const refused = await refuse(t, record, approver, {
          reason: 'recovering',
          message: orphan.message,
          seenDigest: input.seenDigest,
        });
        return ctx.sweepIntervalMs === undefined
          ? refused
          : { ...refused, retryAfterMs: ctx.sweepIntervalMs };
      }
      return refuse(t, record, approver, {
        reason: 'replayed',
        message: 'already approved and executing',
        seenDigest: input.seenDigest,
      });
    }
    if (record.status === 'declined' || record.status === 'superseded' || record.status === 'expired') {
      return refuse(t, record, approver, {
        reason: record.status,
        message: `the proposal is ${record.status}`,
        seenDigest: input.seenDigest,
      });
    }
    const { now } = t;
    if (now >= record.expiresAt) {
      await expireRecord(t, record, now, approver.id);
      return {
        kind: 'not_approvable',
        reason: 'expired',
        message: 'the proposal expired before it was approved',
      };
    }
    if (input.runId !== undefined && input.runId !== record.runId) {
      return refuse(t, record, approver, {
        reason: 'run_mismatch',
        message: 'the approval link belongs to another run',
        seenDigest: input.seenDigest,
      });
    }
    const place = placeMismatch(input, record);
    if (place)
      return refuse(t, record, approver, {
        reason: place.reason,
        message: place.message,
        seenDigest: input.seenDigest,
      });
    if (input.seenDigest !== record.digest) {
      return refuse(t, record, approver, {
        reason: 'stale_view',
        message: STALE_VIEW,
        seenDigest: input.seenDigest,
      });
    }
    if (!operation) {
      return refuse(t, record, approver, {
        reason: 'unknown_operation',
        message: `operation ${record.operation} is not registered`,
        seenDigest: input.seenDigest,
      });
    }
    const integrity = checkIntegrity(ctx, record, operation);
    if (integrity.kind === 'failed')
      return refuse(t, record, approver, {
        reason: integrity.reason,
        message: integrity.message,
        seenDigest: input.seenDigest,
      });
    // The checks proved both stored texts canonical, so these reads are the contract's parts.
    const verified = { arguments: integrity.arguments, scope };
    if (policy.required > 1)
      return countApproval(ctx, t, record, { approver, required: policy.required, verified });
    return claim(ctx, t, record, {
      actor: approver.id,
      kind: 'exact',
      seenDigest: input.seenDigest,
      byEditor: right.editor,
      verified,
    });
  });
}

/**
 * One approval of a proposal that needs `required` distinct approvers. Serializes on the proposal
 * row first (a compare-and-set on `pending` that PostgreSQL holds a row lock for until commit), so
 * concurrent approvers queue and each counts the approvals committed before it: two approvers
 * finishing at once never both see only their own row. Then records this approval (a second one by
 * the same person is `already_approved`), counts those bound to this digest, and claims through the
 * same compare-and-set as a single approval when the quorum is complete.
 */
async function countApproval(
  ctx: EngineContext,
  t: StepTransaction,
  record: ProposalRecord,
  counting: { readonly approver: Actor; readonly required: number; readonly verified: VerifiedParts },
): Promise<ApproveResult> {
  const { approver, required, verified } = counting;
  const { now } = t;
  const locked = await t.tx.updateProposal(
    record.tenant,
    record.id,
    { status: 'pending' },
    { updatedAt: Math.max(now, record.updatedAt) },
  );
  if (!locked) {
    const current = await t.tx.getProposal(record.tenant, record.id);
    const status = current?.status ?? 'pending';
    if (status === 'declined' || status === 'superseded' || status === 'expired') {
      return refuse(t, record, approver, {
        reason: status,
        message: `the proposal is ${status}`,
        seenDigest: record.digest,
      });
    }
    return refuse(t, record, approver, {
      reason: 'replayed',
      message: 'another approval completed the quorum first',
      seenDigest: record.digest,
    });
  }
  const approval = {
    tenant: record.tenant,
    proposalId: record.id,
    approver: approver.id,
    digest: record.digest,
    at: now,
  };
  const inserted = await t.tx.insertApproval({
    ...approval,
    seal: ctx.sealKey ? seal(approval, ctx.sealKey) : null,
  });
  if (!inserted) {
    return refuse(t, record, approver, {
      reason: 'already_approved',
      message: 'you already approved this proposal; another approver must',
      seenDigest: record.digest,
    });
  }
  // With a seal key, a row written into the database without it (a made-up approver) never counts.
  // Each approver counts once, whatever rows the table holds (its key keeps one per approver).
  const byApprover = new Map<string, ApprovalRecord>();
  for (const a of await t.tx.listApprovals(record.tenant, record.id)) {
    if (
      !byApprover.has(a.approver) &&
      a.digest === record.digest &&
      a.approver !== record.requestedBy &&
      a.approver !== record.editedBy &&
      (!ctx.sealKey || (a.seal !== null && verifySeal(approvalSealed(a), ctx.sealKey, a.seal)))
    )
      byApprover.set(a.approver, a);
  }
  const earlier = [...byApprover.keys()].filter((id) => id !== approver.id);
  for (const lapsed of await withdrawLapsed(ctx, t, record, { earlier, by: approver.id }))
    byApprover.delete(lapsed);
  const approvals = [...byApprover.values()];
  const given = approvals.map((a) => ({ by: a.approver, at: new Date(a.at) }));
  if (approvals.length >= required) {
    return claim(ctx, t, record, {
      actor: approver.id,
      kind: 'exact',
      seenDigest: record.digest,
      quorum: { approvers: approvals.map((a) => a.approver), required },
      verified,
    });
  }
  await t.record({
    tenant: record.tenant,
    proposalId: record.id,
    operation: record.operation,
    proposedAt: record.createdAt,
    runId: record.runId,
    step: 'partially_approved',
    actor: approver.id,
    reason: 'approved',
    digests: { proposed: record.digest, seen: record.digest, approved: record.digest },
    detail: { given: approvals.length, required, approvers: approvals.map((a) => a.approver) },
  });
  return { kind: 'awaiting_approvals', required, given };
}

/** The section or resource the approver expected, when the proposal is somewhere else. */
function placeMismatch(
  input: ApproveInput,
  record: ProposalRecord,
): { readonly reason: 'section_mismatch' | 'resource_mismatch'; readonly message: string } | undefined {
  if (input.expectedSection !== undefined && input.expectedSection !== record.section) {
    return {
      reason: 'section_mismatch',
      message: `the proposal belongs to section ${record.section ?? '(none)'}, not ${input.expectedSection ?? '(none)'}`,
    };
  }
  if (input.expectedResource !== undefined && input.expectedResource !== record.resource) {
    return {
      reason: 'resource_mismatch',
      message: `the proposal acts on ${record.resource}, not ${input.expectedResource}`,
    };
  }
  return undefined;
}

/** The fields of a quorum approval its seal covers. */
function approvalSealed(a: ApprovalRecord): Omit<ApprovalRecord, 'seal'> {
  return { tenant: a.tenant, proposalId: a.proposalId, approver: a.approver, digest: a.digest, at: a.at };
}
