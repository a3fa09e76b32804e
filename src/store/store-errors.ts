import { CountersignError } from '../canonical/errors.js';

/** Thrown when the store is used after `close()`. */
export class StoreClosedError extends CountersignError {}

/**
 * A store could not be opened, reached or migrated: a wrong URL or path, a server that is down, a
 * refused login. The message names the store with its password hidden; `cause` is the driver's error.
 */
export class StoreUnavailableError extends CountersignError {}

/**
 * A tenant's audit chain holds an event the engine did not write where its next event must go (a
 * database writer inserted it): the append is refused and its transaction rolls back, so nothing is
 * recorded or executed for that tenant until an operator repairs the chain (`countersign audit
 * verify` names the event). The engine turns it into the refusal `corrupt_audit_chain`.
 */
export class CorruptAuditChainError extends CountersignError {
  readonly tenant: string;
  /** The first place the append needed: the foreign event is there or after it. */
  readonly seq: number;

  constructor(tenant: string, seq: number) {
    super(
      `the audit chain of ${tenant} holds an event the engine did not write at #${seq} or after: nothing is appended until an operator repairs it`,
    );
    this.tenant = tenant;
    this.seq = seq;
  }
}
