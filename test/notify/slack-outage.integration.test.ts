import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/engine.js';
import { type RunningServe, serve } from '../support/serve.js';
import { type FakeSlack, slackEnvFor, startFakeSlack } from './support/fake-slack.js';

const TOKEN = `xoxb-${randomBytes(8).toString('hex')}`;
const temp = tempDir();
let slack: FakeSlack | undefined;
let server: RunningServe | undefined;
let restoreEnv: (() => void) | undefined;

afterAll(async () => {
  await server?.stop();
  await slack?.close();
  restoreEnv?.();
  temp.cleanup();
});

interface DeliveryJson {
  readonly channel: string;
  readonly type: string;
  readonly proposalId: string;
  readonly status: string;
  readonly attempts: number;
  readonly lastError: string | null;
}

describe('a Slack outage', () => {
  it('rate limits (429) and server errors (500): every post is retried by the outbox, none lost, none doubled', async () => {
    slack = await startFakeSlack(TOKEN);
    // Slack is down from the start: every post of the demo's proposals fails first with 429…
    slack.fail('chat.postMessage', { status: 429 });
    restoreEnv = slackEnvFor(slack, TOKEN, randomBytes(16).toString('hex'));
    server = await serve(['--demo', '--db', join(temp.dir, 'outage.db'), '--port', '0']);
    const credentials = JSON.parse(
      readFileSync(join(temp.dir, 'countersign-demo-credentials.json'), 'utf8'),
    ) as { tenants: Record<string, { adminToken: string }> };
    const deliveries = async (tenant: string): Promise<DeliveryJson[]> => {
      const response = await fetch(`${server!.url}/api/v1/deliveries?limit=200`, {
        headers: { authorization: `Bearer ${credentials.tenants[tenant]!.adminToken}` },
      });
      return ((await response.json()) as { items: DeliveryJson[] }).items.filter(
        (d) => d.channel === 'slack',
      );
    };
    const posts = async () =>
      [...(await deliveries('acme')), ...(await deliveries('globex'))].filter(
        (d) => d.type === 'proposal.created',
      );

    await expect
      .poll(async () => {
        const rows = await posts();
        return rows.length > 0 && rows.every((d) => d.attempts >= 1 && d.lastError === 'http_status 429');
      })
      .toBe(true);
    // …then with 500 (the outbox retries on its schedule: the first retry after a second).
    slack.fail('chat.postMessage', { status: 500 });
    await expect
      .poll(() => slack!.calls.some((c) => c.method === 'chat.postMessage' && c.status === 500))
      .toBe(true);
    expect(slack.messages).toHaveLength(0);
    const waiting = await posts();
    expect(waiting.every((d) => d.status === 'pending')).toBe(true);

    // Slack answers again: the first success brings every waiting retry forward.
    slack.recover();
    await expect.poll(async () => (await posts()).every((d) => d.status === 'delivered')).toBe(true);
    const posted = await posts();
    expect(slack.messages).toHaveLength(posted.length);
    const ids = slack.messages.map((m) => (JSON.stringify(m.blocks).match(/prp_[A-Za-z0-9]+/) ?? [''])[0]);
    expect(new Set(ids).size).toBe(posted.length);
    expect(new Set(ids)).toEqual(new Set(posted.map((d) => d.proposalId)));
  });
});
