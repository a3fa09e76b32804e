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

/**
 * The key the engine reads a {@link FaultHook} under. Not part of `EngineOptions` and not exported
 * by any entry point of the package: only this repository's fault-injection tests, which import
 * this module from `src/`, can set it.
 */
export const FAULTS: unique symbol = Symbol('countersign.faults');

/** Engine options carrying a fault hook (test-only; see {@link FAULTS}). */
export function withFaults<Options extends object>(options: Options, faults: FaultHook | undefined): Options {
  return faults ? { ...options, [FAULTS]: faults } : options;
}

/** The fault hook set by {@link withFaults}, if any. */
export function faultsOf(options: object): FaultHook | undefined {
  return (options as { readonly [FAULTS]?: FaultHook })[FAULTS];
}
