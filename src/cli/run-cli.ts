import { CountersignError } from '../canonical/errors.js';
import { type CliIo, type Command, parseCommandArgs, UsageProblem } from './command.js';
import { COMMANDS } from './commands/index.js';

function findCommand(argv: readonly string[]): { command: Command; rest: readonly string[] } | undefined {
  let best: Command | undefined;
  for (const command of COMMANDS) {
    const matches = command.path.every((word, i) => argv[i] === word);
    if (matches && (!best || command.path.length > best.path.length)) best = command;
  }
  return best ? { command: best, rest: argv.slice(best.path.length) } : undefined;
}

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.path.join(' ').length));
  return [
    'countersign — human-approved AI agent operations',
    '',
    'Usage: countersign <command> [options]   (countersign <command> --help for details)',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.path.join(' ').padEnd(width)}  ${c.summary}`),
    '',
  ].join('\n');
}

/** The commands under a group such as `audit` (`countersign audit --help`), or undefined when none. */
function groupHelp(words: readonly string[]): string | undefined {
  const members = COMMANDS.filter(
    (c) => c.path.length > words.length && words.every((word, i) => c.path[i] === word),
  );
  if (words.length === 0 || members.length === 0) return undefined;
  const width = Math.max(...members.map((c) => c.path.join(' ').length));
  return [
    `Usage: countersign ${words.join(' ')} <command> [options]   (countersign ${words.join(' ')} <command> --help for details)`,
    '',
    'Commands:',
    ...members.map((c) => `  ${c.path.join(' ').padEnd(width)}  ${c.summary}`),
    '',
  ].join('\n');
}

/** Runs the CLI with explicit arguments and streams; returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    io.stdout(overview());
    return argv.length === 0 ? 2 : 0;
  }
  const found = findCommand(argv);
  if (!found) {
    const help = argv.at(-1) === '--help' || argv.at(-1) === '-h' ? groupHelp(argv.slice(0, -1)) : undefined;
    if (help !== undefined) {
      io.stdout(help);
      return 0;
    }
    io.stderr(`countersign: unknown command "${argv.join(' ')}"\n\n${overview()}`);
    return 2;
  }
  const { command, rest } = found;
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout(`${command.help.trimEnd()}\n`);
    return 0;
  }
  try {
    return await command.run(parseCommandArgs(command, rest), io);
  } catch (error) {
    if (error instanceof UsageProblem) {
      io.stderr(`countersign ${command.path.join(' ')}: ${error.message}\n\n${command.help.trimEnd()}\n`);
      return 2;
    }
    if (error instanceof CountersignError) {
      io.stderr(`countersign ${command.path.join(' ')}: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}
