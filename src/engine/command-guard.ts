import { formatScopeChange } from '../canonical/scope-diff.js';
import { parseStoredJson } from '../canonical/stored-json.js';
import { authorizeStoredExecution, type ExecutionDecision } from '../operation/authorize-execution.js';
import type { AnyOperation } from '../operation/define-operation.js';
import type { Outcome } from '../operation/outcome.js';
import type { ProposalRecord } from '../store/records.js';
import type { ExecutionContract } from './execution-contract.js';
import { failure, stepOf } from './outcome-writer.js';
import { proposalFacts } from './proposal.js';

// The command guard: before a command id exists, the scope rebuilt from the real downstream
// request must equal the approved scope (or, in shadow mode, the difference is recorded).

/** The command guard refused a downstream call: no command id exists for it. */
export class CommandRefused extends Error {
  constructor(readonly decision: Extract<ExecutionDecision, { kind: 'denied' }>) {
    super(decision.message);
  }
}

/** Rebuilds the requested scope from a downstream request and compares it with the approved one. */
export function guard(operation: AnyOperation, record: ProposalRecord, request: unknown): ExecutionDecision {
  const facts = proposalFacts(record);
  const raw = operation.commandScope
    ? operation.commandScope(request as never, facts)
    : operation.toScope(request, facts);
  return authorizeStoredExecution(
    {
      operation,
      scopeVersion: record.scopeVersion,
      scope: parseStoredJson(record.scopeJson),
      digest: record.scopeDigest,
    },
    raw,
    record.scopeJson,
  );
}

// Shadow mode: the mismatch is evidence for the operation's owners, not a refusal.
export function shadowStep(
  record: ProposalRecord,
  contract: ExecutionContract,
  decision: Extract<ExecutionDecision, { kind: 'denied' }>,
) {
  return stepOf(record, contract, {
    step: 'shadow_mismatch' as const,
    reason: decision.reason,
    digests: {
      approved: record.digest,
      ...(decision.requestedDigest ? { requested: decision.requestedDigest } : {}),
    },
    detail: {
      diff: decision.diff.map(formatScopeChange),
      issues: decision.issues.map((i) => `${i.path}: ${i.message}`),
      shadow: true,
    },
  });
}

export function refusedOutcome(error: CommandRefused): Outcome {
  return failure(error.decision.reason, error.decision.message);
}

export function refusedStep(error: CommandRefused) {
  return {
    step: 'denied' as const,
    reason: error.decision.reason,
    digests: error.decision.requestedDigest ? { requested: error.decision.requestedDigest } : {},
    detail: {
      diff: error.decision.diff.map(formatScopeChange),
      issues: error.decision.issues.map((i) => `${i.path}: ${i.message}`),
    },
  };
}
