import { AssertionError } from 'node:assert';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { messageSend } from '../../src/demo/demo-world.js';
import { defineOperation } from '../../src/index.js';
import {
  adapterContract,
  type RecordingTransport,
  recordingTransaction,
  recordingTransport,
  type SuiteCase,
  TestingKitError,
} from '../../src/testing/index.js';

async function errorOf(c: SuiteCase): Promise<Error | undefined> {
  try {
    await c.run();
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

/** What the fake mail service receives: a draft saved or a message sent. */
interface MailCall {
  readonly method: 'draft' | 'send';
  readonly channel: string;
  readonly to: readonly string[];
  readonly attachments: readonly string[];
  readonly idempotencyKey: string;
}

type Message = z.output<typeof messageArguments>;
const messageArguments = z.strictObject({
  channel: z.enum(['email', 'sms']),
  recipients: z.array(z.string().min(3)).min(1),
  attachments: z.array(z.strictObject({ id: z.string().min(1), content_version: z.string().min(1) })),
  mode: z.enum(['draft', 'send']),
});

/** A fake mail client that records into the transport, as a test of a real adapter would wire it. */
function fakeMail(transport: RecordingTransport<MailCall>) {
  const call = (method: MailCall['method']) => async (m: Message, idempotencyKey: string) => {
    transport.record({
      method,
      channel: m.channel,
      to: m.recipients,
      attachments: m.attachments.map((a) => `${a.id}@${a.content_version}`),
      idempotencyKey,
    });
    return { id: `msg-${transport.calls().length}` };
  };
  return { draft: call('draft'), send: call('send') };
}

type Adapter = (
  mail: ReturnType<typeof fakeMail>,
  m: Message,
  idempotencyKey: string,
) => Promise<{ id: string }>;

/** The message operation of the third note, executable: its scope is `messageSend`'s; the adapter is the part under test. */
function messageOperation(
  transport: RecordingTransport<MailCall>,
  adapter: Adapter,
  tamper: (m: Message) => Message = (m) => m,
) {
  const mail = fakeMail(transport);
  return defineOperation({
    kind: 'message.send',
    scopeVersion: 1,
    effect: 'external',
    scope: messageSend.scope,
    fields: messageSend.fields,
    request: messageArguments,
    arguments: messageArguments,
    prepare: async (request) => ({ arguments: request, preview: { ...request } }),
    execute: async (args, ctx) =>
      ctx.command(tamper(structuredClone(args) as Message), (m, meta) =>
        adapter(mail, m, meta.idempotencyKey),
      ),
    reconcile: async () => ({ kind: 'pending' }),
  });
}

const faithful: Adapter = (mail, m, key) => (m.mode === 'draft' ? mail.draft(m, key) : mail.send(m, key));
// The note's adapter bug: authorization verified draft, the mail adapter always sends.
const alwaysSends: Adapter = (mail, m, key) => mail.send(m, key);

const DRAFT: Message = {
  channel: 'email',
  recipients: ['ada@acme.test', 'bob@acme.test'],
  attachments: [{ id: 'att-1', content_version: 'v3' }],
  mode: 'draft',
};

function draftCase() {
  return {
    name: 'a draft is saved, never sent',
    arguments: DRAFT,
    expected: (ids: { idempotencyKey: string }): MailCall[] => [
      {
        method: 'draft',
        channel: 'email',
        to: ['ada@acme.test', 'bob@acme.test'],
        attachments: ['att-1@v3'],
        idempotencyKey: ids.idempotencyKey,
      },
    ],
  };
}

function sendCase() {
  return {
    name: 'a send is sent',
    arguments: { ...DRAFT, mode: 'send' as const },
    expected: (ids: { idempotencyKey: string }): MailCall[] => [
      {
        method: 'send',
        channel: 'email',
        to: ['ada@acme.test', 'bob@acme.test'],
        attachments: ['att-1@v3'],
        idempotencyKey: ids.idempotencyKey,
      },
    ],
  };
}

describe('adapterContract', () => {
  it('a faithful adapter maps draft to draft and send to send: every case passes', async () => {
    const transport = recordingTransport<MailCall>();
    const cases = adapterContract(messageOperation(transport, faithful), transport, [
      draftCase(),
      sendCase(),
    ]);
    expect(cases.map((c) => c.name)).toEqual([
      'a draft is saved, never sent (message.send → expected downstream call)',
      'a send is sent (message.send → expected downstream call)',
    ]);
    for (const c of cases) expect(await errorOf(c)).toBeUndefined();
    expect(transport.calls().map((c) => c.method)).toEqual(['draft', 'send']);
    expect(transport.calls()[0]!.idempotencyKey).toBe('prp_adaptercontract1.1');
  });

  it('an adapter that always sends fails the draft case, though approved and requested scopes match', async () => {
    const transport = recordingTransport<MailCall>();
    const [draft, send] = adapterContract(messageOperation(transport, alwaysSends), transport, [
      draftCase(),
      sendCase(),
    ]);
    const error = await errorOf(draft!);
    expect(error).toBeInstanceOf(AssertionError);
    expect(error!.message).toContain(
      'message.send: "a draft is saved, never sent": the adapter\'s downstream calls differ from the expected ones',
    );
    expect((error as AssertionError).actual).toEqual([expect.objectContaining({ method: 'send' })]);
    expect((error as AssertionError).expected).toEqual([expect.objectContaining({ method: 'draft' })]);
    // The send case cannot tell the two adapters apart: only the draft case catches the bug.
    expect(await errorOf(send!)).toBeUndefined();
  });

  it('an adapter whose request differs from the approved scope is refused by the same guard as the engine', async () => {
    const transport = recordingTransport<MailCall>();
    const addsRecipient = (m: Message): Message => ({
      ...m,
      recipients: [...m.recipients, 'all-staff@acme.test'],
    });
    const [draft] = adapterContract(messageOperation(transport, faithful, addsRecipient), transport, [
      draftCase(),
    ]);
    const error = await errorOf(draft!);
    expect(error).toBeInstanceOf(AssertionError);
    expect(error!.message).toBe(
      'message.send: the command guard refused the adapter\'s request as scope_mismatch: $.recipients: added "all-staff@acme.test". The request it sends is not the approved scope.',
    );
    expect(transport.calls()).toEqual([]);
  });

  it('an unreviewed option in the request fails closed as invalid_requested_scope', async () => {
    const transport = recordingTransport<MailCall>();
    const addsOption = (m: Message) => ({ ...m, priority: 'urgent' }) as Message;
    const [draft] = adapterContract(messageOperation(transport, faithful, addsOption), transport, [
      draftCase(),
    ]);
    expect((await errorOf(draft!))?.message).toContain(
      "refused the adapter's request as invalid_requested_scope: $.priority: unknown field",
    );
  });

  it('an executor that swallows the refusal still fails the case', async () => {
    const transport = recordingTransport<MailCall>();
    const mail = fakeMail(transport);
    const swallowing = defineOperation({
      kind: 'message.send',
      scopeVersion: 1,
      effect: 'external',
      scope: messageSend.scope,
      fields: messageSend.fields,
      request: messageArguments,
      arguments: messageArguments,
      prepare: async (request) => ({ arguments: request, preview: {} }),
      execute: async (args, ctx) => {
        try {
          return await ctx.command({ ...args, mode: 'send' as const }, (m, meta) =>
            mail.send(m, meta.idempotencyKey),
          );
        } catch {
          return { id: 'pretend' };
        }
      },
      reconcile: async () => ({ kind: 'pending' }),
    });
    const [draft] = adapterContract(swallowing, transport, [draftCase()]);
    expect((await errorOf(draft!))?.message).toContain(
      'refused the adapter\'s request as scope_mismatch: $.mode: "draft" -> "send"',
    );
  });

  it('a downstream call made outside ctx.command fails: no command and no guard cover it', async () => {
    const transport = recordingTransport<MailCall>();
    const mail = fakeMail(transport);
    const sneaky = defineOperation({
      kind: 'message.send',
      scopeVersion: 1,
      effect: 'external',
      scope: messageSend.scope,
      fields: messageSend.fields,
      request: messageArguments,
      arguments: messageArguments,
      prepare: async (request) => ({ arguments: request, preview: {} }),
      execute: async (args, ctx) => {
        await mail.draft(args, ctx.idempotencyKey);
        return ctx.command(args, (m, meta) => mail.draft(m, meta.idempotencyKey));
      },
      reconcile: async () => ({ kind: 'pending' }),
    });
    const [draft] = adapterContract(sneaky, transport, [draftCase()]);
    expect((await errorOf(draft!))?.message).toBe(
      'message.send: downstream call #1 was made outside ctx.command: no command (and no guard) covers it',
    );
  });

  it('local effects: the statements written in the store transaction are the downstream calls', async () => {
    const notes = defineOperation({
      kind: 'note.save',
      scopeVersion: 1,
      effect: 'local',
      scope: z.strictObject({
        tenant: z.string(),
        operation: z.literal('note.save'),
        note_id: z.string(),
        text: z.string(),
      }),
      request: z.strictObject({ note_id: z.string(), text: z.string() }),
      arguments: z.strictObject({ note_id: z.string(), text: z.string() }),
      prepare: async (request) => ({ arguments: request, preview: request }),
      execute: async (args, ctx) =>
        ctx.command(args, async (a, meta) => {
          await ctx.transaction!.run(
            'CREATE TABLE IF NOT EXISTS notes (id TEXT, text TEXT, command_id TEXT)',
          );
          await ctx.transaction!.run('INSERT INTO notes (id, text, command_id) VALUES (?, ?, ?)', [
            a.note_id,
            a.text,
            meta.commandId,
          ]);
          return { saved: true };
        }),
    });
    const transaction = recordingTransaction({ ignore: /^CREATE TABLE/ });
    const [save] = adapterContract(notes, transaction, [
      {
        name: 'a note is inserted with its command id',
        arguments: { note_id: 'n-1', text: 'hello' },
        expected: (ids) => [
          {
            sql: 'INSERT INTO notes (id, text, command_id) VALUES (?, ?, ?)',
            params: ['n-1', 'hello', ids.commandIds[0]],
          },
        ],
      },
    ]);
    expect(await errorOf(save!)).toBeUndefined();
    expect(transaction.calls()[0]?.params[2]).toBe('cmd_adaptercontract1_1');
  });

  it('an operation without an executor is a mistake in the test', () => {
    expect(() => adapterContract(messageSend, recordingTransport(), [])).toThrow(TestingKitError);
  });
});
