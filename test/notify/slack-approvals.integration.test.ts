import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/sql/sql.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { tempDir } from '../support/engine.js';
import { type RunningServe, serve } from '../support/serve.js';
import {
  buttonValue,
  cardText,
  clickPayload,
  FAKE_CHANNEL,
  type FakeMessage,
  type FakeSlack,
  signed,
  slackEnvFor,
  startFakeSlack,
} from './support/fake-slack.js';

const TOKEN = `xoxb-${randomBytes(8).toString('hex')}`;
const SIGNING_SECRET = randomBytes(16).toString('hex');
const APPROVE = 'countersign_approve';
const DECLINE = 'countersign_decline';

const temp = tempDir();
let slack: FakeSlack;
let server: RunningServe;
let adminToken: string;
let operatorToken: string;
let restoreEnv: (() => void) | undefined;

beforeAll(async () => {
  slack = await startFakeSlack(TOKEN);
  slack.users.set('U1ADA', { email: 'approver@acme.test' });
  slack.users.set('U2BOB', { email: 'approver2@acme.test' });
  slack.users.set('U3VIEW', { email: 'viewer@acme.test' });
  slack.users.set('U4STRANGER', { email: 'stranger@elsewhere.test' });
  slack.users.set('U5UNCONFIRMED', { email: 'approver@acme.test', confirmed: false });
  restoreEnv = slackEnvFor(slack, TOKEN, SIGNING_SECRET);
  server = await serve(['--demo', '--db', join(temp.dir, 'slack.db'), '--port', '0']);
  const credentials = JSON.parse(
    readFileSync(join(temp.dir, 'countersign-demo-credentials.json'), 'utf8'),
  ) as {
    tenants: Record<string, { adminToken: string; operatorToken: string }>;
  };
  adminToken = credentials.tenants['acme']!.adminToken;
  operatorToken = credentials.tenants['acme']!.operatorToken;
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await slack?.close();
  restoreEnv?.();
  temp.cleanup();
});

/** The card of the proposal whose title or fields contain `needle`, in `tenant`. */
async function card(needle: string, tenant = 'acme'): Promise<FakeMessage> {
  let found: FakeMessage | undefined;
  await expect
    .poll(() => {
      found = slack.messages.find((m) => {
        const value = buttonValue(m, APPROVE) ?? '';
        return cardText(m).includes(needle) && value.includes(`"tenant":"${tenant}"`);
      });
      return found !== undefined;
    })
    .toBe(true);
  return found!;
}

function click(
  user: string,
  actionId: string,
  value: string,
  options: { secret?: string; at?: number } = {},
) {
  const { body, headers } = signed(
    clickPayload({ user, actionId, value }),
    options.secret ?? SIGNING_SECRET,
    options.at,
  );
  return send(body, headers);
}

function send(body: string, headers: Record<string, string>) {
  return fetch(`${server.url}/integrations/slack/interactions`, { method: 'POST', headers, body });
}

async function ephemeralFor(user: string, count: number): Promise<string> {
  await expect.poll(() => slack.ephemerals.filter((e) => e.user === user).length).toBe(count);
  return slack.ephemerals.filter((e) => e.user === user)[count - 1]!.text;
}

function api(path: string, init: RequestInit = {}) {
  return fetch(`${server.url}/api/v1${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${adminToken}`,
      'content-type': 'application/json',
      ...(init.headers ?? {}),
    },
  });
}

async function proposalOf(value: string) {
  const { proposalId } = JSON.parse(value) as { proposalId: string };
  const response = await api(`/proposals/${proposalId}`);
  return (await response.json()) as { status: string; id: string };
}

describe('Slack approvals with serve --demo and a fake Slack Web API', () => {
  it('posts each new proposal through the outbox as a card: title, fields high-impact first, short hash, rule, expiry, buttons', async () => {
    const big = await card('12,500.00 USD');
    const text = cardText(big);
    expect(big.channel).toBe(FAKE_CHANNEL);
    expect(text).toContain('Approval rule: needs 2');
    expect(text).toMatch(/Short hash [0-9a-f]{12}/);
    expect(text).toMatch(/Expires \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(expires in/);
    expect(text).toContain('Open in console');
    // High-impact fields (the amount) come before the others.
    const section = big.blocks.find((b) => b['type'] === 'section' && Array.isArray(b['fields']))!;
    const first = (section['fields'] as { text: string }[])[0]!.text;
    expect(first).toMatch(/^⚠ /);
    const value = JSON.parse(buttonValue(big, APPROVE)!) as { digest: string; proposalId: string };
    expect(value.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(text).toContain(value.digest.slice(0, 12));
    // The bot token never reaches the server's output.
    expect(server.output.map((o) => o.text).join('')).not.toContain(TOKEN);
    expect(server.output.map((o) => o.text).join('')).not.toContain(SIGNING_SECRET);
  });

  it('refuses a request signed with another secret, an old timestamp and a replay, each with its reason', async () => {
    const value = buttonValue(await card('240.49 USD'), APPROVE)!;
    const wrong = await click('U1ADA', APPROVE, value, { secret: 'not-the-secret' });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { reason: string }).reason).toBe('unauthenticated');
    const old = await click('U1ADA', APPROVE, value, { at: Math.floor(Date.now() / 1000) - 6 * 60 });
    expect(old.status).toBe(401);
    expect(await old.json()).toMatchObject({
      reason: 'unauthenticated',
      message: 'the request timestamp is outside the 5-minute window',
    });
    // A click by a Slack user without a link or a verified email: accepted by the signature, refused.
    const { body, headers } = signed(
      clickPayload({ user: 'U4STRANGER', actionId: APPROVE, value }),
      SIGNING_SECRET,
    );
    expect((await send(body, headers)).status).toBe(200);
    expect(await ephemeralFor('U4STRANGER', 1)).toContain('(slack_user_unmapped)');
    const replayed = await send(body, headers);
    expect(replayed.status).toBe(409);
    expect(((await replayed.json()) as { reason: string }).reason).toBe('replayed');
    expect(slack.ephemerals.filter((e) => e.user === 'U4STRANGER')).toHaveLength(1);
    expect((await proposalOf(value)).status).toBe('pending');
  });

  it('refuses signed but malformed interactions with invalid_form, never a 500, nothing decided', async () => {
    const value = buttonValue(await card('240.49 USD'), APPROVE)!;
    const form = (payload: unknown) => new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const bodies = [
      'payload=%7Bnot-json',
      'nothing=here',
      form({ type: 'block_actions', user: { id: 'U1ADA' }, actions: [{ action_id: APPROVE }] }),
      form({ ...clickPayload({ user: 'U1ADA', actionId: APPROVE, value: '{oops' }) }),
    ];
    for (const body of bodies) {
      const at = Math.floor(Date.now() / 1000);
      const signature = `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${at}:${body}`).digest('hex')}`;
      const answer = await send(body, {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': String(at),
        'x-slack-signature': signature,
      });
      expect([answer.status, ((await answer.json()) as { reason: string }).reason]).toEqual([
        400,
        'invalid_form',
      ]);
    }
    expect((await proposalOf(value)).status).toBe('pending');
  });

  it('refuses an unconfirmed email, a mapped viewer and a stale digest, with nothing decided', async () => {
    const value = buttonValue(await card('240.49 USD'), APPROVE)!;
    expect((await click('U5UNCONFIRMED', APPROVE, value)).status).toBe(200);
    expect(await ephemeralFor('U5UNCONFIRMED', 1)).toContain('(slack_user_unmapped)');
    expect((await click('U3VIEW', APPROVE, value)).status).toBe(200);
    expect(await ephemeralFor('U3VIEW', 1)).toContain('(forbidden)');
    const stale = JSON.stringify({ ...JSON.parse(value), digest: 'a'.repeat(64) });
    expect((await click('U1ADA', APPROVE, stale)).status).toBe(200);
    expect(await ephemeralFor('U1ADA', 1)).toContain('(stale_view)');
    expect((await click('U1ADA', DECLINE, stale)).status).toBe(200);
    expect(await ephemeralFor('U1ADA', 2)).toContain('(stale_view)');
    expect((await proposalOf(value)).status).toBe('pending');
  });

  it('an admin links a Slack user to an operator (audited); the linked user then approves, and the card says so', async () => {
    const message = await card('240.49 USD');
    const value = buttonValue(message, APPROVE)!;
    // Only admins link; a link names an operator of the admin's own tenant.
    const missing = await api('/slack/users/U5UNCONFIRMED', {
      method: 'PUT',
      body: JSON.stringify({ email: 'approver@globex.test' }),
    });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { reason: string }).reason).toBe('not_found');
    const linked = await api('/slack/users/U5UNCONFIRMED', {
      method: 'PUT',
      body: JSON.stringify({ email: 'approver@acme.test' }),
    });
    expect(linked.status).toBe(200);
    const list = (await (await api('/slack/users')).json()) as {
      links: { slackUser: string; email: string }[];
    };
    expect(list.links).toEqual([
      expect.objectContaining({ slackUser: 'U5UNCONFIRMED', email: 'approver@acme.test' }),
    ]);
    expect((await click('U5UNCONFIRMED', APPROVE, value)).status).toBe(200);
    await expect.poll(async () => (await proposalOf(value)).status).toBe('succeeded');
    await expect
      .poll(() => cardText(message))
      .toContain('Approved by approver@acme.test — 1 of 1. Outcome: succeeded.');
    expect(buttonValue(message, APPROVE)).toBeUndefined();
    // A second click on the decided card: nothing happens, and the reply says why.
    expect((await click('U2BOB', APPROVE, value)).status).toBe(200);
    expect(await ephemeralFor('U2BOB', 1)).toContain('(replayed)');
    const removed = await api('/slack/users/U5UNCONFIRMED', { method: 'DELETE' });
    expect(removed.status).toBe(200);
    // Both changes are in the tenant's hash-chained audit, by the admin.
    const store = new SqliteStore({ path: join(temp.dir, 'slack.db') });
    try {
      const rows = await store.transaction((tx) =>
        tx.local.all(
          sql`SELECT actor, detail_json FROM countersign_audit_events WHERE tenant = 'acme' AND step = 'operator_changed' ORDER BY seq`,
        ),
      );
      expect(rows.map((r) => [r['actor'], JSON.parse(String(r['detail_json']))])).toEqual([
        [
          'user:admin@acme.test',
          { operator: 'approver@acme.test', slackUser: { id: 'U5UNCONFIRMED', linked: true } },
        ],
        [
          'user:admin@acme.test',
          { operator: 'approver@acme.test', slackUser: { id: 'U5UNCONFIRMED', linked: false } },
        ],
      ]);
    } finally {
      await store.close();
    }
    // Only admins manage links: an approver's token is refused.
    const approverCall = await fetch(`${server.url}/api/v1/slack/users`, {
      headers: { authorization: `Bearer ${operatorToken}` },
    });
    expect(approverCall.status).toBe(403);
    expect(((await approverCall.json()) as { reason: string }).reason).toBe('forbidden');
  });

  it('two Slack users complete the quorum of the 12,500.00 invoice; the card shows 1 of 2, then the outcome', async () => {
    const message = await card('12,500.00 USD');
    const value = buttonValue(message, APPROVE)!;
    expect((await click('U1ADA', APPROVE, value)).status).toBe(200);
    await expect
      .poll(() => cardText(message))
      .toContain('Approved by approver@acme.test — 1 of 2. Waiting for 1 more.');
    // The same approver again does not count twice.
    expect((await click('U1ADA', APPROVE, value)).status).toBe(200);
    expect(await ephemeralFor('U1ADA', 3)).toContain('(already_approved)');
    expect((await click('U2BOB', APPROVE, value)).status).toBe(200);
    // The demo's late fee makes revalidation fail: the outcome is revision_required, nothing paid.
    await expect.poll(async () => (await proposalOf(value)).status).toBe('revision_required');
    await expect
      .poll(() => cardText(message))
      .toContain('Approved by approver@acme.test, approver2@acme.test — 2 of 2. Outcome: revision required');
  });

  it('two clicks racing on one proposal make exactly one decision', async () => {
    const message = await card('99.99 USD');
    const value = buttonValue(message, APPROVE)!;
    const before = slack.ephemerals.length;
    const [a, b] = await Promise.all([click('U1ADA', APPROVE, value), click('U2BOB', APPROVE, value)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    // The loser is told, by the reason the engine gave it: the proposal was no longer pending.
    await expect.poll(() => slack.ephemerals.length).toBe(before + 1);
    expect(slack.ephemerals.at(-1)!.text).toMatch(/^Nothing was done \(replayed\)/);
    await expect.poll(async () => (await proposalOf(value)).status).toBe('succeeded');
    const { proposalId } = JSON.parse(value) as { proposalId: string };
    const audit = (await (await api(`/proposals/${proposalId}/audit`)).json()) as {
      events: { step: string }[];
    };
    expect(audit.events.filter((e) => e.step === 'approved')).toHaveLength(1);
    expect(audit.events.filter((e) => e.step === 'outcome')).toHaveLength(1);
  });

  it('declines from Slack; a Slack user of another tenant is unmapped there', async () => {
    const refund = await card('ord-81');
    const value = buttonValue(refund, DECLINE)!;
    expect((await click('U2BOB', DECLINE, value)).status).toBe(200);
    await expect.poll(async () => (await proposalOf(value)).status).toBe('declined');
    await expect.poll(() => cardText(refund)).toContain('Declined by approver2@acme.test. Nothing was done.');
    const globex = buttonValue(await card('ord-81', 'globex'), APPROVE)!;
    const before = slack.ephemerals.filter((e) => e.user === 'U2BOB').length;
    expect((await click('U2BOB', APPROVE, globex)).status).toBe(200);
    expect(await ephemeralFor('U2BOB', before + 1)).toContain('(slack_user_unmapped)');
  });
});
