import { CorruptAuditChainError } from '../store/store-errors.js';
import type { EngineContext } from './engine-context.js';

/**
 * A call refused because its tenant's audit chain holds an event the engine did not write where
 * the next one goes (a database writer inserted it). The call's transaction rolled back: nothing
 * was recorded or executed, and the refusal itself cannot be audited (it is logged as an error).
 * Every call that records in that tenant is refused so until an operator repairs the chain;
 * `countersign audit verify` names the event.
 */
export interface CorruptAuditChain {
  readonly kind: 'corrupt_audit_chain';
  readonly reason: 'corrupt_audit_chain';
  /** For operators: what is wrong and what to run. */
  readonly message: string;
  /** For the model: nothing happened, and retrying will not help. */
  readonly modelMessage: string;
}

const MODEL_MESSAGE =
  'Nothing was recorded or executed: the approval service cannot write its audit trail until an operator repairs it. Do not retry; tell the user the request is on hold.';

/**
 * The refusal for a store's {@link CorruptAuditChainError}, logged (it cannot be audited) with
 * `fields` that say what was refused.
 */
export function corruptAuditChain(
  ctx: EngineContext,
  error: CorruptAuditChainError,
  fields: object = {},
): CorruptAuditChain {
  ctx.logger.error(
    { tenant: error.tenant, seq: error.seq, reason: 'corrupt_audit_chain', ...fields },
    'denied corrupt_audit_chain: the audit chain holds an event the engine did not write; run countersign audit verify',
  );
  return {
    kind: 'corrupt_audit_chain',
    reason: 'corrupt_audit_chain',
    message: `this tenant's audit chain holds an event the engine did not write (at #${error.seq} or after): nothing was recorded or executed until an operator repairs it (countersign audit verify names the event)`,
    modelMessage: MODEL_MESSAGE,
  };
}

/**
 * Runs `call`, whose transactions record audit events. When the store refuses one because the
 * tenant's chain holds an event the engine did not write, that transaction rolled back (nothing of
 * it is applied), the refusal is logged with `fields`, and the answer is `refuse(refusal)`. Any
 * other error is rethrown as it was.
 */
export async function refusingCorruptChain<T, R>(
  ctx: EngineContext,
  call: () => Promise<T>,
  refuse: (refusal: CorruptAuditChain) => R,
  fields: object = {},
): Promise<T | R> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof CorruptAuditChainError)) throw error;
    return refuse(corruptAuditChain(ctx, error, fields));
  }
}
