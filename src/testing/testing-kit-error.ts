import { CountersignError } from '../canonical/errors.js';

/** The testing kit was called wrongly (arguments that do not parse, an unknown option field): fix the test. */
export class TestingKitError extends CountersignError {}
