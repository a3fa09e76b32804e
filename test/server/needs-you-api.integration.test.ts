import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, storeOn, warmUp } from '../support/backends.js';
import {
  call,
  freshInvoice,
  proposeViaApi,
  type ServerHarness,
  serverHarness,
} from './support/server-harness.js';

const pay = (invoice: string) => ({ operation: 'invoice.pay', request: { invoice_id: invoice } });

for (const backend of BACKENDS) {
  describe(`GET /api/v1/proposals?needs=me (${backend})`, () => {
    let h: ServerHarness;
    let dispose: () => Promise<void>;
    beforeAll(() => warmUp(backend), 120_000);
    afterEach(async () => {
      await h.close();
      await dispose();
    });
    const open = async () => {
      const made = await storeOn(backend);
      dispose = made.dispose;
      h = await serverHarness({ store: made.store, limits: false });
    };
    const needsOf = async (token: string, query = '') => {
      const response = await call(h, 'GET', `/api/v1/proposals?needs=me${query}`, { token });
      expect(response.status).toBe(200);
      return response.body as { items: { id: string }[]; nextCursor?: string };
    };
    const ids = async (token: string) => (await needsOf(token)).items.map((p) => p.id);

    it('two approvers: the first approval takes it out of the first list and leaves it in the second; agents and other tenants never see it', async () => {
      await open();
      const acme = h.tenants.acme.operators;
      const big = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme', 1_250_000)));
      const small = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
      await proposeViaApi(h, 'globex', pay(freshInvoice(h.world, 'globex')));
      expect(await ids(acme.approver.token)).toEqual([small.id, big.id]);
      expect(await ids(acme.admin.token)).toEqual([small.id, big.id]);
      const first = await call(h, 'POST', `/api/v1/proposals/${big.id}/approve`, {
        token: acme.approver.token,
        body: { seenDigest: big.digest },
      });
      expect(first.status).toBe(202);
      expect(await ids(acme.approver.token)).toEqual([small.id]);
      expect(await ids(acme.admin.token)).toEqual([small.id, big.id]);
      // The full list still holds it, pending at 1 of 2.
      const pending = await call(h, 'GET', '/api/v1/proposals?status=pending', {
        token: acme.approver.token,
      });
      expect((pending.body['items'] as { id: string }[]).map((p) => p.id)).toEqual([small.id, big.id]);
      // A viewer and the proposing agent may decide nothing; globex's approver sees none of acme's.
      expect(await ids(acme.viewer.token)).toEqual([]);
      expect(await ids(h.tenants.acme.agentToken)).toEqual([]);
      const globex = await ids(h.tenants.globex.operators.approver.token);
      expect(globex).toHaveLength(1);
      expect(globex).not.toContain(big.id);
      expect(globex).not.toContain(small.id);
    });

    it('pages by the list cursor without a gap or a repeat', async () => {
      await open();
      const token = h.tenants.acme.operators.admin.token;
      const made: string[] = [];
      for (let i = 0; i < 5; i++) {
        made.push((await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')))).id);
        h.clock.advance(1_000);
      }
      const first = await needsOf(token, '&limit=2');
      expect(first.items.map((p) => p.id)).toEqual([made[4], made[3]]);
      const second = await needsOf(token, `&limit=2&cursor=${first.nextCursor}`);
      const third = await needsOf(token, `&limit=2&cursor=${second.nextCursor}`);
      expect(third.nextCursor).toBeUndefined();
      expect([...first.items, ...second.items, ...third.items].map((p) => p.id)).toEqual([...made].reverse());
    });

    it('parses its query strictly: a bad value is 422 naming the field', async () => {
      await open();
      const token = h.tenants.acme.operators.approver.token;
      const refused = async (query: string) => {
        const response = await call(h, 'GET', `/api/v1/proposals?${query}`, { token });
        expect(response.status).toBe(422);
        expect(response.body['reason']).toBe('invalid_request');
        return (response.body['issues'] as { path: string }[]).map((i) => i.path);
      };
      expect(await refused('needs=you')).toEqual(['$.needs']);
      expect(await refused('needs=')).toEqual(['$.needs']);
      expect(await refused('needs=me&status=declined')).toEqual(['$.status']);
      expect(await refused('needs=me&limit=0')).toEqual(['$.limit']);
      expect(await refused('needs=me&cursor=nope')).toEqual(['$.cursor']);
      expect((await needsOf(token, '&status=pending')).items).toEqual([]);
    });
  });
}
