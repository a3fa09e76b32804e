import { canonicalize } from '../../canonical/canonicalize.js';
import type { Command } from '../command.js';
import { InputProblem, readJsonInput } from '../read-input.js';

/** `countersign canonicalize FILE|-`: prints RFC 8785 canonical JSON. */
export const canonicalizeCommand: Command = {
  path: ['canonicalize'],
  summary: 'print the RFC 8785 canonical JSON of a file (or - for stdin)',
  help: `Usage: countersign canonicalize FILE|-

Parses FILE strictly (duplicate keys, lone surrogates, non-finite or unsafe numbers are errors
that name the position) and prints its RFC 8785 (JCS) canonical form followed by a newline.
Exit codes: 0 ok, 2 bad input.`,
  options: {},
  positionals: { min: 1, max: 1 },
  async run(args, io) {
    try {
      io.stdout(`${canonicalize(await readJsonInput(args.positionals[0]!, io))}\n`);
      return 0;
    } catch (error) {
      if (error instanceof InputProblem) {
        io.stderr(`countersign canonicalize: ${error.message}\n`);
        return 2;
      }
      throw error;
    }
  },
};
