import { demoOperations, demoWorld } from '../../../src/demo/demo-world.js';
import { createDispatcher, type Dispatcher } from '../../../src/notify/dispatcher.js';
import { emailSender } from '../../../src/notify/email-sender.js';
import { emailRecipients, tenantApprovers } from '../../../src/notify/notifications.js';
import { notificationOutbox } from '../../../src/notify/outbox-writer.js';
import { PrincipalDirectory } from '../../../src/server/directory/principal-directory.js';
import { type OutboxRecord, outboxOf } from '../../../src/store/sql-outbox.js';
import { type Harness, harness } from '../../support/engine.js';
import { TEST_PASSWORD_COST } from '../../server/support/server-harness.js';

/** What {@link emailDispatch} wires besides its fixed operators. */
export interface EmailDispatchOptions {
  /** The SMTP server the email sender sends to. */
  readonly smtpUrl: string;
  /** Also writes a webhook delivery per event, which a stub sender marks delivered (for its payload). */
  readonly webhook?: boolean;
  /** More acme approvers (emails), besides ada (approver), root (admin) and vic (viewer). */
  readonly moreApprovers?: readonly string[];
}

/** An engine whose outbox an email dispatcher delivers, and a directory of operators to mail. */
export interface EmailDispatch extends Harness {
  readonly dispatcher: Dispatcher;
  /** Acme's outbox (the first 10). */
  deliveries(): Promise<OutboxRecord[]>;
}

/**
 * The demo engine with an email dispatcher (what `countersign serve --smtp` wires): acme has
 * ada (approver), root (admin), vic (viewer) and `moreApprovers`; globex has gus (approver).
 * Retried deliveries wait a minute; the mails link to https://approvals.example.test.
 */
export async function emailDispatch(options: EmailDispatchOptions): Promise<EmailDispatch> {
  const operations = demoOperations(demoWorld());
  const h = await harness({
    stepWriters: [
      notificationOutbox({ channels: options.webhook ? ['email', 'webhook'] : ['email'], operations }),
    ],
  });
  const { clock, engine, store } = h;
  const directory = new PrincipalDirectory(store, { passwordCost: TEST_PASSWORD_COST });
  await directory.migrate();
  await directory.ensureTenant('acme');
  await directory.ensureTenant('globex');
  const password = 'correct horse battery staple 42';
  await directory.addOperator({ tenant: 'acme', email: 'ada@acme.test', password, roles: ['approver'] });
  await directory.addOperator({ tenant: 'acme', email: 'root@acme.test', password, roles: ['admin'] });
  await directory.addOperator({ tenant: 'acme', email: 'vic@acme.test', password, roles: ['viewer'] });
  for (const email of options.moreApprovers ?? []) {
    await directory.addOperator({ tenant: 'acme', email, password, roles: ['approver'] });
  }
  await directory.addOperator({ tenant: 'globex', email: 'gus@globex.test', password, roles: ['approver'] });
  const dispatcher = createDispatcher({
    store,
    senders: {
      ...(options.webhook ? { webhook: async () => ({ kind: 'delivered' }) as const } : {}),
      email: emailSender(
        { smtpUrl: options.smtpUrl, from: 'Approvals <approvals@countersign.test>', timeoutMs: 2_000 },
        {
          publicUrl: 'https://approvals.example.test',
          // Who may still decide, as the engine says (what `countersign serve` wires).
          recipients: emailRecipients(
            tenantApprovers(directory, ['approver', 'admin']),
            async (actor, id) => {
              const proposal = await engine.proposals.get(actor.tenant, id);
              return proposal !== undefined && engine.proposals.mayDecide(actor, proposal).kind === 'allowed';
            },
          ),
          stillPending: async (tenant, id) =>
            (await store.read((r) => r.getProposal(tenant, id)))?.status === 'pending',
          now: () => clock.now(),
        },
      ),
    },
    clock,
    retry: { delaysMs: [60_000], thenEveryMs: 60_000, budgetMs: 3_600_000, jitter: 0 },
  });
  return {
    ...h,
    dispatcher,
    deliveries: () => store.transaction((tx) => outboxOf(tx, store.capabilities).list('acme', { limit: 10 })),
  };
}
