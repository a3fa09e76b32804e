import { CountersignError } from '../canonical/errors.js';

/** An operation broke its own contract (prepare returned arguments its schema refuses): a bug in the operation. */
export class OperationContractError extends CountersignError {
  readonly operation: string;
  constructor(operation: string, message: string, options?: { cause?: unknown }) {
    super(`${operation}: ${message}`, options);
    this.operation = operation;
  }
}
