import { digest } from '../../canonical/digest.js';
import type { Command } from '../command.js';
import { InputProblem, readJsonInput } from '../read-input.js';

/** `countersign digest FILE|-`: prints the SHA-256 of the canonical JSON and its short hash. */
export const digestCommand: Command = {
  path: ['digest'],
  summary: 'print the SHA-256 digest and the 12-character short hash of a JSON file',
  help: `Usage: countersign digest FILE|-

Prints two lines:
  sha256 <64 hex>   the digest of the RFC 8785 canonical bytes (store this one)
  short <12 hex>    its first 12 characters (what logs, the console and audit lines show)
Key order and whitespace never change the digest. Exit codes: 0 ok, 2 bad input.`,
  options: {},
  positionals: { min: 1, max: 1 },
  async run(args, io) {
    try {
      const d = digest(await readJsonInput(args.positionals[0]!, io));
      io.stdout(`sha256 ${d.sha256}\nshort ${d.short}\n`);
      return 0;
    } catch (error) {
      if (error instanceof InputProblem) {
        io.stderr(`countersign digest: ${error.message}\n`);
        return 2;
      }
      throw error;
    }
  },
};
