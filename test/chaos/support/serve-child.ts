import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The built binary (`npm run build`): what an operator runs, not the TypeScript sources. */
export const BIN = `${ROOT}dist/src/cli/main.js`;

/** Why the chaos suite cannot run, or undefined when the built binary is there. */
export const NOT_BUILT: string | undefined = existsSync(BIN)
  ? undefined
  : `${BIN} is missing: run npm run build first`;

// Output kept per child: the tail is what explains a crash, and the server logs every request.
const KEEP_CHARS = 200_000;

/** One `countersign serve` child process. */
export interface ServeChild {
  readonly pid: number;
  readonly url: string;
  /** The tail of what it wrote to stdout and stderr. */
  output(): string;
  /** Log lines at level error or fatal (pino 50, 60), up to 20 of them. */
  readonly errors: string[];
  alive(): boolean;
  /** SIGKILL, and resolves once it is gone. */
  kill(): Promise<void>;
}

/** How a child ended that the test did not kill. */
export interface UnexpectedExit {
  readonly pid: number;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly tail: string;
}

/**
 * Starts `countersign serve` children and keeps the books: each start, each exit the test did not
 * cause (the figure that must stay 0), and every child still running at the end ({@link stopAll}).
 */
export class ServeChildren {
  readonly unexpectedExits: UnexpectedExit[] = [];
  starts = 0;
  kills = 0;
  readonly #running = new Set<ChildProcess>();
  #stopping = false;

  /** Runs `node dist/src/cli/main.js serve …args` in `cwd` until it prints `ready URL`. */
  async start(args: readonly string[], cwd: string, timeoutMs = 90_000): Promise<ServeChild> {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
    });
    const pid = child.pid;
    if (pid === undefined) throw new Error('serve did not start');
    this.starts++;
    this.#running.add(child);
    let tail = '';
    let stdout = '';
    const errors: string[] = [];
    const keep = (text: string) => {
      tail = (tail + text).slice(-KEEP_CHARS);
    };
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      if (stdout.length < 10_000) stdout += d;
      keep(d);
    });
    let partial = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      keep(d);
      const lines = (partial + d).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines)
        if (errors.length < 20 && /"level":(50|60)/.test(line)) errors.push(line.slice(0, 2_000));
    });
    let killing = false;
    let gone = false;
    const exited = new Promise<void>((resolve) => {
      child.once('close', (code, signal) => {
        gone = true;
        this.#running.delete(child);
        if (!killing && !this.#stopping)
          this.unexpectedExits.push({ pid, code, signal, tail: tail.slice(-4_000) });
        resolve();
      });
    });
    const kill = async () => {
      if (gone) return;
      killing = true;
      this.kills++;
      child.kill('SIGKILL');
      await exited;
    };
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const ready = stdout.match(/^ready (http:\/\/\S+)$/m);
      if (ready) return { pid, url: ready[1]!, output: () => tail, errors, alive: () => !gone, kill };
      if (gone) throw new Error(`serve exited before it was ready:\n${tail.slice(-4_000)}`);
      if (Date.now() > deadline) {
        await kill();
        throw new Error(`serve was not ready within ${timeoutMs} ms:\n${tail.slice(-4_000)}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** The first exit the test did not cause, described with the tail of its output; undefined if none. */
  crashed(): string | undefined {
    const exit = this.unexpectedExits[0];
    return (
      exit && `serve ${exit.pid} exited (code ${exit.code}, signal ${exit.signal}) by itself:\n${exit.tail}`
    );
  }

  /** SIGKILLs every child still running (afterAll, failed or not). */
  async stopAll(): Promise<void> {
    this.#stopping = true;
    await Promise.all(
      [...this.#running].map(
        (child) =>
          new Promise<void>((resolve) => {
            child.once('close', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
  }
}
