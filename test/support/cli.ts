import { runCli } from '../../src/cli/run-cli.js';

/** What one in-process `countersign …` run printed, and its exit code. */
export interface CliRun {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** Runs `countersign argv…` in this process as the binary would, capturing stdout and stderr. */
export async function cli(argv: readonly string[], stdin = ''): Promise<CliRun> {
  let out = '';
  let err = '';
  const code = await runCli([...argv], {
    stdout: (t) => {
      out += t;
    },
    stderr: (t) => {
      err += t;
    },
    stdin: async () => stdin,
  });
  return { code, out, err };
}
