import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const WORKER = fileURLToPath(new URL('../../support/worker.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** How a child process ended. */
export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A running worker process (test/support/worker.ts). */
export interface WorkerProcess {
  readonly pid: number;
  readonly exited: Promise<Exit>;
  /** Resolves once the process is stopped (SIGSTOP); rejects if it exits first. */
  stopped(timeoutMs?: number): Promise<void>;
  signal(signal: NodeJS.Signals): void;
}

/** Starts `node --import tsx test/support/worker.ts <task> ...args`. */
export function startWorker(task: string, args: readonly string[]): WorkerProcess {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', WORKER, task, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_NO_WARNINGS: '1' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  let done = false;
  const exited = new Promise<Exit>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      done = true;
      resolve({ code, signal, stdout, stderr });
    });
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('the worker did not start');
  return {
    pid,
    exited,
    signal: (s) => {
      if (!done) process.kill(pid, s);
    },
    stopped: async (timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (done) throw new Error(`worker ${pid} exited before it stopped: ${stderr.slice(0, 2_000)}`);
        if (processState(pid) === 'T') return;
        if (Date.now() > deadline) throw new Error(`worker ${pid} did not stop within ${timeoutMs} ms`);
        await sleep(5);
      }
    },
  };
}

/** Runs a worker to its end. */
export function runWorker(task: string, args: readonly string[]): Promise<Exit> {
  return startWorker(task, args).exited;
}

/** Runs a worker that must exit 0 and print one JSON line; returns it parsed. */
export async function runWorkerJson<T>(task: string, args: readonly string[]): Promise<T> {
  const exit = await runWorker(task, args);
  if (exit.code !== 0)
    throw new Error(`worker ${task} exited ${exit.code ?? exit.signal}: ${exit.stderr.slice(0, 4_000)}`);
  return lastJson<T>(exit.stdout);
}

/** The last JSON line a worker printed. */
export function lastJson<T>(stdout: string): T {
  const line = stdout.trim().split('\n').at(-1);
  if (!line) throw new Error('the worker printed nothing');
  return JSON.parse(line) as T;
}

// The state letter of /proc/PID/stat (R running, S sleeping, T stopped, Z zombie), or '' when gone.
function processState(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return '';
  }
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs `tasks` with at most `limit` in flight. */
export async function pool<T>(limit: number, tasks: readonly (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, tasks.length) }, async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  });
  await Promise.all(lanes);
  return results;
}
