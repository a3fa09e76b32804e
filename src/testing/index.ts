export { type ConformanceCase, sampleProposal, storeConformance } from './store-conformance.js';
