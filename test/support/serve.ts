import { runCli } from '../../src/cli/run-cli.js';

/** A `countersign serve` running in this process. */
export interface RunningServe {
  readonly url: string;
  readonly stdout: string[];
  readonly stderr: string[];
  /** Both streams in the order they were written. */
  readonly output: { readonly stream: 'stdout' | 'stderr'; readonly text: string }[];
  /** Aborts it as SIGTERM would and returns its exit code. */
  stop(): Promise<number>;
}

/** Runs `countersign serve …` in this process, as the binary would, until it prints `ready URL`. */
export async function serve(args: readonly string[]): Promise<RunningServe> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const output: RunningServe['output'] = [];
  const controller = new AbortController();
  const exit = runCli(['serve', ...args], {
    stdout: (t) => {
      stdout.push(t);
      output.push({ stream: 'stdout', text: t });
    },
    stderr: (t) => {
      stderr.push(t);
      output.push({ stream: 'stderr', text: t });
    },
    stdin: async () => '',
    signal: controller.signal,
  });
  const deadline = Date.now() + 20_000;
  for (;;) {
    const ready = stdout.join('').match(/^ready (http:\/\/\S+)$/m);
    if (ready) {
      return {
        url: ready[1]!,
        stdout,
        stderr,
        output,
        stop: async () => {
          controller.abort();
          return exit;
        },
      };
    }
    const early = await Promise.race([
      exit,
      new Promise<undefined>((r) => setTimeout(() => r(undefined), 25)),
    ]);
    if (early !== undefined) throw new Error(`serve exited ${early}: ${stderr.join('')}`);
    if (Date.now() > deadline) throw new Error(`serve never printed ready: ${stderr.join('')}`);
  }
}
