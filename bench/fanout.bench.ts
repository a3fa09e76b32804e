/**
 * Live-event fan-out benchmark. Run with `npm run bench:fanout` (`-- --json` for the figures).
 *
 * One process: a real @hono/node-server over a SQLite file (WAL), `countersign serve`'s app, and
 * the same approval as `bench:http` (`POST /api/v1/proposals/:id/approve`, an operator bearer
 * token, keep-alive, one client at a time). Each round measures two ways, in alternating order:
 * - none: approvals with no live-event stream open (the baseline);
 * - subscribed: the same approvals while SUBSCRIBERS clients (40 operators × 5 streams, the
 *   per-principal cap) hold `GET /api/v1/events` open and read every event it sends.
 * The streams poll at the default interval (1 s); each way approves for several intervals.
 * Latency is reported as the median over rounds of each round's p50 ratio (subscribed / none).
 * Memory: heap and RSS after a full GC, just before each round's streams open and just after they
 * closed (every handler ended, the shared feed empty), as the median of per-round ratios; also
 * before the first stream ever opened against after the last closed, and the peak while open.
 * The SSE clients run in the same process, so their sockets and buffers count too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, type ClientRequest, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { demoOperations, demoWorld } from '../src/demo/demo-world.js';
import { createEngine } from '../src/index.js';
import { createCountersignApp, EventStreams, PrincipalDirectory, startServer } from '../src/server/index.js';
import { SqliteStore } from '../src/store/sqlite/index.js';
import { BENCH_LIMITS } from './bench-limits.js';
import { printJsonResult } from './json-result.js';

const ROUNDS = 5;
const PER_ROUND = 400;
const SUBSCRIBERS = 200;
const STREAMS_PER_OPERATOR = 5;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-fanout-'));
const store = new SqliteStore({ path: join(dir, 'bench.db') });
const world = demoWorld();
const engine = await createEngine({ store, operations: demoOperations(world), limits: BENCH_LIMITS });
// Passwords are never checked here: the cheapest scrypt cost keeps 41 operators quick to add.
const directory = new PrincipalDirectory(store, { passwordCost: 2 ** 10 });
await directory.migrate();
await directory.ensureTenant('acme');
await directory.addOperator({
  tenant: 'acme',
  email: 'approver@acme.test',
  password: 'benchmark password',
  roles: ['approver'],
});
const approverToken = await directory.issueOperatorToken({ email: 'approver@acme.test' });
const viewerTokens: string[] = [];
for (let i = 0; i < SUBSCRIBERS / STREAMS_PER_OPERATOR; i++) {
  const email = `viewer-${i}@acme.test`;
  await directory.addOperator({ tenant: 'acme', email, password: 'benchmark password', roles: ['viewer'] });
  viewerTokens.push(await directory.issueOperatorToken({ email }));
}
const events = new EventStreams();
const server = await startServer(createCountersignApp({ engine, directory, events }), {
  port: 0,
  onShutdown: () => events.close(),
});

let sequence = 0;
async function proposals(count: number): Promise<{ id: string; digest: string }[]> {
  const out: { id: string; digest: string }[] = [];
  for (let i = 0; i < count; i++) {
    const invoice = `inv-f${++sequence}`;
    world.invoices.add({
      tenant: 'acme',
      id: invoice,
      supplierName: 'Northwind Paper Co.',
      supplierAccount: 'acct-supplier-7',
      dueMinor: 24_049,
      currency: 'USD',
      status: 'open',
    });
    const r = await engine.proposals.propose({
      operation: 'invoice.pay',
      request: { invoice_id: invoice },
      tenant: 'acme',
      resource: `invoice:${invoice}`,
      requestedBy: 'agent:acme-assistant',
      runId: 'run-bench',
    });
    if (r.kind !== 'proposed') throw new Error(r.modelMessage);
    out.push({ id: r.proposal.id, digest: r.proposal.digest });
  }
  return out;
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/** One approval over HTTP; resolves when its response has arrived. */
function approve(p: { id: string; digest: string }): Promise<void> {
  const body = JSON.stringify({ seenDigest: p.digest });
  return new Promise((resolve, reject) => {
    const req = request(
      `${server.url}/api/v1/proposals/${p.id}/approve`,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${approverToken}`,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200 || !text.includes('"succeeded"'))
            reject(new Error(`approve: ${res.statusCode} ${text}`));
          else resolve();
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Approves every proposal one after another; each approval's latency in ms. */
async function approveAll(items: { id: string; digest: string }[]): Promise<number[]> {
  const latencies: number[] = [];
  for (const item of items) {
    const t = performance.now();
    await approve(item);
    latencies.push(performance.now() - t);
  }
  return latencies;
}

/** A live-event client that reads everything it is sent; counts the events. */
interface Subscriber {
  readonly request: ClientRequest;
  events: number;
  /** The server ended the stream (dropped it). */
  ended: boolean;
}

/** Opens `SUBSCRIBERS` streams; resolves once every one has its 200 and its first bytes. */
async function subscribe(): Promise<Subscriber[]> {
  const streamAgent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  return Promise.all(
    Array.from(
      { length: SUBSCRIBERS },
      (_, i) =>
        new Promise<Subscriber>((resolve, reject) => {
          const token = viewerTokens[Math.floor(i / STREAMS_PER_OPERATOR)]!;
          const req = request(`${server.url}/api/v1/events`, {
            agent: streamAgent,
            headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
          });
          const subscriber: Subscriber = { request: req, events: 0, ended: false };
          req.on('response', (res) => {
            if (res.statusCode !== 200) reject(new Error(`subscribe: ${res.statusCode}`));
            res.setEncoding('utf8');
            res.once('data', () => resolve(subscriber));
            // Count whole messages (an event ends with its id line), across chunk boundaries.
            let tail = '';
            res.on('data', (chunk: string) => {
              const text = tail + chunk;
              const parts = text.split('\n\n');
              tail = parts.pop() ?? '';
              for (const part of parts) if (part.includes('\nid: ')) subscriber.events++;
            });
            res.on('close', () => (subscriber.ended = true));
            res.on('error', () => (subscriber.ended = true));
          });
          req.on('error', () => {});
          req.end();
        }),
    ),
  );
}

async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** Closes every stream and waits until the server let go of all of them. */
async function unsubscribe(subscribers: Subscriber[]): Promise<void> {
  for (const s of subscribers) s.request.destroy();
  await until(() => events.open === 0 && events.feeds.tenants === 0);
}

const MiB = 1024 * 1024;
function memory(): { heap: number; rss: number } {
  gc();
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed / MiB, rss: m.rss / MiB };
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

// Warm-up: JIT, statement cache, keep-alive connections; no stream opened yet.
await approveAll(await proposals(200));
const before = memory();

type Way = 'none' | 'subscribed';
const latencies: Record<Way, number[]> = { none: [], subscribed: [] };
const ratios: number[] = [];
let peak = { heap: 0, rss: 0 };
const heapRatios: number[] = [];
// The same measure around the approvals without streams: what the approvals alone leave behind.
const controlHeapRatios: number[] = [];
const rssRatios: number[] = [];
let delivered = 0;
let dropped = 0;
let expected = 0;
for (let round = 0; round < ROUNDS; round++) {
  const order: Way[] = round % 2 === 0 ? ['none', 'subscribed'] : ['subscribed', 'none'];
  const p50: Partial<Record<Way, number>> = {};
  for (const way of order) {
    const items = await proposals(PER_ROUND);
    // Both ways start from a collected heap, so neither pays the other's garbage.
    const opening = memory();
    if (way === 'none') {
      const times = await approveAll(items);
      const closed = memory();
      controlHeapRatios.push(closed.heap / opening.heap);
      latencies.none.push(...times);
      p50.none = median(times);
      continue;
    }
    const subscribers = await subscribe();
    const times = await approveAll(items);
    latencies.subscribed.push(...times);
    p50.subscribed = median(times);
    // Every stream gets both events of every approval (decided, outcome) at the next poll.
    expected += SUBSCRIBERS * PER_ROUND * 2;
    process.stderr.write(`  ${way}: approvals done, waiting for every stream to get their events\n`);
    await until(
      () =>
        subscribers.every((s) => s.events >= PER_ROUND * 2 || s.ended) &&
        events.feeds.subscribers === subscribers.filter((s) => !s.ended).length,
    );
    dropped += subscribers.filter((s) => s.ended).length;
    delivered += subscribers.reduce((sum, s) => sum + s.events, 0);
    const open = process.memoryUsage();
    peak = { heap: Math.max(peak.heap, open.heapUsed / MiB), rss: Math.max(peak.rss, open.rss / MiB) };
    await unsubscribe(subscribers);
    const closed = memory();
    heapRatios.push(closed.heap / opening.heap);
    rssRatios.push(closed.rss / opening.rss);
  }
  ratios.push(p50.subscribed! / p50.none!);
  process.stderr.write(
    `round ${round + 1}/${ROUNDS}: p50 none ${p50.none!.toFixed(2)} ms, subscribed ${p50.subscribed!.toFixed(2)} ms\n`,
  );
}
const after = memory();

console.log(
  `countersign live-event fan-out benchmark — Node ${process.version}, ${ROUNDS} rounds × ${PER_ROUND} approvals per way, ${SUBSCRIBERS} subscribers, poll ${events.pollMs} ms`,
);
console.log(
  `events delivered to subscribers: ${delivered} of ${expected}; streams dropped for not keeping up: ${dropped}`,
);
console.log('');
console.log('way         p50 ms   p99 ms');
for (const way of ['none', 'subscribed'] as const) {
  const sorted = [...latencies[way]].sort((a, b) => a - b);
  const p99 = sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))]!;
  console.log(`${way.padEnd(10)}  ${median(sorted).toFixed(2).padStart(6)}  ${p99.toFixed(2).padStart(7)}`);
}
const latencyRatio = median(ratios);
console.log(
  `approval p50 with ${SUBSCRIBERS} subscribers / none: ${latencyRatio.toFixed(2)}× (median of per-round ratios ${ratios.map((r) => r.toFixed(2)).join(', ')}; target ≤ 1.3×)`,
);
console.log('');
console.log('memory (MiB, after GC)  before streams   peak open   after close   after/before');
console.log(
  `heap                    ${before.heap.toFixed(1).padStart(14)}  ${peak.heap.toFixed(1).padStart(10)}  ${after.heap.toFixed(1).padStart(12)}  ${(after.heap / before.heap).toFixed(2).padStart(12)}×`,
);
console.log(
  `RSS                     ${before.rss.toFixed(1).padStart(14)}  ${peak.rss.toFixed(1).padStart(10)}  ${after.rss.toFixed(1).padStart(12)}  ${(after.rss / before.rss).toFixed(2).padStart(12)}×`,
);
const heapRound = median(heapRatios);
const rssRound = median(rssRatios);
console.log(
  `per round (just before the streams opened → just after they closed), median: heap ${heapRound.toFixed(2)}×, RSS ${rssRound.toFixed(2)}× (target ≤ 1.10×)`,
);
console.log(
  `control, the same around the approvals without streams: heap ${median(controlHeapRatios).toFixed(2)}×`,
);
console.log(`the shared feed after the last close: ${JSON.stringify(events.feeds)}`);

agent.destroy();
await server.close();
await engine.close();
rmSync(dir, { recursive: true, force: true });
printJsonResult({
  subscribers: SUBSCRIBERS,
  dropped,
  latency_ratio: latencyRatio,
  none_p50_ms: median(latencies.none),
  subscribed_p50_ms: median(latencies.subscribed),
  heap_after_over_before: heapRound,
  rss_after_over_before: rssRound,
  heap_control: median(controlHeapRatios),
  heap_last_over_first: after.heap / before.heap,
  rss_last_over_first: after.rss / before.rss,
  heap_mib: { before: before.heap, peak: peak.heap, after: after.heap },
  rss_mib: { before: before.rss, peak: peak.rss, after: after.rss },
});
