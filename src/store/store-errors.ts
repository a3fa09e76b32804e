import { CountersignError } from '../canonical/errors.js';

/** Thrown when the store is used after `close()`. */
export class StoreClosedError extends CountersignError {}

/**
 * A store could not be opened, reached or migrated: a wrong URL or path, a server that is down, a
 * refused login. The message names the store with its password hidden; `cause` is the driver's error.
 */
export class StoreUnavailableError extends CountersignError {}
