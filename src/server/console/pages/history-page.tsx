import type { Proposal } from '../../../engine/proposal.js';
import { ListHead, ListTable } from './list-table.js';
import type { ConsoleSession } from '../../directory/principal-directory.js';
import { formatInstant } from '../format-time.js';
import { Layout, type Page, renderPage } from '../layout.js';
import { previewTitle } from '../model-view.js';
import { UserText } from '../render-text.js';
import { StatusBadge } from './status-badge.js';

/** Props of {@link HistoryPage}. */
export interface HistoryPageProps {
  readonly nonce: string;
  readonly session: ConsoleSession;
  readonly items: readonly Proposal[];
  readonly nextCursor?: string | undefined;
}

function HistoryRow({ proposal: p }: { readonly proposal: Proposal }) {
  return (
    <tr>
      <td class="summary">
        <a href={`/proposals/${p.id}`}>
          <UserText text={previewTitle(p.preview, p.operation)} />
        </a>
        <div class="sub">
          <span class="hash small">{p.short}</span>
        </div>
      </td>
      <td>
        <span class="op">{p.operation}</span>
      </td>
      <td>
        <StatusBadge status={p.status} />
      </td>
      <td>{p.decidedBy ? <UserText text={p.decidedBy} /> : <span class="none">—</span>}</td>
      <td class="nowrap">
        {p.decidedAt ? (
          <time datetime={p.decidedAt.toISOString()}>{formatInstant(p.decidedAt)}</time>
        ) : (
          <span class="none">—</span>
        )}
      </td>
    </tr>
  );
}

/** Decided proposals, newest first: status, who decided, when, and the short hash. */
export function HistoryPage(input: HistoryPageProps) {
  return (
    <Layout title="History" nonce={input.nonce} session={input.session} current="history">
      <main id="main">
        <div class="page-head">
          <div>
            <h1>History</h1>
            <p>Decided proposals, newest first.</p>
          </div>
        </div>
        {input.items.length === 0 ? (
          <div class="empty">
            <strong>No decisions yet</strong>Approved, declined, edited and expired proposals appear here.
          </div>
        ) : (
          <ListTable id="history" caption="Decided proposals">
            <ListHead columns={['Proposal', 'Operation', 'Status', 'Decided by', 'Decided at']} />
            <tbody>
              {input.items.map((p) => (
                <HistoryRow proposal={p} />
              ))}
            </tbody>
          </ListTable>
        )}
        {input.nextCursor ? (
          <p class="pager">
            <a href={`/history?cursor=${encodeURIComponent(input.nextCursor)}`}>Older →</a>
          </p>
        ) : (
          ''
        )}
      </main>
    </Layout>
  );
}

/** The history page as a document. */
export function historyPage(input: HistoryPageProps): Page {
  return renderPage(<HistoryPage {...input} />);
}
