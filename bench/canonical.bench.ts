/**
 * Canonical JSON and digest benchmark. Run with `npm run bench:canonical`.
 *
 * For three realistic payloads (~350 B, ~20 KB, ~2 MB) it times, in one process:
 * - canonical: `digest(value)`, i.e. canonicalize (written straight to UTF-8 bytes) + SHA-256;
 * - JSON.stringify: `JSON.stringify(value)` + SHA-256, the non-canonical baseline;
 * - hash only: SHA-256 of the same canonical bytes, made in advance (the floor).
 * The variants are interleaved round by round, in a rotating order, and the median of the
 * per-round timings is reported, so drift in machine load hits all three alike.
 */
import * as crypto from 'node:crypto';
import { canonicalize } from '../src/canonical/canonicalize.js';
import { digest } from '../src/canonical/digest.js';
import { printJsonResult } from './json-result.js';

/** SHA-256 hex by the same means digest() uses: crypto.hash where Node has it (20.12+). */
const sha256 =
  typeof crypto.hash === 'function'
    ? (data: string | Buffer) => crypto.hash('sha256', data, 'hex')
    : (data: string | Buffer) => crypto.createHash('sha256').update(data).digest('hex');

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Deterministic pseudo-random numbers (mulberry32), so every run measures the same data. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  'widget',
  'blue',
  'service',
  'fee',
  'café',
  'Größe',
  'support',
  'licence',
  'monthly',
  'déjà',
  'annual',
  '"premium"',
  'tier',
  'hours',
  '€ rounding',
  'Zürich',
];

function words(next: () => number, count: number): string {
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(WORDS[Math.floor(next() * WORDS.length)]!);
  return out.join(' ');
}

function line(next: () => number, index: number): Json {
  const quantity = 1 + Math.floor(next() * 20);
  const unit = 100 + Math.floor(next() * 100_000);
  return {
    line_id: `li_${index.toString(36).padStart(6, '0')}`,
    sku: `SKU-${Math.floor(next() * 1e6)}`,
    description: words(next, 3 + Math.floor(next() * 6)),
    quantity,
    unit_amount_minor: unit,
    amount_minor: quantity * unit,
    tax: { rate: [0, 0.07, 0.19, 0.2][Math.floor(next() * 4)]!, code: next() < 0.5 ? 'VAT' : 'GST' },
    discount: next() < 0.2 ? { percent: Math.round(next() * 2500) / 100 } : null,
    tags: next() < 0.5 ? ['recurring', 'eu'] : [],
    period: [1_704_067_200 + index * 86_400, 1_706_745_600 + index * 86_400],
  };
}

function invoice(next: () => number, id: number, lines: number): Json {
  const items: Json[] = [];
  for (let i = 0; i < lines; i++) items.push(line(next, i));
  return {
    invoice_id: `inv_${id}`,
    tenant_id: 'ten_acme',
    customer: {
      id: `cus_${Math.floor(next() * 1e9)}`,
      name: 'Acme Café GmbH',
      email: 'billing@acme.example',
      address: { line1: 'Bahnhofstrasse 1', city: 'Zürich', country: 'CH' },
    },
    currency: 'EUR',
    amount_due_minor: Math.floor(next() * 1e7),
    paid: false,
    due_date: '2025-03-31',
    memo: lines > 0 ? 'Thank you for your business.\nQuestions? Reply to this e-mail.' : 'Net 30',
    lines: items,
    schedule: [
      [1, 0.5],
      [2, 0.25],
      [3, 0.25],
    ],
  };
}

function smallPayload(): Json {
  return {
    operation: 'invoice.pay',
    invoice_id: 'inv_2041',
    tenant_id: 'ten_acme',
    destination_account_id: 'acct_supplier_7',
    amount_minor: 24_049,
    currency: 'EUR',
    customer: { id: 'cus_88', name: 'Acme Café GmbH', email: 'billing@acme.example' },
    tax: { rate: 0.19, code: 'VAT' },
    requested_by: 'usr_42',
    approve_before: '2025-03-31T12:00:00Z',
  };
}

function mediumPayload(): Json {
  return invoice(random(2), 1, 76);
}

function largePayload(): Json {
  const next = random(3);
  const invoices: Json[] = [];
  for (let i = 0; i < 128; i++) invoices.push(invoice(next, i, 60));
  return { batch_id: 'bat_1', invoices };
}

type Variant = { readonly name: string; readonly run: () => string };

/** Nanoseconds per operation of `batch` calls. */
function time(run: () => string, batch: number): number {
  let sink = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < batch; i++) sink += run().length;
  const elapsed = Number(process.hrtime.bigint() - start);
  if (sink === 0) throw new Error('unreachable: keeps the result alive');
  return elapsed / batch;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

type Row = {
  readonly payload: string;
  readonly bytes: number;
  readonly canonical: number;
  readonly stringify: number;
  readonly floor: number;
  readonly targetName: string;
  readonly target: number;
  readonly ratio: number;
};

function measure(
  payload: string,
  value: Json,
  rounds: number,
  batch: number,
  target: { readonly name: 'floor' | 'stringify'; readonly max: number },
): Row {
  const bytes = Buffer.from(canonicalize(value), 'utf8');
  const variants: Variant[] = [
    { name: 'canonical', run: () => digest(value).sha256 },
    { name: 'stringify', run: () => sha256(JSON.stringify(value)) },
    { name: 'floor', run: () => sha256(bytes) },
  ];
  const samples = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  // Warm-up: let the JIT settle on every variant before anything is recorded.
  for (let i = 0; i < Math.max(3, rounds >> 3); i++) for (const v of variants) time(v.run, batch);
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < variants.length; i++) {
      const v = variants[(round + i) % variants.length]!;
      samples.get(v.name)!.push(time(v.run, batch));
    }
  }
  const canonical = median(samples.get('canonical')!);
  const stringify = median(samples.get('stringify')!);
  const floor = median(samples.get('floor')!);
  return {
    payload,
    bytes: bytes.length,
    canonical,
    stringify,
    floor,
    targetName: target.name === 'floor' ? 'canonical/floor' : 'canonical/JSON.stringify',
    target: target.max,
    ratio: canonical / (target.name === 'floor' ? floor : stringify),
  };
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(2)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} B`;
}

function us(ns: number): string {
  const value = ns / 1000;
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

const quick = process.argv.includes('--quick');
const scale = quick ? 0.2 : 1;
const rows = [
  measure('small', smallPayload(), Math.ceil(200 * scale), 2000, { name: 'floor', max: 2.0 }),
  measure('medium', mediumPayload(), Math.ceil(200 * scale), 100, { name: 'stringify', max: 1.6 }),
  measure('large', largePayload(), Math.ceil(40 * scale), 1, { name: 'stringify', max: 3.0 }),
];

const header = [
  'payload',
  'canonical bytes',
  'canonicalize+sha256 µs',
  'JSON.stringify+sha256 µs',
  'sha256 only µs',
  'canonical/floor',
  'canonical/JSON.stringify',
  'target',
  'met',
];
const lines = [
  `| ${header.join(' | ')} |`,
  `| ${header.map(() => '---').join(' | ')} |`,
  ...rows
    .map((r) =>
      [
        r.payload,
        formatBytes(r.bytes),
        us(r.canonical),
        us(r.stringify),
        us(r.floor),
        `${(r.canonical / r.floor).toFixed(2)}×`,
        `${(r.canonical / r.stringify).toFixed(2)}×`,
        `${r.targetName} ≤ ${r.target.toFixed(1)}×`,
        r.ratio <= r.target ? 'yes' : `no (${r.ratio.toFixed(2)}×)`,
      ].join(' | '),
    )
    .map((row) => `| ${row} |`),
];
process.stdout.write(`Node ${process.version}, ${process.platform}/${process.arch}\n${lines.join('\n')}\n`);
printJsonResult(
  Object.fromEntries(
    rows.map((r) => [r.payload, { ratio: r.ratio, target: r.target, met: r.ratio <= r.target }]),
  ),
);
