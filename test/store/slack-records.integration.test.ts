import { beforeAll, describe, expect, it } from 'vitest';
import { slackRecordsOf } from '../../src/store/sql-slack.js';
import { BACKENDS, storeOn, warmUp } from '../support/backends.js';

for (const backend of BACKENDS) {
  describe(`Slack records (${backend})`, () => {
    beforeAll(() => warmUp(backend), 120_000);

    it('keep the first message a proposal was posted as, and links per tenant', async () => {
      const { store, dispose } = await storeOn(backend);
      try {
        await store.migrate();
        const message = {
          tenant: 'acme',
          proposalId: 'prp_1',
          channel: 'C1',
          ts: '1700000000.000100',
          postedAt: 5,
        };
        const run = <T>(fn: (r: ReturnType<typeof slackRecordsOf>) => Promise<T>) =>
          store.transaction((tx) => fn(slackRecordsOf(tx)));
        expect(await run((r) => r.recordMessage(message))).toBe(true);
        expect(await run((r) => r.recordMessage({ ...message, ts: '1700000000.000200' }))).toBe(false);
        expect(await run((r) => r.message('acme', 'prp_1'))).toEqual(message);
        // Another tenant never sees it.
        expect(await run((r) => r.message('globex', 'prp_1'))).toBeUndefined();

        const link = {
          tenant: 'acme',
          slackUser: 'U1',
          operatorEmail: 'ada@acme.test',
          linkedBy: 'user:admin@acme.test',
          linkedAt: 7,
        };
        expect(await run((r) => r.setLink(link))).toBeNull();
        expect(await run((r) => r.setLink({ ...link, operatorEmail: 'bob@acme.test', linkedAt: 8 }))).toBe(
          'ada@acme.test',
        );
        expect(await run((r) => r.links('acme'))).toEqual([
          { ...link, operatorEmail: 'bob@acme.test', linkedAt: 8 },
        ]);
        expect(await run((r) => r.link('globex', 'U1'))).toBeUndefined();
        expect(await run((r) => r.removeLink('globex', 'U1'))).toBeNull();
        expect(await run((r) => r.removeLink('acme', 'U1'))).toBe('bob@acme.test');
        expect(await run((r) => r.links('acme'))).toEqual([]);
      } finally {
        await store.close();
        await dispose();
      }
    });
  });
}
