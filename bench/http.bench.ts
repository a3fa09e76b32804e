/**
 * HTTP approval benchmark. Run with `npm run bench:http`.
 *
 * The same approval (an `invoice.pay` of 240.49 USD through the fake payment provider, on a real
 * SQLite file in WAL mode) is measured two ways in one process:
 * - engine: `engine.approveAndExecute(...)` called directly (the baseline);
 * - HTTP: `POST /api/v1/proposals/:id/approve` with an operator bearer token over loopback to a
 *   real @hono/node-server (bearer lookup in the store, strict JSON parsing, the same engine call,
 *   a JSON response), from a node:http client with keep-alive connections.
 * For scale, it also times a bare loopback round trip (node:http server answering "ok").
 * Each way runs sequentially (1 client) and with 16 concurrent clients. Rounds alternate the order
 * of the two ways so drift in machine load hits both alike; every approval is timed on its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoOperations, demoWorld } from '../src/demo/demo-world.js';
import { type Actor, createEngine } from '../src/index.js';
import { BENCH_LIMITS } from './bench-limits.js';
import { createCountersignApp, PrincipalDirectory, startServer } from '../src/server/index.js';
import { KEEP_ALIVE_TIMEOUT_MS } from '../src/server/start-server.js';
import { SqliteStore } from '../src/store/sqlite/index.js';
import { printJsonResult } from './json-result.js';

const ROUNDS = 5;
const PER_ROUND = 300;
const CONCURRENCY = [1, 16] as const;

const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-http-'));
const store = new SqliteStore({ path: join(dir, 'bench.db') });
const world = demoWorld();
const engine = await createEngine({ store, operations: demoOperations(world), limits: BENCH_LIMITS });
const directory = new PrincipalDirectory(store);
await directory.migrate();
await directory.ensureTenant('acme');
await directory.addOperator({
  tenant: 'acme',
  email: 'approver@acme.test',
  password: 'benchmark password',
  roles: ['approver'],
});
const token = await directory.issueOperatorToken({ email: 'approver@acme.test' });
const server = await startServer(createCountersignApp({ engine, directory }), { port: 0 });
const approver: Actor = {
  kind: 'operator',
  id: 'user:approver@acme.test',
  tenant: 'acme',
  roles: ['approver'],
};

let sequence = 0;
async function proposals(count: number): Promise<{ id: string; digest: string }[]> {
  const out: { id: string; digest: string }[] = [];
  for (let i = 0; i < count; i++) {
    const invoice = `inv-b${++sequence}`;
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

type Approve = (p: { id: string; digest: string }) => Promise<void>;

const viaEngine: Approve = async (p) => {
  const r = await engine.proposals.approveAndExecute({
    tenant: 'acme',
    proposalId: p.id,
    approver,
    seenDigest: p.digest,
  });
  if (r.kind !== 'completed' || r.outcome.kind !== 'succeeded')
    throw new Error(`engine: ${JSON.stringify(r)}`);
};

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** One request over a keep-alive connection; resolves with the status and the body text. */
function send(url: string, method: 'GET' | 'POST', body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const req = request(url, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const viaHttp: Approve = async (p) => {
  const response = await send(
    `${server.url}/api/v1/proposals/${p.id}/approve`,
    'POST',
    JSON.stringify({ seenDigest: p.digest }),
  );
  const body = JSON.parse(response.text) as { outcome?: { kind: string } };
  if (response.status !== 200 || body.outcome?.kind !== 'succeeded')
    throw new Error(`http: ${response.status} ${response.text}`);
};

/** Approves every proposal with `concurrency` clients; returns each approval's latency (ms) and the wall time. */
async function run(approve: Approve, items: { id: string; digest: string }[], concurrency: number) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const item = items[next++]!;
        const t = performance.now();
        await approve(item);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { latencies, wallMs: performance.now() - started };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

// Warm-up: JIT, statement cache, keep-alive connections.
await run(viaEngine, await proposals(100), 4);
await run(viaHttp, await proposals(100), 4);

// The floor: a loopback round trip to a server that does nothing.
// The same keep-alive as countersign's server: with Node's 5 s, an idle pooled connection can be
// closed by the server just as the client reuses it (ECONNRESET on a loaded machine).
const bare = createServer({ keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS }, (_req, res) => res.end('ok'));
await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/`;
for (let i = 0; i < 200; i++) await send(bareUrl, 'GET');
const bareTimes: number[] = [];
for (let i = 0; i < 1000; i++) {
  const t = performance.now();
  await send(bareUrl, 'GET');
  bareTimes.push(performance.now() - t);
}
bare.close();

console.log(
  `countersign HTTP approval benchmark — Node ${process.version}, ${ROUNDS} rounds × ${PER_ROUND} approvals per way and concurrency`,
);
const bareSorted = [...bareTimes].sort((a, b) => a - b);
console.log(
  `bare loopback round trip (node:http, keep-alive): p50 ${percentile(bareSorted, 50).toFixed(2)} ms, p99 ${percentile(bareSorted, 99).toFixed(2)} ms`,
);
console.log('');
const figures: Record<
  string,
  { http_over_engine_throughput: number; http_p50_ms: number; engine_p50_ms: number }
> = {};
console.log('clients  way     approvals/s   p50 ms   p99 ms');
for (const concurrency of CONCURRENCY) {
  const totals = {
    engine: { latencies: [] as number[], wallMs: 0, count: 0 },
    http: { latencies: [] as number[], wallMs: 0, count: 0 },
  };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (['engine', 'http'] as const) : (['http', 'engine'] as const);
    for (const way of order) {
      const items = await proposals(PER_ROUND);
      const r = await run(way === 'engine' ? viaEngine : viaHttp, items, concurrency);
      totals[way].latencies.push(...r.latencies);
      totals[way].wallMs += r.wallMs;
      totals[way].count += items.length;
    }
  }
  const rows = (['engine', 'http'] as const).map((way) => {
    const t = totals[way];
    const sorted = [...t.latencies].sort((a, b) => a - b);
    return {
      way,
      perSecond: (t.count / t.wallMs) * 1000,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
    };
  });
  for (const r of rows) {
    console.log(
      `${String(concurrency).padStart(7)}  ${r.way.padEnd(6)}  ${r.perSecond.toFixed(0).padStart(11)}  ${r.p50.toFixed(2).padStart(7)}  ${r.p99.toFixed(2).padStart(7)}`,
    );
  }
  const [e, h] = rows as [(typeof rows)[number], (typeof rows)[number]];
  console.log(
    `         ratio   HTTP/engine throughput ${(h.perSecond / e.perSecond).toFixed(2)}×, p50 ${(h.p50 / e.p50).toFixed(2)}×, p99 ${(h.p99 / e.p99).toFixed(2)}× (HTTP adds ${(h.p50 - e.p50).toFixed(2)} ms at p50)`,
  );
  figures[String(concurrency)] = {
    http_over_engine_throughput: h.perSecond / e.perSecond,
    http_p50_ms: h.p50,
    engine_p50_ms: e.p50,
  };
}

agent.destroy();
await server.close();
await engine.close();
rmSync(dir, { recursive: true, force: true });
printJsonResult({ clients: figures });
