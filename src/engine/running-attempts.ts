import type { ExecutionContract } from './execution-contract.js';
import type { EngineContext } from './engine-context.js';

/** One attempt this engine is executing now. */
export interface RunningAttempt {
  readonly tenant: string;
  readonly attemptId: string;
  /**
   * Past the point of no return: the command is being recorded or sent, or the local effect's
   * transaction has begun. Such an attempt finishes where it is; it is never handed back.
   */
  readonly finishing: boolean;
}

/** What {@link RunningAttempts.begin} hands the executor. */
export interface AttemptHandle {
  /**
   * Marks the attempt as finishing, unless the engine has handed it back already: then false, and
   * the executor must stop before it records or sends anything.
   */
  finish(): boolean;
  /** The execution is over (any outcome, or an error). */
  end(): void;
}

/**
 * The attempts this engine is executing, so a shutdown can hand back the ones that have not
 * reached their provider or begun their effect: their leases end at once and another server's
 * sweep takes them over, instead of after the whole lease. One process is single-threaded, so
 * marking and checking happen in one tick: an attempt is either handed back or finishing, never both.
 */
export class RunningAttempts {
  readonly #running = new Map<string, { tenant: string; attemptId: string; finishing: boolean }>();
  #released = false;

  /** Registers an execution; after {@link release}, every new one is handed back at its first check. */
  begin(contract: Pick<ExecutionContract, 'tenant' | 'attemptId'>): AttemptHandle {
    const entry = { tenant: contract.tenant, attemptId: contract.attemptId, finishing: false };
    this.#running.set(entry.attemptId, entry);
    return {
      finish: () => {
        if (this.#released) return false;
        entry.finishing = true;
        return true;
      },
      end: () => {
        this.#running.delete(entry.attemptId);
      },
    };
  }

  /** Stops every execution not yet finishing at its next check; returns those attempts. */
  release(): RunningAttempt[] {
    this.#released = true;
    return [...this.#running.values()].filter((a) => !a.finishing).map((a) => ({ ...a }));
  }
}

/**
 * Ends the leases of the attempts {@link RunningAttempts.release} handed back (compare-and-set on
 * the attempt still executing: one a sweep already took is left alone). See `Engine.releaseLeases`.
 */
export async function releaseLeases(ctx: EngineContext): Promise<number> {
  let released = 0;
  for (const attempt of ctx.running.release()) {
    const ended = await ctx.store.transaction((tx) =>
      tx.updateAttempt(attempt.tenant, attempt.attemptId, 'executing', { leaseUntil: ctx.clock.now() }),
    );
    if (ended) released++;
  }
  if (released > 0) ctx.logger.info({ released }, 'leases handed back for another server to take over');
  return released;
}
