import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditChainer, chainEvent } from '../../src/audit/chain.js';
import type { AuditEvent, AuditEventDraft, ChainHead } from '../../src/audit/event.js';
import { AuditLedger } from '../../src/ledger/audit-ledger.js';
import { exportIncident } from '../../src/ledger/incident-export.js';
import { verifyAudit } from '../../src/ledger/verify-audit.js';
import { runCli } from '../../src/cli/run-cli.js';
import { newId } from '../../src/engine/ids.js';
import { auditRow } from '../../src/store/sql-audit.js';
import { AUDIT_COLUMNS } from '../../src/store/sql-columns.js';
import { sql } from '../../src/sql/sql.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/store.js';
import { BACKENDS, type BackendName } from '../support/backends.js';
import { tempDir } from '../support/engine.js';
import { testPostgres } from '../support/postgres.js';
import { ConsoleClient } from './support/console-client.js';
import {
  call,
  freshInvoice,
  proposeViaApi,
  type ServerHarness,
  serverHarness,
} from './support/server-harness.js';

// Hole 2 (a malformed stored digest) and hole 3 (refusals that bury decisions) of issue 10, tested
// from outside: real HTTP against a real server, on SQLite and on PostgreSQL.

const { dir, cleanup } = tempDir();
const pg = testPostgres();

interface Backend {
  readonly name: string;
  /** A fresh store, and how the CLI reaches it (undefined: the CLI cannot, e.g. embedded PGlite). */
  open(): Promise<{ store: Store; cli: string[] | undefined }>;
}

let files = 0;
const BACKEND_OF: Readonly<Record<BackendName, Backend>> = {
  sqlite: {
    name: 'SQLite',
    open: async () => {
      const path = join(dir, `audit-${++files}.db`);
      return { store: new SqliteStore({ path }), cli: ['--db', path] };
    },
  },
  postgres: {
    name: `PostgreSQL (${pg.label})`,
    open: async () => {
      const schema = pg.newSchema();
      const store = await pg.store({ schema });
      if (!pg.url) return { store, cli: undefined };
      const url = new URL(pg.url);
      url.searchParams.set('schema', schema);
      return { store, cli: ['--store', url.toString()] };
    },
  },
};

afterAll(async () => {
  await pg.cleanup();
  cleanup();
}, 60_000);

const pay = (invoice: string) => ({
  operation: 'invoice.pay',
  request: { invoice_id: invoice },
  resource: `invoice:${invoice}`,
  runId: 'run-audit-1',
});

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(argv, {
    stdout: (t) => {
      out += t;
    },
    stderr: (t) => {
      err += t;
    },
    stdin: async () => '',
  });
  return { code, out, err };
}

function draftOf(e: AuditEvent, overrides: Partial<AuditEventDraft> = {}): AuditEventDraft {
  return {
    tenant: e.tenant,
    proposalId: e.proposalId,
    attemptId: e.attemptId,
    runId: e.runId,
    step: e.step,
    actor: e.actor,
    reason: e.reason,
    digests: e.digests,
    commandId: e.commandId,
    detail: e.detail,
    at: e.at,
    ...overrides,
  };
}

/**
 * Appends `count` copies of an event to its chain in one transaction, chained exactly as the engine
 * chains them (the chain verifies). On PostgreSQL the rows go in 500 per INSERT, as one round trip
 * per event would take most of the test's time; SQLite appends through the ledger.
 */
async function appendCopies(
  store: Store,
  template: AuditEvent,
  count: number,
  overrides: Partial<AuditEventDraft> = {},
) {
  const draft = (i: number) => draftOf(template, { at: template.at + i, ...overrides });
  if (store.capabilities.name === 'sqlite') {
    await new AuditLedger(store, auditChainer(undefined)).transaction(async (_tx, audit) => {
      for (let i = 0; i < count; i++) audit.append({ ...draft(i), id: newId('evt') });
    });
    return;
  }
  await store.transaction(async (tx) => {
    const [row] = await tx.local.all(
      sql`SELECT seq, chain_hash FROM countersign_audit_heads WHERE tenant = ${template.tenant} FOR UPDATE`,
    );
    let head: ChainHead = { seq: Number(row!['seq']), chainHash: String(row!['chain_hash']) };
    const columns = AUDIT_COLUMNS.map(([, c]) => c);
    for (let start = 0; start < count; start += 500) {
      const rows: unknown[][] = [];
      for (let i = start; i < Math.min(count, start + 500); i++) {
        const event = chainEvent(head, draft(i), newId('evt'), undefined);
        head = { seq: event.seq, chainHash: event.chainHash };
        rows.push(auditRow(event));
      }
      const tuples = rows.map((row) => sql`(${sql.list(row)})`);
      await tx.local.run(
        sql`INSERT INTO countersign_audit_events (${sql.raw(columns.join(', '))}) VALUES ${sql.join(tuples, ', ')}`,
      );
    }
    await tx.local.run(
      sql`UPDATE countersign_audit_heads SET seq = ${head.seq}, chain_hash = ${head.chainHash} WHERE tenant = ${template.tenant}`,
    );
  });
}

async function signIn(h: ServerHarness): Promise<ConsoleClient> {
  const browser = new ConsoleClient(h.url);
  const { email, password } = h.tenants.acme.operators.approver;
  expect((await browser.login(email, password)).status).toBe(303);
  return browser;
}

/** Every page of a proposal's audit through the API, following nextCursor. */
async function allPages(h: ServerHarness, id: string, query: string) {
  const pages: { seq: number; step: string; short: Record<string, string> }[][] = [];
  let cursor: string | undefined;
  for (;;) {
    const r = await call(
      h,
      'GET',
      `/api/v1/proposals/${id}/audit?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { token: h.tenants.acme.operators.viewer.token },
    );
    expect(r.status).toBe(200);
    pages.push(r.body['events'] as { seq: number; step: string; short: Record<string, string> }[]);
    cursor = r.body['nextCursor'] as string | undefined;
    if (cursor === undefined) return pages;
    expect(pages.length).toBeLessThan(100);
  }
}

for (const name of BACKENDS) {
  const backend = BACKEND_OF[name];
  describe(`audit readers on ${backend.name}`, () => {
    let h: ServerHarness;
    let cliStore: string[] | undefined;

    beforeAll(async () => {
      const opened = await backend.open();
      cliStore = opened.cli;
      h = await serverHarness({ store: opened.store });
    }, 60_000);
    afterAll(() => h.close());

    it('a malformed seen digest stored in the audit trail is shown marked invalid and escaped: the proposal page, the audit API, audit show and the export answer', async () => {
      const proposed = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
      const [first] = await h.store.read((tx) => tx.listAudit('acme', { proposalId: proposed.id, limit: 1 }));
      // Written straight into the store, as an engine without the digest check (or a forged form) left it.
      for (const [seen, actor] of [
        ['abc123abc123', 'user:approver@acme.test'],
        ['<script>alert(1)</script>', 'user:viewer@acme.test'],
      ] as const)
        await appendCopies(h.store, first!, 1, {
          step: 'denied',
          reason: 'stale_view',
          actor,
          digests: { proposed: proposed.digest, seen },
        });

      const api = await call(h, 'GET', `/api/v1/proposals/${proposed.id}/audit`, {
        token: h.tenants.acme.operators.viewer.token,
      });
      expect(api.status).toBe(200);
      const events = api.body['events'] as { step: string; short: Record<string, string> }[];
      expect(events.map((e) => e.short)).toEqual([
        { proposed: proposed.short },
        { proposed: proposed.short, seen: 'invalid:"abc123abc123"' },
        { proposed: proposed.short, seen: 'invalid:"<script>alert(1)"…' },
      ]);

      const page = await (await signIn(h)).get(`/proposals/${proposed.id}`);
      expect(page.status).toBe(200);
      expect(page.html).toContain(
        '<code class="hash small invalid" title="not a SHA-256 digest">invalid:&quot;abc123abc123&quot;</code>',
      );
      expect(page.html).toContain('invalid:&quot;&lt;script&gt;alert(1)&quot;…');
      expect(page.html).not.toContain('<script>alert');

      if (cliStore) {
        const shown = await cli(['audit', 'show', proposed.id, ...cliStore]);
        expect(shown.err).toBe('');
        expect(shown.code).toBe(0);
        expect(shown.out).toMatch(/denied\s+user:approver@acme\.test {2}[0-9a-f]{12} {2}stale_view/);
      }
      const exported = await exportIncident(h.store, { proposalId: proposed.id });
      expect(exported.kind).toBe('exported');
      if (exported.kind !== 'exported') return;
      expect(exported.bundle.scopes.viewed.seenDigests.map((d) => d.short)).toEqual([
        'invalid:"abc123abc123"',
        'invalid:"<script>alert(1)"…',
      ]);
      expect(await verifyAudit(h.store, { tenant: 'acme' })).toMatchObject({ kind: 'intact' });
    });

    it('a proposal whose stored digest was tampered still lists and renders, marked invalid', async () => {
      const proposed = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
      await h.store.transaction((tx) =>
        tx.local.run(
          sql`UPDATE countersign_proposals SET digest = ${'abc123abc123'} WHERE tenant = ${'acme'} AND id = ${proposed.id}`,
        ),
      );
      const token = h.tenants.acme.operators.viewer.token;
      const one = await call(h, 'GET', `/api/v1/proposals/${proposed.id}`, { token });
      expect(one.status).toBe(200);
      expect(one.body['short']).toBe('invalid:"abc123abc123"');
      expect((await call(h, 'GET', '/api/v1/proposals?status=pending', { token })).status).toBe(200);
      expect((await call(h, 'GET', `/api/v1/proposals/${proposed.id}/audit`, { token })).status).toBe(200);
      const browser = await signIn(h);
      expect((await browser.get('/')).status).toBe(200);
      expect((await browser.get(`/proposals/${proposed.id}`)).status).toBe(200);
    });

    it('the console approve form refuses a digest that is not 64 lowercase hex with 422 invalid_digest and writes nothing', async () => {
      const proposed = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
      const browser = await signIn(h);
      const csrf = await browser.csrf();
      const before = await h.store.read((tx) =>
        tx.listAudit('acme', { proposalId: proposed.id, limit: 100 }),
      );
      for (const digest of [
        proposed.short,
        proposed.digest.toUpperCase(),
        `${proposed.digest} `,
        '<b>x</b>',
      ]) {
        const r = await browser.post(`/proposals/${proposed.id}/approve`, { csrf, digest });
        expect(r.status).toBe(422);
        expect(r.html).toContain('<code class="reason-code">invalid_digest</code>');
      }
      const after = await h.store.read((tx) => tx.listAudit('acme', { proposalId: proposed.id, limit: 100 }));
      expect(after).toEqual(before);
      const ok = await browser.post(`/proposals/${proposed.id}/approve`, { csrf, digest: proposed.digest });
      expect(ok.status).toBe(303);
    });

    it('10,050 refused self-approvals then a human approval: API pages, the console and audit show all reach the decision', async () => {
      const proposed = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
      // One real refusal over HTTP (the agent approving its own proposal), then 10,049 more like it.
      const self = await call(h, 'POST', `/api/v1/proposals/${proposed.id}/approve`, {
        token: h.tenants.acme.agentToken,
        body: { seenDigest: proposed.digest },
      });
      expect(self.status).toBe(403);
      expect(self.body['reason']).toBe('forbidden');
      const refusals = await h.store.read((tx) =>
        tx.listAudit('acme', { proposalId: proposed.id, steps: ['denied'], limit: 10 }),
      );
      expect(refusals.map((e) => [e.actor, e.reason])).toEqual([['agent:acme-assistant', 'forbidden']]);
      await appendCopies(h.store, refusals[0]!, 10_049);
      const approved = await call(h, 'POST', `/api/v1/proposals/${proposed.id}/approve`, {
        token: h.tenants.acme.operators.approver.token,
        body: { seenDigest: proposed.digest },
      });
      expect(approved.status).toBe(200);
      expect(approved.body['outcome']).toMatchObject({ kind: 'succeeded' });

      // The API: pages of 1,000 are disjoint, in chain order, and together reach the outcome.
      const pages = await allPages(h, proposed.id, 'limit=1000');
      const seqs = pages.flat().map((e) => e.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(seqs.length);
      const steps = pages.flat().map((e) => e.step);
      expect(steps.filter((s) => s === 'denied')).toHaveLength(10_050);
      expect(steps.filter((s) => s !== 'denied')).toEqual([
        'proposed',
        'approved',
        'claimed',
        'revalidated',
        'command',
        'outcome',
      ]);
      expect(pages[0]!.map((e) => e.step)).not.toContain('approved');
      // And the decisions in one request, whatever the refusals.
      const [decisions] = await allPages(h, proposed.id, 'exceptStep=denied&limit=10');
      expect(decisions!.map((e) => e.step)).toEqual([
        'proposed',
        'approved',
        'claimed',
        'revalidated',
        'command',
        'outcome',
      ]);

      // The console: the approval and the outcome on a small page, the refusals as one line.
      const page = await (await signIn(h)).get(`/proposals/${proposed.id}`);
      expect(page.status).toBe(200);
      expect(Buffer.byteLength(page.html)).toBeLessThan(60_000);
      expect(page.html).toContain('<span class="event-step">Approved</span>');
      expect(page.html).toContain('<span class="event-step">Outcome: succeeded</span>');
      expect(page.html).toContain('<span class="event-step">Refused 10,050 times</span>');
      expect(page.html).toContain('by <bdi>agent:acme-assistant</bdi>');
      expect(page.html.split('<span class="event-step">Refused').length - 1).toBe(1);
      expect(page.html).toContain('10,056 audit events; repeated ones are collapsed.');

      if (cliStore) {
        const shown = await cli(['audit', 'show', proposed.id, ...cliStore]);
        expect(shown.code).toBe(0);
        const lines = shown.out.trimEnd().split('\n');
        expect(lines).toHaveLength(1 + 10_056);
        expect(lines.filter((l) => /\sapproved\s+user:approver@acme\.test\s/.test(l))).toHaveLength(1);
        expect(lines.at(-1)).toMatch(/\soutcome\s/);
        const collapsed = await cli(['audit', 'show', proposed.id, '--collapse', ...cliStore]);
        expect(
          collapsed.out
            .trimEnd()
            .split('\n')
            .map((l) => l.split(/\s{2,}/)[1]),
        ).toEqual([
          undefined,
          'proposed',
          'denied',
          'approved',
          'claimed',
          'revalidated',
          'command',
          'outcome',
        ]);
        expect(collapsed.out).toMatch(/forbidden {2}×10050 \(last /);
      }
      // The whole chain still verifies: the refusals are in it, only the views collapse them.
      expect(await verifyAudit(h.store, { tenant: 'acme' })).toMatchObject({ kind: 'intact' });
    }, 60_000);
  });
}
