/**
 * The errors of the root entry point `countersign`: what embedding the engine can throw. All
 * extend {@link CountersignError}, which every entry point's errors extend too. Expected refusals
 * are results with a reason code, not errors: these are bugs, misconfiguration and I/O. The
 * server, the adapters, the testing kit, stores and canonical JSON export their own errors.
 */
export { CanonicalizationError, ConfigurationError, CountersignError } from './canonical/errors.js';
export { FencedAttemptError, OperationContractError } from './engine/errors.js';
export { OperationDefinitionError } from './operation/define-operation.js';
export { StoreFaultError, StoreUnavailableError, UnstorableValueError } from './store/errors.js';
