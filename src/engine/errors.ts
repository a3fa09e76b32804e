import { CountersignError } from '../canonical/errors.js';

/** An operation broke its own contract (prepare returned arguments its schema refuses): a bug in the operation. */
export class OperationContractError extends CountersignError {
  readonly operation: string;
  constructor(operation: string, message: string, options?: { cause?: unknown }) {
    super(`${operation}: ${message}`, options);
    this.operation = operation;
  }
}

/**
 * This worker's attempt was taken over by a recovery sweep (its lease ended) and another attempt
 * is running: this worker must stop, it can no longer commit anything.
 */
export class FencedAttemptError extends CountersignError {
  readonly proposalId: string;
  constructor(proposalId: string) {
    super(`${proposalId}: this attempt was taken over by recovery; another attempt owns the proposal`);
    this.proposalId = proposalId;
  }
}
