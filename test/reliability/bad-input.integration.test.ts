import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/index.js';
import { canonicalize, JsonParseError, parseJson } from '../../src/canonical/index.js';
import {
  call,
  freshInvoice,
  proposeViaApi,
  type ServerHarness,
  serverHarness,
} from '../server/support/server-harness.js';
import { type Backend, createBackend } from '../support/backends.js';
import { deepValue, hostileRequest, hostileText } from './support/hostile.js';
import { reportFigure } from './support/report.js';
import { LARGE, SIZES } from './support/sizes.js';
import {
  AGENT,
  invoiceId,
  reliabilityOperations,
  reliabilityWorld,
  TENANT,
  RELIABILITY_LIMITS,
} from './support/world.js';

const TIMEOUT = LARGE ? 30 * 60_000 : 180_000;
const PARSE_REASONS = [
  'syntax',
  'duplicate_key',
  'too_deep',
  'unsafe_integer',
  'non_finite_number',
  'lone_surrogate',
  'too_long',
  'trailing_data',
  'empty',
];
const STACK = /\n\s+at |Error:|TypeError|RangeError/;

/** Every own key of the prototypes a pollution attack aims at, to compare after the run. */
function prototypeKeys(): Record<string, string[]> {
  return {
    Object: Reflect.ownKeys(Object.prototype).map(String).sort(),
    Array: Reflect.ownKeys(Array.prototype).map(String).sort(),
    Function: Reflect.ownKeys(Function.prototype).map(String).sort(),
    String: Reflect.ownKeys(String.prototype).map(String).sort(),
  };
}

const before = prototypeKeys();

/** What parseJson did with a text: a value (checked against JSON.parse) or a typed refusal. */
function parseOutcome(text: string): string {
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (error) {
    if (error instanceof JsonParseError && PARSE_REASONS.includes(error.reason)) return error.reason;
    throw error;
  }
  // Anything the strict parser accepts, the lax one reads as the same value (never the reverse).
  if (canonicalize(value) !== canonicalize(JSON.parse(text)))
    throw new Error(`parseJson and JSON.parse disagree on ${text.slice(0, 80)}`);
  return 'accepted';
}

function tally(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

describe('bad input', () => {
  let backend: Backend;
  let engine: Engine;
  let server: ServerHarness;

  beforeAll(async () => {
    backend = await createBackend('sqlite');
    engine = await createEngine({
      limits: RELIABILITY_LIMITS,
      store: await backend.open(),
      operations: reliabilityOperations(reliabilityWorld({ invoices: 40 })),
    });
    server = await serverHarness();
  });

  afterAll(async () => {
    await engine?.close();
    await backend?.dispose();
    await server?.close();
  });

  it('parseJson refuses the named hostile texts with their stable reasons', () => {
    const cases: [string, string][] = [
      ['{"a":1,"a":2}', 'duplicate_key'],
      ['{"__proto__":{"x":1},"__proto__":{"y":2}}', 'duplicate_key'],
      [`${'['.repeat(10_000)}${']'.repeat(10_000)}`, 'too_deep'],
      [`${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`, 'too_deep'],
      ['1e400', 'non_finite_number'],
      ['{"amount_minor":-1e400}', 'non_finite_number'],
      ['9007199254740993', 'unsafe_integer'],
      ['{"amount_minor":9007199254740993}', 'unsafe_integer'],
      ['"\\ud800"', 'lone_surrogate'],
      ['"\udc00"', 'lone_surrogate'],
      [`"${'x'.repeat(17 * 1024 * 1024)}"`, 'too_long'],
      ['{"a":1} {"a":2}', 'trailing_data'],
      ['', 'empty'],
    ];
    const got = cases.map(([text]) => {
      try {
        parseJson(text);
        return 'accepted';
      } catch (error) {
        return error instanceof JsonParseError ? error.reason : String(error);
      }
    });
    expect(got).toEqual(cases.map(([, reason]) => reason));
    // __proto__ and constructor.prototype come back as plain data: no prototype is touched.
    const proto = parseJson(
      '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}',
    ) as Record<string, unknown>;
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.keys(proto)).toEqual(['__proto__', 'constructor']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it(
    `parseJson: ${SIZES.parsePayloads} generated texts end as a value equal to JSON.parse's or a JsonParseError, nothing else`,
    () => {
      const outcomes = new Map<string, number>();
      fc.assert(
        fc.property(hostileText, (text) => {
          tally(outcomes, parseOutcome(text));
        }),
        { numRuns: SIZES.parsePayloads },
      );
      const tried = [...outcomes.values()].reduce((a, b) => a + b, 0);
      reportFigure({
        suite: 'bad-input',
        what: 'parseJson',
        backend: '-',
        tried,
        held: tried,
        detail: Object.fromEntries(outcomes),
      });
      expect(tried).toBe(SIZES.parsePayloads);
      // The generators reach both sides and the interesting refusals.
      for (const reason of [
        'accepted',
        'syntax',
        'duplicate_key',
        'too_deep',
        'lone_surrogate',
        'unsafe_integer',
        'non_finite_number',
      ])
        expect(outcomes.get(reason) ?? 0).toBeGreaterThan(0);
    },
    TIMEOUT,
  );

  it(
    `engine.propose: ${SIZES.proposePayloads} generated requests end proposed or invalid_request with safe text, never an exception`,
    async () => {
      const outcomes = new Map<string, number>();
      const failures: string[] = [];
      const operation = fc.constantFrom(
        'invoice.pay',
        'invoice.pay',
        'email_broadcast.apply_draft',
        'order.refund_missing_discount',
        'no.such_operation',
        '__proto__',
        'constructor',
      );
      const runId = fc.oneof(
        { weight: 8, arbitrary: fc.constant('run-fuzz') },
        { weight: 1, arbitrary: fc.constantFrom<string | null | undefined>('', '   ', null, undefined) },
      );
      await fc.assert(
        fc.asyncProperty(operation, hostileRequest, runId, async (op, request, run) => {
          try {
            const result = await engine.proposals.propose({
              operation: op,
              request,
              tenant: TENANT,
              resource: `invoice:${invoiceId(0)}`,
              requestedBy: AGENT.id,
              runId: run,
            });
            if (result.kind === 'proposed') return void tally(outcomes, 'proposed');
            if (
              result.kind !== 'invalid_request' ||
              // A label that disagrees with the resource the operation derives is refused by name.
              !['invalid_request', 'run_id_missing', 'resource_mismatch'].includes(result.reason)
            )
              failures.push(`unexpected result ${JSON.stringify(result).slice(0, 200)}`);
            else if (
              typeof result.modelMessage !== 'string' ||
              !Array.isArray(result.issues) ||
              STACK.test(result.modelMessage)
            )
              failures.push(`unsafe model message ${result.modelMessage.slice(0, 200)}`);
            tally(outcomes, result.reason);
          } catch (error) {
            failures.push(
              `${op}: threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`.slice(
                0,
                300,
              ),
            );
          }
        }),
        { numRuns: SIZES.proposePayloads },
      );
      const tried = [...outcomes.values()].reduce((a, b) => a + b, 0) + failures.length;
      reportFigure({
        suite: 'bad-input',
        what: 'engine.propose (request field)',
        backend: 'sqlite',
        tried,
        held: tried - failures.length,
        detail: Object.fromEntries(outcomes),
      });
      expect(failures.slice(0, 10)).toEqual([]);
      expect(tried).toBe(SIZES.proposePayloads);
      expect(outcomes.get('invalid_request') ?? 0).toBeGreaterThan(0);
      expect(outcomes.get('run_id_missing') ?? 0).toBeGreaterThan(0);
    },
    TIMEOUT,
  );

  it('engine.propose turns a request nested 10^4 deep, a huge string and JavaScript values into invalid_request', async () => {
    const cyclic: Record<string, unknown> = { invoice_id: 'inv-104' };
    cyclic['self'] = cyclic;
    const requests: unknown[] = [
      deepValue(10_000, 'object'),
      deepValue(10_000, 'array'),
      { invoice_id: 'x'.repeat(5_000_000) },
      { invoice_id: '\ud800' },
      { invoice_id: Number.POSITIVE_INFINITY },
      { invoice_id: Number('9007199254740993') },
      { invoice_id: 10n },
      { invoice_id: new Date(0) },
      cyclic,
      JSON.parse('{"invoice_id":"inv-r-00001","__proto__":{"amount_minor":1}}'),
      JSON.parse('{"invoice_id":"inv-r-00001","constructor":{"prototype":{"amount_minor":1}}}'),
    ];
    const kinds: string[] = [];
    for (const request of requests) {
      const result = await engine.proposals.propose({
        operation: 'invoice.pay',
        request,
        tenant: TENANT,
        resource: 'invoice:x',
        requestedBy: AGENT.id,
        runId: 'run-fuzz',
      });
      kinds.push(result.kind === 'invalid_request' ? result.reason : result.kind);
    }
    expect(kinds).toEqual(requests.map(() => 'invalid_request'));
  });

  it(
    `HTTP API: ${SIZES.httpPayloads} generated requests get 4xx with a reason (or success), never a 5xx`,
    async () => {
      const invoice = freshInvoice(server.world, 'acme');
      const target = await proposeViaApi(server, 'acme', {
        operation: 'invoice.pay',
        request: { invoice_id: invoice },
        resource: `invoice:${invoice}`,
      });
      const agentToken = server.tenants.acme.agentToken;
      const operatorToken = server.tenants.acme.operators.approver.token;
      const statuses = new Map<string, number>();
      const failures: string[] = [];
      const shape = fc.oneof(
        {
          weight: 4,
          arbitrary: hostileText.map((text) => ({ path: '/api/v1/proposals', token: agentToken, text })),
        },
        {
          weight: 4,
          // A well-formed envelope around a hostile request member (text-level: duplicates and __proto__ survive).
          arbitrary: fc
            .tuple(
              fc.constantFrom('invoice.pay', 'email_broadcast.apply_draft', 'nope'),
              hostileText,
              fc.constantFrom('"run-1"', '""', 'null', '7'),
            )
            .map(([op, request, runId]) => ({
              path: '/api/v1/proposals',
              token: agentToken,
              text: `{"operation":"${op}","request":${request},"runId":${runId},"resource":"invoice:x"}`,
            })),
        },
        {
          weight: 2,
          arbitrary: fc
            .tuple(fc.constantFrom('approve', 'decline', 'edit', 'reconcile'), hostileText)
            .map(([action, text]) => ({
              path: `/api/v1/proposals/${target.id}/${action}`,
              token: operatorToken,
              text,
            })),
        },
        {
          weight: 1,
          arbitrary: fc
            .tuple(
              fc.string({ unit: 'binary', maxLength: 12 }),
              fc.string({ unit: 'binary', maxLength: 12 }),
              fc.string({ unit: 'binary', maxLength: 40 }),
            )
            .map(([status, limit, cursor]) => ({
              path: `/api/v1/proposals?status=${encodeURIComponent(status)}&limit=${encodeURIComponent(limit)}&cursor=${encodeURIComponent(cursor)}`,
              token: operatorToken,
              text: undefined,
            })),
        },
        {
          weight: 1,
          arbitrary: fc.string({ unit: 'binary', maxLength: 40 }).map((id) => ({
            path: `/api/v1/proposals/${encodeURIComponent(id)}`,
            token: operatorToken,
            text: undefined,
          })),
        },
      );
      const contentType = fc.constantFrom(
        'application/json',
        'application/json',
        'application/json; charset=utf-8',
        'text/plain',
        'application/x-www-form-urlencoded',
      );
      await fc.assert(
        fc.asyncProperty(shape, contentType, async (r, type) => {
          const response = await call(server, r.text === undefined ? 'GET' : 'POST', r.path, {
            token: r.token,
            ...(r.text === undefined ? {} : { rawBody: r.text, headers: { 'content-type': type } }),
          });
          tally(statuses, String(response.status));
          if (response.status >= 500)
            failures.push(
              `${response.status} for ${r.path} ${String(r.text).slice(0, 120)}: ${JSON.stringify(response.body).slice(0, 200)} ${
                process.env['PROBE']
                  ? JSON.stringify(server.logs.filter((l) => l.level === 'error').slice(-1)).slice(0, 1500)
                  : ''
              }`,
            );
          else if (response.status >= 400 && typeof response.body['reason'] !== 'string')
            failures.push(`${response.status} without a reason for ${r.path}`);
          else if (STACK.test(JSON.stringify(response.body)))
            failures.push(`a stack trace reached the client for ${r.path}`);
        }),
        { numRuns: SIZES.httpPayloads },
      );
      const tried = [...statuses.values()].reduce((a, b) => a + b, 0);
      reportFigure({
        suite: 'bad-input',
        what: 'HTTP API (propose, approve, decline, edit, reconcile, list, get)',
        backend: 'sqlite',
        tried,
        held: tried - failures.length,
        detail: Object.fromEntries(statuses),
      });
      expect(failures.slice(0, 10)).toEqual([]);
      expect(tried).toBe(SIZES.httpPayloads);
    },
    TIMEOUT,
  );

  it('leaves Object.prototype, Array.prototype, Function.prototype and String.prototype exactly as they were', () => {
    expect(prototypeKeys()).toEqual(before);
    const probe: Record<string, unknown> = {};
    for (const key of ['polluted', 'isAdmin', 'amount_minor', 'x', 'y']) expect(probe[key]).toBeUndefined();
  });
});
