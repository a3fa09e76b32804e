export { type ConformanceCase, sampleProposal, storeConformance } from './store-conformance.js';
export {
  type AdapterCase,
  type AdapterContractOptions,
  adapterContract,
  type ContractIds,
  type FakeTransport,
  type RecordedStatement,
  type RecordingTransport,
  recordingTransaction,
  recordingTransport,
} from './adapter-contract.js';
export {
  type ArgumentsOf,
  approvedScopeOf,
  erased,
  type KitOperation,
  kitFacts,
  type MutationCase,
  type MutationExpectation,
  type MutationKind,
  type MutationSuiteOptions,
  mutationSuite,
  rotateText,
  type SuiteCase,
} from './mutation-suite.js';
export { TestingKitError } from './errors.js';
export {
  type PresentationSuiteOptions,
  type PreviewOf,
  type PreviewSource,
  presentationSuite,
} from './presentation-suite.js';
