import type { DeliveryView } from '../../../notify/deliveries.js';
import { ListHead, ListTable } from './list-table.js';
import type { ConsoleSession } from '../../directory/principal-directory.js';
import { formatInstant } from '../format-time.js';
import { Layout, type Page, renderPage } from '../layout.js';
import { deliveryLastError } from '../model-view.js';
import { UserText } from '../render-text.js';

/** Props of {@link DeliveriesPage}. */
export interface DeliveriesPageProps {
  readonly nonce: string;
  readonly session: ConsoleSession;
  /** Undefined when this server sends no notifications. */
  readonly deliveries: readonly DeliveryView[] | undefined;
}

// The proposal badges' colours: delivered reads like succeeded, dead like a terminal failure.
const BADGE: Readonly<Record<DeliveryView['status'], string>> = {
  pending: 'pending',
  delivered: 'succeeded',
  skipped: 'expired',
  dead: 'terminal_failure',
};

function When({ iso }: { readonly iso: string | null }) {
  return iso ? <time datetime={iso}>{formatInstant(Date.parse(iso))}</time> : '—';
}

function DeliveryRow({ delivery: d, csrf }: { readonly delivery: DeliveryView; readonly csrf: string }) {
  const lastError = deliveryLastError(d);
  return (
    <tr>
      <td>
        <span class="op">{d.channel}</span>
        <div class="sub">{d.type}</div>
      </td>
      <td>
        <a href={`/proposals/${encodeURIComponent(d.proposalId)}`}>{d.proposalId}</a>
        <div class="sub">
          <span class="hash small">{d.eventId}</span>
        </div>
      </td>
      <td>
        <span class={`badge ${BADGE[d.status]}`}>{d.status}</span>
      </td>
      <td>{d.attempts}</td>
      <td>{lastError ? <UserText text={lastError} /> : '—'}</td>
      <td class="nowrap">
        <When iso={d.lastAttemptAt} />
      </td>
      <td class="nowrap">
        <When iso={d.nextAttemptAt} />
      </td>
      <td>
        {d.status === 'pending' ? (
          ''
        ) : (
          <form method="post" action={`/deliveries/${d.id}/redeliver`}>
            <input type="hidden" name="csrf" value={csrf} />
            <button type="submit" aria-label={`Redeliver ${d.type} of ${d.proposalId} by ${d.channel}`}>
              Redeliver
            </button>
          </form>
        )}
      </td>
    </tr>
  );
}

/**
 * The tenant's notification deliveries for admins: channel, event, status, attempts, the last
 * error and when it is tried next, with Redeliver on every finished one. Every value is escaped;
 * the last error, which quotes the receiver, is marked as well.
 */
export function DeliveriesPage(input: DeliveriesPageProps) {
  const { deliveries } = input;
  return (
    <Layout title="Deliveries" nonce={input.nonce} session={input.session} current="deliveries">
      <main id="main">
        <div class="page-head">
          <div>
            <h1>Deliveries</h1>
            <p>Webhooks and approval emails of this tenant, newest first.</p>
          </div>
        </div>
        {deliveries === undefined ? (
          <div class="empty">
            <strong>Notifications are off</strong>This server sends no webhooks or emails: see{' '}
            <code>--webhook</code> and <code>--smtp</code>.
          </div>
        ) : deliveries.length === 0 ? (
          <div class="empty">
            <strong>No deliveries yet</strong>Each proposal's events appear here.
          </div>
        ) : (
          <ListTable id="deliveries" caption="Deliveries">
            <ListHead
              columns={[
                'Channel · event',
                'Proposal · event id',
                'Status',
                'Attempts',
                'Last error',
                'Last attempt',
                'Next attempt',
              ]}
              actions
            />
            <tbody>
              {deliveries.map((d) => (
                <DeliveryRow delivery={d} csrf={input.session.csrfToken} />
              ))}
            </tbody>
          </ListTable>
        )}
      </main>
    </Layout>
  );
}

/** The deliveries page as a document. */
export function deliveriesPage(input: DeliveriesPageProps): Page {
  return renderPage(<DeliveriesPage {...input} />);
}
