import type { Actor } from '../operation/actor.js';
import type { LocalTransaction } from '../operation/define-operation.js';

/**
 * Who may still decide, as the application's directory holds it now. When an approval completes
 * a quorum, the engine asks it about every approver who approved earlier: an approval whose
 * approver was disabled, lost the role or moved to another tenant since is withdrawn (audited
 * `approval_withdrawn`) and does not count. Without one, an approval counts as it was given.
 * `countersign serve` passes its principal directory.
 *
 * @example
 * const engine = await createEngine({ store, operations, approverDirectory: directory });
 */
export interface ApproverDirectory {
  /**
   * The principals with these ids as they are now, read in the deciding transaction (`db`), so the
   * answer and the decision commit together. An id that no longer stands for an active principal
   * of the tenant is absent.
   */
  current(db: LocalTransaction, tenant: string, ids: readonly string[]): Promise<ReadonlyMap<string, Actor>>;
}
