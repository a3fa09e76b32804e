import { describe, expect, it } from 'vitest';
import { demoOperations, demoWorld } from '../../src/demo/demo-world.js';
import type { NotificationPayload } from '../../src/notify/outbox-writer.js';
import {
  SLACK_ACTIONS,
  type SlackCardState,
  slackCard,
  slackFields,
} from '../../src/notify/slack-message.js';
import type { AnyOperation } from '../../src/operation/define-operation.js';

const pay = demoOperations(demoWorld()).find((o) => o.kind === 'invoice.pay')!;
const NOW = Date.parse('2026-05-01T10:00:00Z');
const DIGEST = 'ab'.repeat(32);

function data(preview: Record<string, unknown>, overrides: Partial<NotificationPayload['data']> = {}) {
  return {
    eventId: 'evt_1',
    tenant: 'acme',
    proposalId: 'prp_1',
    runId: 'run-1',
    operation: 'invoice.pay',
    status: 'pending',
    reason: null,
    actor: 'agent:acme-assistant',
    requestedBy: 'agent:acme-assistant',
    editedBy: null,
    approvals: { required: 2, roles: [], given: 0, approvers: [] },
    digest: DIGEST,
    short: DIGEST.slice(0, 12),
    title: String(preview['title'] ?? 'invoice.pay'),
    amount: null,
    highImpact: [],
    createdAt: new Date(NOW - 60_000).toISOString(),
    expiresAt: new Date(NOW + 58 * 60_000).toISOString(),
    supersedes: null,
    supersededBy: null,
    route: null,
    preview,
    ...overrides,
  } satisfies NotificationPayload['data'];
}

const PREVIEW = {
  title: 'Pay Contoso Freight 12,500.00 USD',
  supplier: 'Contoso Freight',
  invoice_id: 'inv-105',
  amount: { minor: 1_250_000, currency: 'USD' },
  destination_account_id: '••••-7731',
};
const PENDING: SlackCardState = { status: 'pending', required: 2, approvers: [], decidedBy: null };

function render(preview = PREVIEW, state = PENDING, operation: AnyOperation | undefined = pay) {
  return slackCard({
    data: data(preview),
    operation,
    state,
    link: 'https://desk.test/proposals/prp_1',
    now: NOW,
  });
}

function elements(card: ReturnType<typeof render>) {
  const actions = card.blocks.find((b) => b.type === 'actions') as unknown as Record<string, unknown>;
  return actions['elements'] as { action_id: string; value?: string; url?: string; style?: string }[];
}

describe('the Slack card of a proposal', () => {
  it('lists every field, high-impact first (amount, destination), then the declared order', () => {
    const { fields, whole } = slackFields(PREVIEW, pay);
    expect(whole).toBe(true);
    expect(fields.map((f) => [f.name, f.text, f.highImpact])).toEqual([
      ['amount', '12,500.00 USD', true],
      ['destination_account_id', '••••-7731', true],
      ['supplier', 'Contoso Freight', false],
      ['invoice_id', 'inv-105', false],
    ]);
  });

  it('shows the title, the short hash, the rule, the expiry, and Approve / Decline / Open in console', () => {
    const card = render();
    const json = JSON.stringify(card.blocks);
    expect(card.blocks[0]).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: PREVIEW.title, emoji: false },
    });
    expect(json).toContain(
      `Short hash ${DIGEST.slice(0, 12)} · Approval rule: needs 2 · Expires 2026-05-01 10:58:00 UTC (expires in 58 min)`,
    );
    expect(json).toContain('Waiting for approval: needs 2.');
    expect(elements(card).map((e) => e.action_id)).toEqual([
      SLACK_ACTIONS.approve,
      SLACK_ACTIONS.decline,
      SLACK_ACTIONS.open,
    ]);
    expect(JSON.parse(elements(card)[0]!.value!)).toEqual({
      tenant: 'acme',
      proposalId: 'prp_1',
      digest: DIGEST,
    });
    expect(elements(card)[2]!.url).toBe('https://desk.test/proposals/prp_1');
    expect(card.text).toBe(`Approval needed: ${PREVIEW.title} [${DIGEST.slice(0, 12)}]`);
  });

  it('writes model text as plain text only: no mention, link or formatting reaches Slack as markup', () => {
    const card = render({ ...PREVIEW, title: '<!channel> *urgent* <https://evil.test|pay now>' });
    const json = JSON.stringify(card.blocks);
    expect(json).not.toContain('mrkdwn');
    expect((card.blocks[0] as unknown as Record<string, unknown>)['text']).toEqual({
      type: 'plain_text',
      text: '<!channel> *urgent* <https://evil.test|pay now>',
      emoji: false,
    });
  });

  it('offers only Open in console for an operation that opted out (chatApproval: false)', () => {
    const card = render(PREVIEW, PENDING, { ...pay, chatApproval: false });
    expect(elements(card).map((e) => e.action_id)).toEqual([SLACK_ACTIONS.open]);
    expect(JSON.stringify(card.blocks)).toContain('decided in the console only');
  });

  it('offers only Open in console when a field does not fit a message whole', () => {
    const long = { ...PREVIEW, supplier: 'x'.repeat(2_500) };
    expect(slackFields(long, pay).whole).toBe(false);
    expect(elements(render(long)).map((e) => e.action_id)).toEqual([SLACK_ACTIONS.open]);
  });

  it('says where the decision stands, and drops the decision buttons once it is not pending', () => {
    const partly = render(PREVIEW, { ...PENDING, approvers: ['user:ada@acme.test'] });
    expect(JSON.stringify(partly.blocks)).toContain(
      'Approved by ada@acme.test — 1 of 2. Waiting for 1 more.',
    );
    expect(elements(partly)).toHaveLength(3);
    const done = render(PREVIEW, {
      status: 'succeeded',
      required: 2,
      approvers: ['user:ada@acme.test', 'user:bob@acme.test'],
      decidedBy: 'user:bob@acme.test',
    });
    expect(JSON.stringify(done.blocks)).toContain(
      'Approved by ada@acme.test, bob@acme.test — 2 of 2. Outcome: succeeded.',
    );
    expect(elements(done).map((e) => e.action_id)).toEqual([SLACK_ACTIONS.open]);
    const declined = render(PREVIEW, { ...PENDING, status: 'declined', decidedBy: 'user:bob@acme.test' });
    expect(JSON.stringify(declined.blocks)).toContain('Declined by bob@acme.test. Nothing was done.');
    const superseded = render(PREVIEW, { ...PENDING, status: 'superseded' });
    expect(JSON.stringify(superseded.blocks)).toContain('Edited in the console');
  });
});
