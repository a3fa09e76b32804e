import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshInvoice, type ServerHarness, serverHarness } from './support/server-harness.js';

// Hole 6 of issue 10: with no public URL configured, `approvalUrl` followed the request's Host
// header, so `Host: evil.example` handed the agent a link to http://evil.example/proposals/….

/** A JSON request over node:http, which (unlike fetch) sends the Host header we give it. */
function rawJson(
  base: string,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const url = new URL(path, base);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        headers: { ...(payload ? { 'content-type': 'application/json' } : {}), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const HOSTILE_HEADERS = {
  host: 'evil.example',
  'x-forwarded-host': 'evil.example',
  'x-forwarded-proto': 'https',
  forwarded: 'host=evil.example;proto=https',
};

async function proposeAndRead(h: ServerHarness): Promise<{ created: string; read: string; id: string }> {
  const invoice = freshInvoice(h.world, 'acme');
  const auth = { authorization: `Bearer ${h.tenants.acme.agentToken}`, ...HOSTILE_HEADERS };
  const created = await rawJson(h.url, 'POST', '/api/v1/proposals', auth, {
    operation: 'invoice.pay',
    request: { invoice_id: invoice },
    resource: `invoice:${invoice}`,
    runId: 'run-host',
  });
  expect(created.status).toBe(201);
  const id = created.body['id'] as string;
  const read = await rawJson(h.url, 'GET', `/api/v1/proposals/${id}`, auth);
  expect(read.status).toBe(200);
  return { created: created.body['approvalUrl'] as string, read: read.body['approvalUrl'] as string, id };
}

describe('approvalUrl never follows the Host header', () => {
  let plain: ServerHarness;
  let proxied: ServerHarness;
  beforeAll(async () => {
    plain = await serverHarness();
    proxied = await serverHarness({ publicUrl: 'https://approvals.example.com' });
  });
  afterAll(async () => {
    await plain.close();
    await proxied.close();
  });

  it('without a public URL: the address the server listens on (http://127.0.0.1:PORT)', async () => {
    expect(plain.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const { created, read, id } = await proposeAndRead(plain);
    expect(created).toBe(`${plain.url}/proposals/${id}?run=run-host`);
    expect(read).toBe(created);
    expect(created).not.toContain('evil.example');
  });

  it('with a public URL: that URL, whatever Host and X-Forwarded-* say', async () => {
    const { created, read, id } = await proposeAndRead(proxied);
    expect(created).toBe(`https://approvals.example.com/proposals/${id}?run=run-host`);
    expect(read).toBe(created);
  });
});
