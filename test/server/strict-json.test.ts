import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  freshInvoice,
  proposeViaApi,
  type ServerHarness,
  serverHarness,
} from './support/server-harness.js';
import { ConsoleClient, hidden } from './support/console-client.js';

let h: ServerHarness;
let proposal: { id: string; digest: string };
beforeAll(async () => {
  h = await serverHarness();
  const invoice = freshInvoice(h.world, 'acme');
  proposal = await proposeViaApi(h, 'acme', {
    operation: 'invoice.pay',
    request: { invoice_id: invoice },
    resource: `invoice:${invoice}`,
  });
});
afterAll(async () => {
  await h.close();
});

const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

// Every case is a body the API must refuse with 400 and a reason, never a 500 and never executed.
const CASES: readonly { name: string; body: string; reason: 'invalid_json'; detail?: string }[] = [
  {
    name: 'a duplicate key',
    body: `{"seenDigest":"${'a'.repeat(64)}","seenDigest":"DIGEST"}`,
    reason: 'invalid_json',
    detail: 'duplicate_key',
  },
  {
    name: 'a __proto__ key',
    body: '{"seenDigest":"DIGEST","__proto__":{"admin":true}}',
    reason: 'invalid_json',
    detail: 'proto_key',
  },
  {
    name: 'a nested __proto__ key',
    body: '{"seenDigest":"DIGEST","x":[{"__proto__":1}]}',
    reason: 'invalid_json',
    detail: 'proto_key',
  },
  {
    name: 'nesting deeper than 32',
    body: `{"seenDigest":"DIGEST","x":${deep(40)}}`,
    reason: 'invalid_json',
    detail: 'too_deep',
  },
  { name: 'nesting 100 000 deep', body: deep(100_000).slice(0, 60_000), reason: 'invalid_json' },
  {
    name: 'a body over 64 KiB',
    body: `{"seenDigest":"DIGEST","pad":"${'x'.repeat(70_000)}"}`,
    reason: 'invalid_json',
  },
  {
    name: 'trailing data',
    body: '{"seenDigest":"DIGEST"} {}',
    reason: 'invalid_json',
    detail: 'trailing_data',
  },
  { name: 'a trailing comma', body: '{"seenDigest":"DIGEST",}', reason: 'invalid_json', detail: 'syntax' },
  { name: 'an empty body', body: '', reason: 'invalid_json', detail: 'empty' },
  {
    name: 'a lone surrogate',
    body: '{"seenDigest":"DIGEST","x":"\\ud800"}',
    reason: 'invalid_json',
    detail: 'lone_surrogate',
  },
  {
    name: 'an unsafe integer',
    body: '{"seenDigest":"DIGEST","x":9007199254740993}',
    reason: 'invalid_json',
    detail: 'unsafe_integer',
  },
];

describe('strict JSON bodies', () => {
  for (const c of CASES) {
    it(`refuses ${c.name} with 400 ${c.reason}${c.detail ? ` (${c.detail})` : ''}`, async () => {
      const r = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
        token: h.tenants.acme.operators.approver.token,
        rawBody: c.body.replaceAll('DIGEST', proposal.digest),
      });
      expect(r.status).toBe(400);
      expect(r.body['reason']).toBe(c.reason);
      if (c.detail) expect(r.body['detail']).toBe(c.detail);
      expect(typeof r.body['message']).toBe('string');
      expect((await h.engine.get('acme', proposal.id))?.status).toBe('pending');
    });
  }

  it('refuses invalid UTF-8 with 400 invalid_json', async () => {
    const response = await fetch(`${h.url}/api/v1/proposals/${proposal.id}/approve`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${h.tenants.acme.operators.approver.token}`,
        'content-type': 'application/json',
      },
      body: Buffer.concat([Buffer.from('{"seenDigest":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { reason: string }).reason).toBe('invalid_json');
  });

  it('refuses a form-encoded or text body with 415 unsupported_media_type', async () => {
    for (const type of [
      'application/x-www-form-urlencoded',
      'text/plain',
      'multipart/form-data; boundary=x',
    ]) {
      const r = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
        token: h.tenants.acme.operators.approver.token,
        rawBody: `seenDigest=${proposal.digest}`,
        headers: { 'content-type': type },
      });
      expect(r.status).toBe(415);
      expect(r.body['reason']).toBe('unsupported_media_type');
    }
    expect((await h.engine.get('acme', proposal.id))?.status).toBe('pending');
  });

  it('refuses a declared charset other than UTF-8 with 415 unsupported_media_type, before reading the body', async () => {
    const r = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
      token: h.tenants.acme.operators.approver.token,
      body: { seenDigest: proposal.digest },
      headers: { 'content-type': 'application/json; charset=latin1' },
    });
    expect(r.status).toBe(415);
    expect(r.body['reason']).toBe('unsupported_media_type');
    expect(r.body['message']).toBe(
      'charset "latin1" is not accepted: send the body as application/json in UTF-8 (charset=utf-8, or no charset)',
    );
    for (const type of [
      'application/json; charset=ISO-8859-1',
      'application/json;charset=utf-16',
      'application/json; charset="windows-1252"',
      'application/json; charset=',
      // A second charset cannot slip past a first, UTF-8 one.
      'application/json; charset=utf-8; charset=latin1',
    ]) {
      const refused = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
        token: h.tenants.acme.operators.approver.token,
        body: { seenDigest: proposal.digest },
        headers: { 'content-type': type },
      });
      expect([type, refused.status, refused.body['reason']]).toEqual([type, 415, 'unsupported_media_type']);
    }
    expect((await h.engine.get('acme', proposal.id))?.status).toBe('pending');
  });

  it('reads a body declared utf-8, UTF-8, utf8 or "utf-8" (a non-object body reaches the 422 past the media check)', async () => {
    for (const type of [
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'application/json; charset=utf8',
      'application/json; charset="utf-8"',
      'Application/JSON; Charset=Utf-8',
    ]) {
      const r = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
        token: h.tenants.acme.operators.approver.token,
        rawBody: '[]',
        headers: { 'content-type': type },
      });
      expect([type, r.status, r.body['reason']]).toEqual([type, 422, 'invalid_request']);
    }
  });

  it('refuses a console form declared in a charset other than UTF-8 with 415 unsupported_media_type', async () => {
    const client = new ConsoleClient(h.url);
    const csrf = hidden((await client.get('/login')).html, 'csrf');
    const fields = { csrf, email: 'nobody@acme.test', password: 'not-the-password' };
    const latin1 = await client.post('/login', fields, {
      'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1',
    });
    expect(latin1.status).toBe(415);
    expect(latin1.html).toContain('<code class="reason-code">unsupported_media_type</code>');
    // The same form declared UTF-8 is read: a wrong password, 401.
    const utf8 = await client.post('/login', fields, {
      'content-type': 'application/x-www-form-urlencoded; charset=UTF-8',
    });
    expect(utf8.status).toBe(401);
  });

  it('refuses a JSON body that is not an object with 422 invalid_request', async () => {
    const r = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
      token: h.tenants.acme.operators.approver.token,
      rawBody: '[]',
    });
    expect(r.status).toBe(422);
    expect(r.body['reason']).toBe('invalid_request');
  });

  it('accepts the same approval once the body is well-formed', async () => {
    const r = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
      token: h.tenants.acme.operators.approver.token,
      rawBody: `{"seenDigest":"${proposal.digest}"}`,
    });
    expect(r.status).toBe(200);
    expect(r.body['outcome']).toMatchObject({ kind: 'succeeded' });
  });
});
