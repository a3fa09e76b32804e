/** The errors of `countersign/testing`: a suite given options it cannot run. Extends `CountersignError`. */
export { TestingKitError } from './testing-kit-error.js';
