/**
 * A child process of the notification kill test (`node --import tsx
 * test/notify/support/dispatch-worker.ts --store LOCATION --url URL --secret whsec_…`): opens the
 * store and runs a webhook dispatcher until it is killed. Prints `dispatching` once polling.
 * Never used by production code.
 */
import { parseArgs } from 'node:util';
import { createDispatcher } from '../../../src/notify/dispatcher.js';
import { webhookSender } from '../../../src/notify/webhook-sender.js';
import { openStore } from '../../../src/store/open-store.js';

const { values } = parseArgs({
  options: {
    store: { type: 'string' },
    url: { type: 'string' },
    secret: { type: 'string' },
    'lease-ms': { type: 'string', default: '1500' },
    'timeout-ms': { type: 'string', default: '5000' },
  },
});
const store = await openStore(String(values.store));
await store.migrate();
const dispatcher = createDispatcher({
  store,
  senders: {
    webhook: webhookSender(
      { url: String(values.url), secret: String(values.secret), timeoutMs: Number(values['timeout-ms']) },
      { publicUrl: 'https://approvals.example.test' },
    ),
  },
  leaseMs: Number(values['lease-ms']),
  pollMs: 50,
  retry: { delaysMs: [100], thenEveryMs: 100, budgetMs: 120_000, jitter: 0 },
});
dispatcher.start();
process.stdout.write(`dispatching ${process.pid}\n`);
process.once('SIGTERM', () => {
  void dispatcher.stop().then(() => store.close());
});
