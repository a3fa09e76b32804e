import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PrincipalDirectory } from '../../../src/server/directory/principal-directory.js';
import { openStore } from '../../../src/store/open-store.js';
import { ANSWER_WITHIN_MS } from './sizes.js';

/** The tokens of one demo tenant the load uses. */
export interface TenantTokens {
  readonly agents: readonly string[];
  readonly operator: string;
  readonly admin: string;
}

/** Tokens per demo tenant (acme, globex). */
export type Tokens = Readonly<Record<'acme' | 'globex', TenantTokens>>;

interface DemoCredentialsFile {
  tenants: Record<string, { agentToken: string; operatorToken: string; adminToken: string }>;
}

/**
 * The demo's tokens (from `countersign-demo-credentials.json` in `dir`) plus `extraAgents` agent
 * tokens per tenant issued on the store: one demo agent may propose 30 a minute, too few to load a
 * server; ten agents reach the tenant's 300.
 */
export async function demoTokens(dir: string, location: string, extraAgents: number): Promise<Tokens> {
  const file = JSON.parse(
    readFileSync(join(dir, 'countersign-demo-credentials.json'), 'utf8'),
  ) as DemoCredentialsFile;
  const store = await openStore(location);
  try {
    const directory = new PrincipalDirectory(store);
    const tokens = {} as Record<'acme' | 'globex', TenantTokens>;
    for (const tenant of ['acme', 'globex'] as const) {
      const own = file.tenants[tenant]!;
      const agents = [own.agentToken];
      for (let i = 0; i < extraAgents; i++)
        agents.push(await directory.issueAgentToken({ tenant, agent: `chaos-${i}`, label: 'chaos load' }));
      tokens[tenant] = { agents, operator: own.operatorToken, admin: own.adminToken };
    }
    return tokens;
  } finally {
    await store.close();
  }
}

/**
 * What one request got. `ok` a 2xx; `refused` a named 409/422/429 (an invoice already paid, a
 * quota); `store_unavailable` the 503 with its Retry-After; `cut_by_kill` a connection the test's
 * own SIGKILL cut or refused. The rest must stay 0: `server_error` (any other 5xx, or a 503
 * without Retry-After), `unexpected` (another status), `connection_error` (a hang-up or refusal
 * nobody caused) and `no_answer` (nothing within the deadline plus margin).
 */
export type AnswerClass =
  | 'ok'
  | 'refused'
  | 'store_unavailable'
  | 'cut_by_kill'
  | 'server_error'
  | 'unexpected'
  | 'connection_error'
  | 'no_answer';

/** The classes that say something broke. */
export const BAD_CLASSES: readonly AnswerClass[] = [
  'server_error',
  'unexpected',
  'connection_error',
  'no_answer',
];

/** One answer, as the caller needs it. */
export interface Answer {
  readonly class: AnswerClass;
  readonly status: number;
  readonly body: Record<string, unknown>;
}

// Invoices of one approver each (inv-105 needs two); paid once per server life (the demo's invoice
// book lives in memory), then refused 422 until a restart reopens them.
const INVOICES = {
  acme: ['inv-104', 'inv-106', 'inv-107', 'inv-108'],
  globex: ['inv-104', 'inv-106', 'inv-107', 'inv-201', 'inv-202'],
} as const;

// The first words of a 503's message name the condition (src/store/store-fault.ts); a request past
// its deadline says so (src/server/request-deadline.ts).
const CONDITIONS: readonly (readonly [RegExp, string])[] = [
  [/cannot be reached/, 'unreachable'],
  [/did not answer in time/, 'timeout'],
  [/is busy/, 'busy'],
  [/disk is full/, 'disk_full'],
  [/read-only/, 'read_only'],
  [/disk failed/, 'io_error'],
  [/did not finish within/, 'deadline'],
];

/** The store condition a `503 store_unavailable` message names (`other` when none matches). */
export function storeCondition(message: string): string {
  return CONDITIONS.find(([pattern]) => pattern.test(message))?.[1] ?? 'other';
}

/** Options of {@link Load}. */
export interface LoadOptions {
  readonly tokens: Tokens;
  readonly lanes: number;
  /** Share of proposals that are invoice payments (the rest are broadcast drafts, a local write). */
  readonly payments?: number;
  /** Says why waiting is pointless (the server exited): every wait then fails at once with it. */
  readonly failFast?: () => string | undefined;
}

/**
 * A small client loop over real HTTP: agents propose (invoice payments and broadcast drafts),
 * an operator approves each by the digest it was shown, and now and then reads it back. Every
 * answer is classified and counted; every 201 and every 2xx approval is remembered, so that
 * `verify` (support/verify.ts) can check them afterwards.
 */
export class Load {
  readonly tally: Record<AnswerClass, number> = {
    ok: 0,
    refused: 0,
    store_unavailable: 0,
    cut_by_kill: 0,
    server_error: 0,
    unexpected: 0,
    connection_error: 0,
    no_answer: 0,
  };
  /** Counts per refusal reason and per store condition (from the 503 message). */
  readonly reasons = new Map<string, number>();
  /** Proposals answered 201: id → tenant. */
  readonly proposed = new Map<string, 'acme' | 'globex'>();
  /** Proposals whose approval was answered 2xx. */
  readonly approved = new Set<string>();
  /** The first few bad answers, with what was asked. */
  readonly problems: string[] = [];
  /** The slowest answer seen, in ms. */
  slowestMs = 0;
  answers = 0;

  readonly #options: LoadOptions;
  #url: string | undefined;
  #generation = 0;
  #up: Promise<void> = Promise.resolve();
  #release: () => void = () => {};
  #running = false;
  #lanes: Promise<void>[] = [];
  #waiters: { until: () => boolean; done: () => void; fail: (error: Error) => void }[] = [];
  #n = 0;

  constructor(url: string, options: LoadOptions) {
    this.#url = url;
    this.#options = options;
  }

  get url(): string | undefined {
    return this.#url;
  }

  /** Starts the client loops. */
  start(): void {
    this.#running = true;
    this.#lanes = Array.from({ length: this.#options.lanes }, (_, i) => this.#lane(i));
  }

  /** Stops the loops and waits for each to finish its request. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#release();
    await Promise.all(this.#lanes);
  }

  /**
   * The server is about to be killed: from now until {@link up}, a connection cut or refused is
   * the test's own doing (`cut_by_kill`) and the loops wait for the restart.
   */
  down(): void {
    this.#generation++;
    this.#url = undefined;
    this.#up = new Promise((resolve) => (this.#release = resolve));
  }

  /** The server answers at `url` again. */
  up(url: string): void {
    this.#url = url;
    this.#release();
  }

  /** Resolves once `count` more answers of the given classes arrived (any class by default). */
  async waitForAnswers(count: number, timeoutMs: number, classes?: readonly AnswerClass[]): Promise<void> {
    const counted = () => (classes ? classes.reduce((n, c) => n + this.tally[c], 0) : this.answers);
    const target = counted() + count;
    await this.waitFor(() => counted() >= target, timeoutMs, `${count} answers`);
  }

  /** Resolves once `until()` holds after an answer; rejects after `timeoutMs`. */
  waitFor(until: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (until()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter = {
        until,
        done: () => {
          clearTimeout(timer);
          resolve();
        },
        fail: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        reject(new Error(`load: no ${what} within ${timeoutMs} ms (${JSON.stringify(this.tally)})`));
      }, timeoutMs);
      this.#waiters.push(waiter);
    });
  }

  /** Figures for a report: the tally, the slowest answer, and the reasons. */
  figures(): Record<string, number | string> {
    return {
      ...this.tally,
      slowestMs: this.slowestMs,
      proposed: this.proposed.size,
      approved: this.approved.size,
      // Which store conditions the 503s named, e.g. `unreachable=12 timeout=3`.
      conditions:
        [...this.reasons]
          .filter(([reason]) => reason.startsWith('503 '))
          .map(([reason, n]) => `${reason.slice(4)}=${n}`)
          .join(' ') || '-',
    };
  }

  async #lane(lane: number): Promise<void> {
    const tenant = lane % 2 === 0 ? 'acme' : 'globex';
    const tokens = this.#options.tokens[tenant];
    const agent = tokens.agents[Math.floor(lane / 2) % tokens.agents.length]!;
    const payments = this.#options.payments ?? 0.5;
    while (this.#running) {
      const n = this.#n++;
      const invoices = INVOICES[tenant];
      const body =
        (n % 100) / 100 < payments
          ? {
              operation: 'invoice.pay',
              request: { invoice_id: invoices[n % invoices.length] },
              runId: `chaos-${lane}`,
            }
          : {
              operation: 'email_broadcast.apply_draft',
              request: { broadcast_id: 'bc-spring', subject: `Draft ${n}`, body: `Chaos draft ${n}.` },
              runId: `chaos-${lane}`,
            };
      const proposed = await this.request('POST', '/api/v1/proposals', agent, body);
      if (!proposed) continue;
      // Nothing listens (a crash): counted, and not hammered in a tight loop.
      if (proposed.class === 'connection_error') await this.#pause(200);
      if (proposed.status === 429) await this.#pause(250);
      if (proposed.status !== 201) continue;
      const id = String(proposed.body['id']);
      this.proposed.set(id, tenant);
      const approved = await this.request('POST', `/api/v1/proposals/${id}/approve`, tokens.operator, {
        seenDigest: proposed.body['digest'],
      });
      if (approved && approved.status >= 200 && approved.status < 300) this.approved.add(id);
      if (n % 4 === 0) await this.request('GET', `/api/v1/proposals/${id}`, tokens.operator);
    }
  }

  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  /**
   * One request, classified and counted. Undefined when the loops were stopped while it waited
   * for the server to come back. Also usable by a test for its own probes.
   */
  async request(
    method: 'GET' | 'POST',
    path: string,
    token: string | undefined,
    body?: unknown,
  ): Promise<Answer | undefined> {
    while (this.#url === undefined) {
      if (!this.#running) return undefined;
      await this.#up;
    }
    const generation = this.#generation;
    const started = Date.now();
    let answer: Answer;
    try {
      const response = await fetch(`${this.#url}${path}`, {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
      });
      const text = await response.text();
      let parsed: Record<string, unknown> = {};
      try {
        parsed = JSON.parse(text) as Record<string, unknown>;
      } catch {
        parsed = { text: text.slice(0, 200) };
      }
      answer = { class: this.#classify(response, parsed), status: response.status, body: parsed };
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      const killed = generation !== this.#generation || this.#url === undefined;
      const timedOut = (error as Error).name === 'TimeoutError';
      answer = {
        class: timedOut ? 'no_answer' : killed ? 'cut_by_kill' : 'connection_error',
        status: 0,
        body: { error: String(cause) },
      };
    }
    this.slowestMs = Math.max(this.slowestMs, Date.now() - started);
    this.answers++;
    this.tally[answer.class]++;
    const reason =
      answer.class === 'store_unavailable'
        ? `503 ${storeCondition(String(answer.body['message']))}`
        : answer.status === 0
          ? `${answer.class} ${String(answer.body['error'])}`
          : `${answer.status} ${String(answer.body['reason'] ?? '')}`;
    this.reasons.set(reason, (this.reasons.get(reason) ?? 0) + 1);
    if (BAD_CLASSES.includes(answer.class) && this.problems.length < 10)
      this.problems.push(
        `${method} ${path} → ${answer.class} ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)} after ${Date.now() - started} ms`,
      );
    const hopeless = this.#options.failFast?.();
    for (const w of [...this.#waiters])
      if (w.until() || hopeless) {
        this.#waiters.splice(this.#waiters.indexOf(w), 1);
        if (hopeless) w.fail(new Error(`load: waiting is pointless: ${hopeless}`));
        else w.done();
      }
    return answer;
  }

  #classify(response: Response, body: Record<string, unknown>): AnswerClass {
    const s = response.status;
    if (s >= 200 && s < 300) return 'ok';
    if (s === 503 && body['reason'] === 'store_unavailable')
      return /^\d+$/.test(response.headers.get('retry-after') ?? '') ? 'store_unavailable' : 'server_error';
    if (s >= 500) return 'server_error';
    if ((s === 409 || s === 422 || s === 429) && typeof body['reason'] === 'string') return 'refused';
    return 'unexpected';
  }
}
