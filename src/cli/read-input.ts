import { readFile } from 'node:fs/promises';
import { JsonParseError } from '../canonical/errors.js';
import { type JsonValue, parseJson } from '../canonical/parse-json.js';
import type { CliIo } from './command.js';

/** Untrusted JSON input could not be read or parsed; the message names the file and the position. */
export class InputProblem extends Error {}

/** Reads FILE (or stdin for `-`) and parses it strictly. */
export async function readJsonInput(source: string, io: CliIo): Promise<JsonValue> {
  let text: string;
  try {
    text = source === '-' ? await io.stdin() : await readFile(source, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InputProblem(`${source}: cannot read (${code ?? 'error'})`);
  }
  try {
    return parseJson(text, { maxLength: 64 * 1024 * 1024 });
  } catch (error) {
    if (error instanceof JsonParseError) {
      throw new InputProblem(
        `${source === '-' ? 'stdin' : source}: line ${error.line}, column ${error.column} (position ${error.position}): ${error.reason} — ${error.message}`,
      );
    }
    throw error;
  }
}
