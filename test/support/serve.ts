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

/**
 * Runs `countersign serve …` in this process, as the binary would, until it prints `ready URL`.
 * Waits on what it writes, not on a clock; a busy machine only makes it slower. A start that has
 * not printed `ready` after two minutes is stopped and reported with what it wrote.
 */
export async function serve(args: readonly string[]): Promise<RunningServe> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const output: RunningServe['output'] = [];
  const controller = new AbortController();
  let readyUrl: (url: string) => void = () => {};
  const ready = new Promise<string>((resolve) => {
    readyUrl = resolve;
  });
  const exit = runCli(['serve', ...args], {
    stdout: (t) => {
      stdout.push(t);
      output.push({ stream: 'stdout', text: t });
      const match = stdout.join('').match(/^ready (http:\/\/\S+)$/m);
      if (match) readyUrl(match[1]!);
    },
    stderr: (t) => {
      stderr.push(t);
      output.push({ stream: 'stderr', text: t });
    },
    stdin: async () => '',
    signal: controller.signal,
  });
  let timer: NodeJS.Timeout | undefined;
  const started = await Promise.race([
    ready.then((url) => ({ kind: 'ready' as const, url })),
    exit.then((code) => ({ kind: 'exited' as const, code })),
    new Promise<{ kind: 'slow' }>((resolve) => {
      timer = setTimeout(() => resolve({ kind: 'slow' }), 120_000);
    }),
  ]);
  clearTimeout(timer);
  if (started.kind === 'exited') throw new Error(`serve exited ${started.code}: ${stderr.join('')}`);
  if (started.kind === 'slow') {
    controller.abort();
    await exit;
    throw new Error(`serve never printed ready in 2 minutes: ${stderr.join('')}`);
  }
  return {
    url: started.url,
    stdout,
    stderr,
    output,
    stop: async () => {
      controller.abort();
      return exit;
    },
  };
}
