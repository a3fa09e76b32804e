import type { AttemptRecord } from '../store/records.js';
import type { ExecutionContract } from './execution-contract.js';

// The contracts recovery made to re-send a recorded command, with that command's id. Only the
// recovery sweep of this process makes them: a contract from anywhere else is never a resend.
const resends = new WeakMap<ExecutionContract, string>();

/** Marks a contract recovery made to re-send command `commandId` under its original idempotency key. */
export function markResend(contract: ExecutionContract, commandId: string): ExecutionContract {
  resends.set(contract, commandId);
  return contract;
}

/** The recorded command a contract re-sends, or undefined for a first send. */
export function resentCommandOf(contract: ExecutionContract): string | undefined {
  return resends.get(contract);
}

/**
 * The idempotency key the provider knows an attempt's command by: that of the first attempt that
 * recorded the command (a resend carries its command on, under the same key), else its own.
 */
export function commandKeyOf(attempts: readonly AttemptRecord[], attempt: AttemptRecord): string {
  if (attempt.commandId === null) return attempt.idempotencyKey;
  let first = attempt;
  for (const a of attempts) if (a.commandId === attempt.commandId && a.number < first.number) first = a;
  return first.idempotencyKey;
}
