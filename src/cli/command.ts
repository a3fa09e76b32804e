import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Where a command writes; tests pass buffers, the binary passes the process streams. */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly stdin: () => Promise<string>;
  /** Resolves when the command should stop (SIGTERM/SIGINT for long-running commands). */
  readonly signal?: AbortSignal;
}

/** The options a command declares, in node:util parseArgs form. */
export type CliOptions = NonNullable<ParseArgsConfig['options']>;

/** Parsed arguments of one command. */
export interface CliArgs {
  readonly values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  readonly positionals: string[];
}

/** One `countersign` subcommand. Exit codes: 0 ok, 1 a finding (a difference, a broken chain), 2 bad input. */
export interface Command {
  /** Words after `countersign`, e.g. `['audit', 'verify']`. */
  readonly path: readonly string[];
  readonly summary: string;
  /** The usage line(s) and a description, shown by `--help`. */
  readonly help: string;
  readonly options: CliOptions;
  readonly positionals?: { readonly min: number; readonly max: number };
  run(args: CliArgs, io: CliIo): Promise<number>;
}

/** Bad command-line input: printed with the command's usage, exit code 2. */
export class UsageProblem extends Error {}

/** Parses argv for one command, strictly: unknown options are a usage problem. */
export function parseCommandArgs(command: Command, argv: readonly string[]): CliArgs {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options: command.options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageProblem(error instanceof Error ? error.message : String(error));
  }
  const { min, max } = command.positionals ?? { min: 0, max: 0 };
  if (parsed.positionals.length < min || parsed.positionals.length > max) {
    throw new UsageProblem(
      min === max
        ? `expected ${min} argument${min === 1 ? '' : 's'}, got ${parsed.positionals.length}`
        : `expected ${min} to ${max} arguments, got ${parsed.positionals.length}`,
    );
  }
  return { values: parsed.values as CliArgs['values'], positionals: parsed.positionals };
}

/** Reads a string option, or undefined. */
export function stringOption(args: CliArgs, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === 'string' ? value : undefined;
}

/** Reads a required string option or throws a usage problem naming it. */
export function requiredOption(args: CliArgs, name: string): string {
  const value = stringOption(args, name);
  if (value === undefined || value === '') throw new UsageProblem(`--${name} is required`);
  return value;
}
