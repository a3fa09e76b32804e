/**
 * Every error class countersign throws, in one place (re-exported by the root entry point). All
 * extend {@link CountersignError}. Expected refusals are results with a reason code, not errors:
 * these are bugs, misconfiguration and I/O.
 */
export {
  CanonicalizationError,
  type CanonicalizationErrorCode,
  ConfigurationError,
  CountersignError,
  JsonParseError,
  type JsonParseReason,
} from './canonical/errors.js';
export { BindingError, type BindingField, type BindingErrorReason } from './adapters/shared/agent-binding.js';
export { FencedAttemptError, OperationContractError } from './engine/errors.js';
export { OperationDefinitionError } from './operation/define-operation.js';
export { HttpProblem } from './server/http-problem.js';
export { ListenError } from './server/listen-error.js';
export { StoredFormatError } from './store/proposal-format.js';
export { CorruptAuditChainError, StoreClosedError, StoreUnavailableError } from './store/store-errors.js';
export { StoreFaultError, type StoreFaultCondition } from './store/store-fault.js';
export { UnstorableValueError } from './store/unstorable-value.js';
export { TestingKitError } from './testing/testing-kit-error.js';
