import { diffScopes, formatScopeChange } from '../../canonical/scope-diff.js';
import type { Command } from '../command.js';
import { InputProblem, readJsonInput } from '../read-input.js';

/** `countersign diff APPROVED REQUESTED`: one line per field-level difference. */
export const diffCommand: Command = {
  path: ['diff'],
  summary: 'compare an approved and a requested scope field by field',
  help: `Usage: countersign diff APPROVED REQUESTED

Prints one line per difference, e.g.
  $.destination_account_id: "acct-supplier-7" -> "acct-personal-2"
  $.expedite: added true
Objects are compared key by key (key order never matters), arrays by position.
Exit codes: 0 identical, 1 different, 2 bad input (invalid JSON, duplicate keys, lone
surrogates, non-finite numbers). Either file may be - for stdin.`,
  options: {},
  positionals: { min: 2, max: 2 },
  async run(args, io) {
    try {
      const approved = await readJsonInput(args.positionals[0]!, io);
      const requested = await readJsonInput(args.positionals[1]!, io);
      const changes = diffScopes(approved, requested);
      for (const change of changes) io.stdout(`${formatScopeChange(change)}\n`);
      return changes.length === 0 ? 0 : 1;
    } catch (error) {
      if (error instanceof InputProblem) {
        io.stderr(`countersign diff: ${error.message}\n`);
        return 2;
      }
      throw error;
    }
  },
};
