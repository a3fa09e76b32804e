import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoWorld, type OpenInvoiceRow } from '../../src/demo/demo-world.js';
import type { DemoCredentials } from '../../src/demo/index.js';
import type { AuditEvent } from '../../src/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { tempDir } from '../support/engine.js';
import { type RunningServe, serve } from '../support/serve.js';

const textOf = (result: unknown): string =>
  ((result as { content?: { text?: string }[] }).content ?? []).map((c) => c.text ?? '').join('');

describe('read tools over MCP: countersign serve --demo --mcp, real HTTP on 127.0.0.1', () => {
  const { dir, cleanup } = tempDir();
  const db = join(dir, 'countersign.db');
  let server: RunningServe;
  let credentials: DemoCredentials;
  const clients: Client[] = [];

  beforeAll(async () => {
    server = await serve(['--db', db, '--port', '0', '--host', '127.0.0.1', '--demo', '--mcp']);
    credentials = JSON.parse(
      readFileSync(join(dir, 'countersign-demo-credentials.json'), 'utf8'),
    ) as DemoCredentials;
  }, 180_000);
  afterAll(async () => {
    for (const c of clients) await c.close();
    await server?.stop();
    cleanup();
  });

  async function connect(tenant: string): Promise<Client> {
    const token = credentials.tenants[tenant]!.agentToken;
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: 'countersign-read-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  async function readEvents(tenant: string): Promise<AuditEvent[]> {
    const store = new SqliteStore({ path: db });
    try {
      return await store.read((tx) => tx.listAudit(tenant, { limit: 1000, steps: ['read'] }));
    } finally {
      await store.close();
    }
  }

  // What the demo's application records hold for a tenant (a fresh demo world has the same rows).
  const ownIds = (tenant: string) =>
    demoWorld()
      .invoices.open(tenant)
      .map((i) => i.id);

  it('lists list_open_invoices beside the proposal tools, read-only, with no server-owned field', async () => {
    const client = await connect('acme');
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toContain('propose_invoice_pay');
    expect(names).toContain('get_proposal');
    const list = tools.find((t) => t.name === 'list_open_invoices');
    expect(list?.annotations).toMatchObject({ readOnlyHint: true });
    expect(Object.keys(list?.inputSchema.properties ?? {})).toEqual(['currency']);
    expect(tools.find((t) => t.name === 'propose_invoice_pay')?.annotations?.readOnlyHint).toBe(false);
  });

  it('each tenant’s agent token reads only that tenant’s rows, and each read is audited in its own chain', async () => {
    const seen: Record<string, string[]> = {};
    for (const tenant of ['acme', 'globex']) {
      const client = await connect(tenant);
      const result = await client.callTool({ name: 'list_open_invoices', arguments: {} });
      expect(result.isError).toBeFalsy();
      const rows = (result.structuredContent as { result: OpenInvoiceRow[] }).result;
      expect(JSON.parse(textOf(result))).toEqual(rows);
      seen[tenant] = rows.map((r) => r.invoice_id);
      expect(seen[tenant]).toEqual(ownIds(tenant));
    }
    expect(seen['acme']).toContain('inv-108');
    expect(seen['acme']).not.toContain('inv-201');
    expect(seen['globex']).toContain('inv-201');
    expect(seen['globex']).not.toContain('inv-108');

    const acmeReads = await readEvents('acme');
    const globexReads = await readEvents('globex');
    expect(acmeReads).toHaveLength(1);
    expect(globexReads).toHaveLength(1);
    expect(acmeReads[0]).toMatchObject({
      step: 'read',
      tenant: 'acme',
      detail: { tool: 'list_open_invoices' },
    });
    expect(acmeReads[0]?.actor).toMatch(/^agent:/);
    expect(globexReads[0]?.actor).toMatch(/^agent:/);
    expect(acmeReads[0]?.actor).not.toBe(globexReads[0]?.actor);
    expect(acmeReads[0]?.runId).toMatch(/^run_/);
  });

  it('refuses a tenant (or any extra field) in the arguments as a tool error, and reads nothing', async () => {
    const before = (await readEvents('acme')).length;
    const client = await connect('acme');
    const result = await client.callTool({ name: 'list_open_invoices', arguments: { tenant: 'globex' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('The request was not accepted');
    expect(textOf(result)).toContain('tenant');
    expect(textOf(result)).not.toContain('inv-');
    expect(await readEvents('acme')).toHaveLength(before);
    expect(await readEvents('globex')).toHaveLength(1);
  });

  it('narrows by currency within the tenant', async () => {
    const client = await connect('globex');
    const result = await client.callTool({ name: 'list_open_invoices', arguments: { currency: 'EUR' } });
    const rows = (result.structuredContent as { result: OpenInvoiceRow[] }).result;
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((r) => r.currency))).toEqual(new Set(['EUR']));
  });
});
