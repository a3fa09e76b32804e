import type { SlackUserLink } from '../../../store/sql-slack.js';
import type { ConsoleSession } from '../../directory/principal-directory.js';
import { formatInstant } from '../format-time.js';
import { Layout, type Page, renderPage } from '../layout.js';
import { UserText } from '../render-text.js';
import { ListHead, ListTable } from './list-table.js';
import { type Notice, NoticeBanner } from './notice-banner.js';

/** Props of {@link SlackPage}. */
export interface SlackPageProps {
  readonly nonce: string;
  readonly session: ConsoleSession;
  readonly links: readonly SlackUserLink[];
  readonly notices?: readonly Notice[];
}

function LinkRow({ link, csrf }: { readonly link: SlackUserLink; readonly csrf: string }) {
  return (
    <tr>
      <td>
        <code>
          <UserText text={link.slackUser} />
        </code>
      </td>
      <td>
        <UserText text={link.operatorEmail} />
      </td>
      <td>
        <UserText text={link.linkedBy} />
      </td>
      <td class="nowrap">
        <time datetime={new Date(link.linkedAt).toISOString()}>{formatInstant(link.linkedAt)}</time>
      </td>
      <td>
        <form method="post" action={`/slack/users/${encodeURIComponent(link.slackUser)}/delete`}>
          <input type="hidden" name="csrf" value={csrf} />
          <button class="danger" type="submit" aria-label={`Remove the link of ${link.slackUser}`}>
            Remove
          </button>
        </form>
      </td>
    </tr>
  );
}

function NewLink({ csrf }: { readonly csrf: string }) {
  return (
    <section class="card" aria-labelledby="new-link">
      <h2 id="new-link">Link a Slack user</h2>
      <form method="post" action="/slack/users" class="routing-form">
        <input type="hidden" name="csrf" value={csrf} />
        <label for="link-slack-user">Slack user id</label>
        <input id="link-slack-user" name="slackUser" type="text" value="" autocomplete="off" required />
        <p class="hint">like U012ABCDEF: in Slack, the member's profile, then ⋮ and Copy member ID</p>
        <label for="link-email">Operator email</label>
        <input id="link-email" name="email" type="text" value="" autocomplete="off" required />
        <p class="hint">an operator of this tenant; linking a Slack user again replaces their link</p>
        <div class="form-actions">
          <button class="primary" type="submit">
            Link
          </button>
        </div>
      </form>
    </section>
  );
}

/**
 * Slack for admins: the tenant's Slack users linked to operators (Slack user id, operator, who
 * linked them and when; Remove) and a form to link one. A click on a card acts as the linked
 * operator, else as the operator whose email Slack verified. Every change is audited.
 */
export function SlackPage(props: SlackPageProps) {
  const csrf = props.session.csrfToken;
  return (
    <Layout title="Slack" nonce={props.nonce} session={props.session} current="slack">
      <main id="main">
        <div class="page-head">
          <div>
            <h1>Slack</h1>
            <p>
              A click on a Slack approval card acts as an operator of this tenant: the one an admin linked the
              Slack user to here, else the active operator whose email Slack verified. A Slack user with
              neither is refused. Every change of a link is audited.
            </p>
          </div>
        </div>
        {(props.notices ?? []).map((n) => (
          <NoticeBanner notice={n} />
        ))}
        <h2>Linked Slack users</h2>
        {props.links.length === 0 ? (
          <p class="muted">No links: Slack users act as the operator whose email Slack verified.</p>
        ) : (
          <ListTable id="slack-links" caption="Linked Slack users">
            <ListHead columns={['Slack user', 'Operator', 'Linked by', 'Linked']} actions />
            <tbody>
              {props.links.map((link) => (
                <LinkRow link={link} csrf={csrf} />
              ))}
            </tbody>
          </ListTable>
        )}
        <NewLink csrf={csrf} />
      </main>
    </Layout>
  );
}

/** The Slack page as a document. */
export function slackPage(props: SlackPageProps): Page {
  return renderPage(<SlackPage {...props} />);
}
