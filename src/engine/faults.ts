/**
 * Named points in execution where the fault-injection tests kill or pause a process. Production
 * code never sets a hook; the engine calls it only when one is given.
 */
export type FaultPoint =
  | 'after_claim'
  | 'after_revalidation'
  | 'before_provider_call'
  | 'after_provider_accepted'
  | 'before_outcome_commit'
  | 'between_outcome_and_audit';

/** Called at each {@link FaultPoint}; a test hook may kill the process there. */
export type FaultHook = (
  point: FaultPoint,
  info: { readonly proposalId: string; readonly attemptNumber: number },
) => void | Promise<void>;
