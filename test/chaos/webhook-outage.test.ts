import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../notify/support/receiver.js';
import { freePort } from './support/cluster.js';
import { demoTokens, Load, type Tokens } from './support/load.js';
import { NOT_BUILT, ServeChildren } from './support/serve-child.js';
import { CHAOS, LARGE } from './support/sizes.js';
import { countersign, expectHeld, reportChaos, verify } from './support/verify.js';

// Scenario 4: `countersign serve --demo --webhook …` under load while its webhook receiver first
// refuses connections, then answers 500, then recovers. Approvals are not held up by it, the
// deliveries are retried and every proposal's `proposal.created` arrives (at least once, signed),
// nothing is left pending or dead, and nothing crashes.
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const dir = mkdtempSync(join(tmpdir(), 'countersign-chaos-webhook-'));
const children = new ServeChildren();
let receiver: Receiver | undefined;
// What every receiver of the run heard: each outage closes one and starts another.
const heard: Receiver['received'] = [];
afterAll(async () => {
  await children.stopAll();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Delivery {
  readonly status: string;
  readonly lastError: string | null;
}

async function deliveries(url: string, tokens: Tokens, status: string): Promise<Delivery[]> {
  const all: Delivery[] = [];
  for (const tenant of ['acme', 'globex'] as const) {
    const r = await fetch(`${url}/api/v1/deliveries?status=${status}&limit=200`, {
      headers: { authorization: `Bearer ${tokens[tenant].admin}` },
    });
    if (r.status !== 200) throw new Error(`GET /api/v1/deliveries: ${r.status} ${await r.text()}`);
    all.push(...((await r.json()) as { items: Delivery[] }).items);
  }
  return all;
}

/** Polls `check` every 200 ms until it holds; throws after `timeoutMs`. */
async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe.skipIf(NOT_BUILT !== undefined)(
  `a webhook receiver outage${NOT_BUILT ? ` (skipped: ${NOT_BUILT})` : ''}`,
  () => {
    it(
      `× ${CHAOS.webhookOutages} (refused, then 500s, then back): approvals unaffected, every event delivered after it recovers, nothing crashes`,
      async () => {
        const port = await freePort();
        const hook = `http://127.0.0.1:${port}/hooks`;
        const db = join(dir, 'countersign.db');
        const serve = await children.start(
          ['--demo', '--db', db, '--webhook', hook, '--webhook-secret', SECRET],
          dir,
        );
        const tokens = await demoTokens(dir, db, 4);
        const load = new Load(serve.url, { tokens, lanes: CHAOS.lanes, failFast: () => children.crashed() });
        const figures = { outages: 0, refusedSeen: 0, answered500: 0, okDuringOutage: 0 };
        load.start();
        try {
          for (let i = 0; i < CHAOS.webhookOutages; i++) {
            // Down: nothing listens on the port.
            await receiver?.close();
            if (receiver) heard.push(...receiver.received);
            figures.outages++;
            const okBefore = load.tally.ok;
            await until(
              async () =>
                (await deliveries(serve.url, tokens, 'pending')).some(
                  (d) => d.lastError === 'connection_refused',
                ),
              60_000,
              'a delivery refused',
            );
            figures.refusedSeen++;
            // Up, but failing: every request answered 500.
            receiver = await startReceiver(port);
            receiver.script([], 500);
            await receiver.waitFor(3, 60_000);
            // Approvals went on meanwhile: the outbox is written in the decision's transaction,
            // the sending happens elsewhere.
            await load.waitForAnswers(10, 60_000, ['ok']);
            figures.okDuringOutage += load.tally.ok - okBefore;
            figures.answered500 += receiver.received.filter((r) => r.reply === 500).length;
            receiver.script([], 204);
            await load.waitForAnswers(10, 60_000, ['ok']);
          }
        } finally {
          await load.stop();
        }
        // Retried on its schedule (1 s, 5 s, 30 s, …): every delivery ends delivered.
        await until(
          async () => (await deliveries(serve.url, tokens, 'pending')).length === 0,
          LARGE ? 600_000 : 120_000,
          'no delivery pending',
        );
        const dead = await deliveries(serve.url, tokens, 'dead');
        const everything = [...heard, ...receiver!.received];
        const created = new Set<string>();
        let badSignatures = 0;
        for (const r of everything) {
          if (r.reply !== 204) continue;
          try {
            new Webhook(SECRET).verify(r.body, r.headers);
          } catch {
            badSignatures++;
          }
          const event = JSON.parse(r.body) as { type: string; data: { proposalId: string } };
          if (event.type === 'proposal.created') created.add(event.data.proposalId);
        }
        const undelivered = [...load.proposed.keys()].filter((id) => !created.has(id));
        const seen = everything.map((r) => r.headers['webhook-id']);
        const verdict = await verify(serve.url, tokens, load, join(dir, 'countersign-demo-provider.jsonl'));
        const audit = await countersign(['audit', 'verify', '--db', db], dir);
        const report = {
          ...figures,
          webhookRequests: everything.length,
          eventsDelivered: new Set(
            everything.filter((r) => r.reply === 204).map((r) => r.headers['webhook-id']),
          ).size,
          redelivered: seen.length - new Set(seen).size,
          undeliveredCreated: undelivered.length,
          dead: dead.length,
          badSignatures,
          unexpectedExits: children.unexpectedExits.length,
          ...load.figures(),
          payments: verdict.payments,
          doublePayments: verdict.doublePayments,
          lost: verdict.lost + verdict.lostApprovals,
          audit: audit.out.trim().split('\n').at(-1) ?? '',
        };
        reportChaos({
          scenario: 'webhook outage',
          backend: 'sqlite',
          faults: figures.outages,
          figures: report,
        });
        const context = expectHeld({
          serve,
          children,
          load,
          verdict,
          audit,
          extra: { report, undelivered: undelivered.slice(0, 5) },
        });
        expect(figures.okDuringOutage, context).toBeGreaterThan(0);
        expect(figures.answered500, context).toBeGreaterThan(0);
        expect(undelivered, context).toEqual([]);
        expect(dead, context).toEqual([]);
        expect(badSignatures, context).toBe(0);
      },
      LARGE ? 20 * 60_000 : 180_000,
    );
  },
);
