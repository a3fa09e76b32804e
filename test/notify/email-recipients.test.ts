import { describe, expect, it } from 'vitest';
import type { Actor } from '../../src/index.js';
import { emailRecipients, type NotifiedOperator } from '../../src/notify/notifications.js';
import type { NotificationPayload } from '../../src/notify/outbox-writer.js';

const operator = (email: string, roles: string[], tenant = 'acme'): NotifiedOperator => ({
  email,
  actor: { kind: 'operator', id: `user:${email}`, tenant, roles },
});
const OPERATORS = [
  operator('ada@acme.test', ['approver']),
  operator('bob@acme.test', ['approver']),
  operator('cfo@acme.test', ['admin', 'finance']),
  operator('ed@acme.test', ['approver']),
  operator('gus@globex.test', ['approver'], 'globex'),
];
const notice = (type: string, approvals: Partial<NotificationPayload['data']['approvals']>) => ({
  type,
  proposalId: 'prp_1',
  payload: {
    type,
    data: {
      requestedBy: 'agent:acme-assistant',
      editedBy: 'user:ed@acme.test',
      approvals: { required: 2, roles: [], given: 0, approvers: [], ...approvals },
    },
  } as unknown as NotificationPayload,
});

describe('who an email goes to', () => {
  const recipients = emailRecipients(async () => OPERATORS);

  it('without the engine: approvers of the tenant who are not its editor, not an approver yet, with a policy role', async () => {
    expect(await recipients('acme', notice('proposal.created', {}))).toEqual([
      'ada@acme.test',
      'bob@acme.test',
      'cfo@acme.test',
    ]);
    const given = notice('proposal.approval_given', { given: 1, approvers: ['user:ada@acme.test'] });
    expect(await recipients('acme', given)).toEqual(['bob@acme.test', 'cfo@acme.test']);
    expect(await recipients('acme', notice('proposal.created', { roles: ['finance'] }))).toEqual([
      'cfo@acme.test',
    ]);
  });

  it('an outcome goes to the approvers who decided it, and a foreign operator is never mailed', async () => {
    const outcome = notice('proposal.outcome', {
      given: 2,
      approvers: ['user:bob@acme.test', 'user:gus@globex.test'],
    });
    expect(await recipients('acme', outcome)).toEqual(['bob@acme.test']);
  });

  it("with the engine's answer: exactly the operators it allows", async () => {
    const asked: Actor[] = [];
    const only = emailRecipients(
      async () => OPERATORS,
      async (actor) => {
        asked.push(actor);
        return actor.id === 'user:ed@acme.test';
      },
    );
    expect(await only('acme', notice('proposal.created', {}))).toEqual(['ed@acme.test']);
    expect(asked.map((a) => a.tenant)).toEqual(['acme', 'acme', 'acme', 'acme']);
  });
});
