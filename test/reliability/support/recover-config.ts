import type { AnyOperation } from '../../../src/index.js';
import { reliabilityOperations, reliabilityWorld } from './world.js';

/**
 * A `countersign recover --config FILE` module for the CLI tests: the reliability world's
 * operations (invoices `inv-r-00000`…), as a user's config exports its own. A getter, so every
 * load in one test process gets a fresh world whose provider journal is `COUNTERSIGN_TEST_JOURNAL`.
 */
export default {
  get operations(): AnyOperation[] {
    const journal = process.env['COUNTERSIGN_TEST_JOURNAL'];
    return reliabilityOperations(reliabilityWorld({ invoices: 10, ...(journal ? { journal } : {}) }));
  },
};
