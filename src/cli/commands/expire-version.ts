import { demoOperations, demoWorld } from '../../demo/demo-world.js';
import { createEngine } from '../../engine/create-engine.js';
import { type Command, requiredOption, UsageProblem } from '../command.js';
import { openCliStore, STORE_OPTIONS, storeOptionsHelp } from '../store-option.js';

/** `countersign expire-version`: retires pending proposals of an old scope version. */
export const expireVersionCommand: Command = {
  path: ['expire-version'],
  summary: 'expire pending proposals of an operation below a scope version',
  help: `Usage: countersign expire-version (--db FILE | --store LOCATION) --operation KIND --below N

Expires every pending proposal of operation KIND whose scope version is below N, with the reason
unsupported_scope_version, and audits each: after a schema change, old approvals are never
reinterpreted — a new review is required. Prints how many were expired per tenant.

${storeOptionsHelp(21, 'an existing SQLite file')}`,
  options: { ...STORE_OPTIONS, operation: { type: 'string' }, below: { type: 'string' } },
  async run(args, io) {
    const operation = requiredOption(args, 'operation');
    const below = Number(requiredOption(args, 'below'));
    if (!Number.isSafeInteger(below) || below < 2)
      throw new UsageProblem('--below must be a whole number ≥ 2');
    const store = await openCliStore(args);
    // The engine needs no operation code to expire proposals; the demo set is only its wiring.
    const engine = await createEngine({ store, operations: demoOperations(demoWorld()) });
    try {
      const result = await engine.sweeps.expireVersion({ operation, below, actor: 'system:cli' });
      for (const [tenant, count] of Object.entries(result.tenants))
        io.stdout(`${tenant}: ${count} expired\n`);
      io.stdout(
        `expired ${result.expired} pending ${operation} proposal${result.expired === 1 ? '' : 's'} below scope version ${below}\n`,
      );
      return 0;
    } finally {
      await engine.close();
    }
  },
};
