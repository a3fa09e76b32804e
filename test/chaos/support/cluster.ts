import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

// The PostgreSQL binaries: COUNTERSIGN_CHAOS_PG_BIN, else the newest /usr/lib/postgresql/N/bin.
function findBin(): string | undefined {
  const given = process.env['COUNTERSIGN_CHAOS_PG_BIN'];
  if (given) return existsSync(join(given, 'pg_ctl')) ? given : undefined;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : undefined;
}

const BIN = findBin();
// initdb refuses root: as root the cluster belongs to the `postgres` OS user.
const AS_ROOT = userInfo().uid === 0;
function postgresUser(): { uid: number; gid: number } | undefined {
  const r = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const g = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  return r.status === 0 && g.status === 0 ? { uid: Number(r.stdout), gid: Number(g.stdout) } : undefined;
}
const OWNER = AS_ROOT ? postgresUser() : undefined;

/**
 * Why the PostgreSQL chaos scenarios cannot run here (no binaries, or root without a `postgres`
 * user), or undefined. They make a throwaway cluster of their own: restarting or pausing a shared
 * server would break everyone else's tests.
 */
export const NO_CLUSTER: string | undefined = !BIN
  ? 'no PostgreSQL binaries (set COUNTERSIGN_CHAOS_PG_BIN to a directory with initdb and pg_ctl)'
  : AS_ROOT && !OWNER
    ? 'running as root and there is no postgres OS user to own a throwaway cluster'
    : undefined;

/** A free TCP port on loopback (asked of the OS, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A throwaway PostgreSQL cluster on a port of its own, which the test may restart, stop and pause. */
export interface Cluster {
  /** `postgres://postgres@127.0.0.1:PORT/postgres`. */
  readonly url: string;
  /** Stops it: `fast` ends sessions cleanly, `immediate` is a crash (recovery at the next start). */
  stop(mode: 'fast' | 'immediate'): void;
  start(): void;
  /** SIGSTOPs the postmaster and every backend (a stalled host), returning what was stopped. */
  pause(): number[];
  /** SIGCONTs what {@link pause} stopped. */
  resume(): void;
  /** pg_terminate_backend on every connection of `countersign serve`; how many were ended. */
  terminate(): Promise<number>;
  /** Stops it (immediate) and removes its files. Safe to call twice, and after a failure. */
  dispose(): void;
}

function run(args: readonly string[]): string {
  const [command, ...rest] = AS_ROOT ? ['runuser', '-u', 'postgres', '--', ...args] : args;
  return execFileSync(command!, rest, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

// The process's children by /proc/PID/stat's ppid: the postmaster's backends and workers.
function childrenOf(parent: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) found.push(Number(entry));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return found;
}

/** Creates and starts a throwaway cluster (trust auth, loopback only, fsync off: it is thrown away). */
export async function startCluster(): Promise<Cluster> {
  if (NO_CLUSTER) throw new Error(NO_CLUSTER);
  const dir = mkdtempSync('/tmp/countersign-chaos-pg-');
  if (OWNER) chownSync(dir, OWNER.uid, OWNER.gid);
  const data = join(dir, 'data');
  const log = join(dir, 'postgres.log');
  const port = await freePort();
  run([join(BIN!, 'initdb'), '-D', data, '--auth=trust', '-U', 'postgres', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`;
  let stopped: number[] = [];
  let disposed = false;
  const start = () => {
    run([join(BIN!, 'pg_ctl'), '-D', data, '-o', options, '-l', log, '-w', '-t', '60', 'start']);
  };
  start();
  const postmaster = () => Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    start,
    stop: (mode) => {
      run([join(BIN!, 'pg_ctl'), '-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
    },
    pause: () => {
      const main = postmaster();
      // The postmaster first, so it does not notice its children stopping.
      process.kill(main, 'SIGSTOP');
      stopped = [main];
      for (const pid of childrenOf(main)) {
        try {
          process.kill(pid, 'SIGSTOP');
          stopped.push(pid);
        } catch {
          // Exited meanwhile.
        }
      }
      return stopped;
    },
    resume: () => {
      for (const pid of [...stopped].reverse()) {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          // Exited meanwhile.
        }
      }
      stopped = [];
    },
    terminate: async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const r = await client.query(
          "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE application_name = 'countersign'",
        );
        return r.rows.filter((row: { ended: boolean }) => row.ended).length;
      } finally {
        await client.end();
      }
    },
    dispose: () => {
      if (disposed) return;
      disposed = true;
      for (const pid of stopped) {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          // Gone.
        }
      }
      try {
        run([join(BIN!, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // Already stopped.
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
