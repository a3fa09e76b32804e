/**
 * The errors of `countersign/store`: what a store throws, and the engine and the HTTP layer turn
 * into results (`corrupt_audit_chain`, `503 store_unavailable`). All extend `CountersignError`.
 */
export { StoredFormatError } from './proposal-format.js';
export { CorruptAuditChainError, StoreClosedError, StoreUnavailableError } from './store-errors.js';
export { StoreFaultError, type StoreFaultCondition } from './store-fault.js';
export { UnstorableValueError } from './unstorable-value.js';
