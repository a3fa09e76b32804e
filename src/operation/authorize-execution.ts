import { digest } from '../canonical/digest.js';
import { type ScopeChange, diffScopes, formatScopeChange } from '../canonical/scope-diff.js';
import type { AnyOperation } from './define-operation.js';
import { formatIssues, type InputIssue } from './issues.js';
import { buildScope } from './scope.js';

/** What was approved: the operation, the stored typed scope, its version and its stored digest. */
export interface ApprovedScope {
  readonly operation: AnyOperation;
  readonly scopeVersion: number;
  /** The approved scope as stored (already normalized and frozen). */
  readonly scope: unknown;
  /** The full SHA-256 stored with the approval. */
  readonly digest: string;
}

/** The reasons {@link authorizeExecution} can refuse with. */
export type ExecutionDenialReason =
  | 'unsupported_scope_version'
  | 'corrupt_approval_record'
  | 'invalid_requested_scope'
  | 'scope_mismatch';

/** The decision on one requested action. */
export type ExecutionDecision =
  | { readonly kind: 'allowed'; readonly reason: 'approved'; readonly requestedDigest: string }
  | {
      readonly kind: 'denied';
      readonly reason: ExecutionDenialReason;
      /** Safe, redacted, names the fields. */
      readonly message: string;
      readonly diff: readonly ScopeChange[];
      readonly issues: readonly InputIssue[];
      /** Digest of the requested scope when it could be built. */
      readonly requestedDigest?: string;
    };

function denied(
  reason: ExecutionDenialReason,
  message: string,
  extra: { diff?: readonly ScopeChange[]; issues?: readonly InputIssue[]; requestedDigest?: string } = {},
): ExecutionDecision {
  return {
    kind: 'denied',
    reason,
    message,
    diff: extra.diff ?? [],
    issues: extra.issues ?? [],
    ...(extra.requestedDigest ? { requestedDigest: extra.requestedDigest } : {}),
  };
}

/**
 * Checks a requested action (the raw value an executor is about to act on) against an approved
 * scope. In order: the approval's scope version must still be supported, the stored digest must
 * equal the digest recomputed from the stored scope, the request must be a valid scope (missing,
 * extra and ill-typed fields are named), and it must equal the approved scope (else a field-level,
 * redacted diff).
 *
 * @example
 * const decision = authorizeExecution(approval, { ...approved, amount_minor: 40000 });
 * if (decision.kind === 'denied') log(decision.reason, decision.diff); // scope_mismatch, $.amount_minor
 */
export function authorizeExecution(approval: ApprovedScope, requested: unknown): ExecutionDecision {
  return authorize(approval, requested, undefined);
}

/**
 * {@link authorizeExecution} of an approval read from a stored row, given `storedScope`: the row's
 * scope text, which `approval.scope` was parsed from. The same checks, in the same order, with the
 * same answers; only a proof is shared. When the requested scope's canonical text is the stored
 * text itself and its digest is the stored digest, the stored scope's own digest check is already
 * proven: the stored text is then canonicalize's output, which parses back to a value that
 * canonicalizes to that very text, whose digest was just computed. Recomputing it would
 * canonicalize and hash the same text again. Otherwise every check runs as in `authorizeExecution`.
 *
 * @internal
 */
export function authorizeStoredExecution(
  approval: ApprovedScope,
  requested: unknown,
  storedScope: string,
): ExecutionDecision {
  return authorize(approval, requested, storedScope);
}

function authorize(
  approval: ApprovedScope,
  requested: unknown,
  storedScope: string | undefined,
): ExecutionDecision {
  const { operation } = approval;
  if (!operation.supportedScopeVersions.includes(approval.scopeVersion)) {
    return denied(
      'unsupported_scope_version',
      `${operation.kind} scope version ${approval.scopeVersion} is not supported (supported: ${operation.supportedScopeVersions.join(', ')})`,
    );
  }
  // Building the requested scope first changes no answer: it reads nothing but `requested`.
  const early = storedScope === undefined ? undefined : buildScope(operation, requested);
  if (early?.kind === 'ok' && early.canonical === storedScope && early.digest.sha256 === approval.digest) {
    return { kind: 'allowed', reason: 'approved', requestedDigest: early.digest.sha256 };
  }
  let storedDigest: string;
  try {
    storedDigest = digest(approval.scope).sha256;
  } catch {
    return denied('corrupt_approval_record', 'the stored scope cannot be canonicalized');
  }
  if (storedDigest !== approval.digest) {
    return denied('corrupt_approval_record', 'the stored digest does not match the stored scope');
  }
  const built = early ?? buildScope(operation, requested);
  if (built.kind === 'invalid') {
    return denied('invalid_requested_scope', `invalid requested scope: ${formatIssues(built.issues)}`, {
      issues: built.issues,
    });
  }
  if (built.digest.sha256 !== approval.digest) {
    const diff = diffScopes(approval.scope, built.scope, operation.fields);
    return denied(
      'scope_mismatch',
      `requested scope differs from the approved scope: ${diff.map(formatScopeChange).join('; ')}`,
      {
        diff,
        requestedDigest: built.digest.sha256,
      },
    );
  }
  return { kind: 'allowed', reason: 'approved', requestedDigest: built.digest.sha256 };
}
