import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { demoTokens, Load } from './support/load.js';
import { NOT_BUILT, ServeChildren } from './support/serve-child.js';
import { CHAOS, LARGE } from './support/sizes.js';
import { countersign, expectHeld, reportChaos, verify } from './support/verify.js';

// Scenario 3: the SQLite file of `countersign serve --demo` on an 8 MiB tmpfs that the test fills
// under load. Writes must answer 503 store_unavailable (disk_full) with Retry-After, reads still
// answer, and once the filler is deleted the server writes again by itself: no restart, no crash.
const dir = mkdtempSync(join(tmpdir(), 'countersign-chaos-disk-'));
// Whether this machine lets the test mount a small disk (root, or a container allowing it).
function tryMount(): string | undefined {
  if (NOT_BUILT) return NOT_BUILT;
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', dir], { encoding: 'utf8' });
  if (r.error) return `mount is not available (${r.error.message})`;
  return r.status === 0
    ? undefined
    : `mount -t tmpfs is not permitted here: ${r.stderr.trim() || `exit ${r.status}`}`;
}
const skip = tryMount();
const mounted = skip === undefined;
const children = new ServeChildren();
afterAll(async () => {
  await children.stopAll();
  if (mounted) spawnSync('umount', [dir]);
  rmSync(dir, { recursive: true, force: true });
});

/** Writes zeros to `path` until the disk refuses (ENOSPC); returns the bytes written. */
function fill(path: string): number {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  let written = 0;
  try {
    for (;;) written += writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  return written;
}

describe.skipIf(!mounted)(`a full disk under the SQLite file${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it(
    `× ${CHAOS.diskFulls}: writes answer 503 disk_full with Retry-After, reads answer, writes resume by themselves once space is freed`,
    async () => {
      const db = join(dir, 'countersign.db');
      const serve = await children.start(['--demo', '--db', db], dir);
      const tokens = await demoTokens(dir, db, 4);
      const load = new Load(serve.url, { tokens, lanes: CHAOS.lanes, failFast: () => children.crashed() });
      const figures = { fills: 0, filledBytes: 0, readsWhileFull: 0, healthzWhileFull: 0 };
      load.start();
      try {
        await load.waitForAnswers(10, 60_000, ['ok']);
        for (let i = 0; i < CHAOS.diskFulls; i++) {
          const filler = join(dir, 'filler');
          figures.filledBytes += fill(filler);
          figures.fills++;
          // The WAL has some room left: the disk is full once a write is refused for it.
          // and it stays full for a while of refused writes.
          const refusedBefore = load.reasons.get('503 disk_full') ?? 0;
          await load.waitFor(
            () => (load.reasons.get('503 disk_full') ?? 0) >= refusedBefore + (LARGE ? 50 : 10),
            60_000,
            '503 disk_full',
          );
          const full = await load.request(
            'GET',
            '/api/v1/proposals?status=pending&limit=5',
            tokens.acme.operator,
          );
          expect(full?.status, JSON.stringify(full?.body)).toBe(200);
          figures.readsWhileFull++;
          const health = await fetch(`${serve.url}/healthz`);
          expect(health.status).toBe(200);
          figures.healthzWhileFull++;
          const proposedBefore = load.proposed.size;
          rmSync(filler);
          // Nobody restarts anything: the next writes succeed by themselves.
          await load.waitFor(
            () => load.proposed.size >= proposedBefore + 3,
            60_000,
            'proposals after the disk was freed',
          );
          await load.waitForAnswers(5, 60_000, ['ok']);
        }
      } finally {
        await load.stop();
      }
      const verdict = await verify(serve.url, tokens, load, join(dir, 'countersign-demo-provider.jsonl'));
      const audit = await countersign(['audit', 'verify', '--db', db], dir);
      const report = {
        ...figures,
        unexpectedExits: children.unexpectedExits.length,
        ...load.figures(),
        payments: verdict.payments,
        doublePayments: verdict.doublePayments,
        lost: verdict.lost + verdict.lostApprovals,
        paidButNotRecorded: verdict.paidButNotRecorded,
        audit: audit.out.trim().split('\n').at(-1) ?? '',
      };
      reportChaos({ scenario: 'disk full', backend: 'sqlite', faults: figures.fills, figures: report });
      expectHeld({ serve, children, load, verdict, audit, extra: { report } });
    },
    LARGE ? 20 * 60_000 : 150_000,
  );
});
