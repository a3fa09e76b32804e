import type { OperatorAccount } from '../../directory/operator-accounts.js';
import type { ConsoleSession } from '../../directory/principal-directory.js';
import { formatInstant } from '../format-time.js';
import { Layout, type Page, renderPage } from '../layout.js';
import { UserText } from '../render-text.js';
import { ListHead, ListTable } from './list-table.js';
import { type Notice, NoticeBanner } from './notice-banner.js';

/** Props of {@link OperatorsPage}. */
export interface OperatorsPageProps {
  readonly nonce: string;
  readonly session: ConsoleSession;
  readonly operators: readonly OperatorAccount[];
  /** The roles an admin may give (the console's roles and the engine's approver roles). */
  readonly roles: readonly string[];
  readonly notices?: readonly Notice[];
}

function OperatorRow(props: {
  readonly operator: OperatorAccount;
  readonly roles: readonly string[];
  readonly session: ConsoleSession;
}) {
  const { operator: o, session } = props;
  const self = session.actor.id === `user:${o.email}`;
  // Roles the operator holds that the console does not offer still show, so saving keeps them.
  const offered = [...new Set([...props.roles, ...o.roles])];
  return (
    <tr>
      <td>
        <UserText text={o.email} />
        {self ? <span class="muted"> (you)</span> : ''}
        <div class="sub">
          <span class="hash small">{o.id}</span> · {o.sso ? 'single sign-on' : 'password'}
        </div>
      </td>
      <td>
        <form method="post" action={`/operators/${o.id}/roles`} aria-label={`Roles of ${o.email}`}>
          <input type="hidden" name="csrf" value={session.csrfToken} />
          {offered.map((role) => (
            <label class="check">
              <input type="checkbox" name={`role.${role}`} value="yes" checked={o.roles.includes(role)} />{' '}
              {role}{' '}
            </label>
          ))}
          <button type="submit">Save roles</button>
        </form>
        {o.roles.length === 0 ? <div class="sub">No role: no access.</div> : ''}
        {o.sso ? <div class="sub">The identity provider sets these again at each sign-in.</div> : ''}
      </td>
      <td>
        <span class={`badge ${o.active ? 'succeeded' : 'expired'}`}>{o.active ? 'active' : 'disabled'}</span>
        {o.disabledAt !== null ? (
          <div class="sub">
            since <time datetime={new Date(o.disabledAt).toISOString()}>{formatInstant(o.disabledAt)}</time>
          </div>
        ) : (
          ''
        )}
      </td>
      <td class="nowrap">
        <time datetime={new Date(o.createdAt).toISOString()}>{formatInstant(o.createdAt)}</time>
      </td>
      <td>
        <form method="post" action={`/operators/${o.id}/active`}>
          <input type="hidden" name="csrf" value={session.csrfToken} />
          <input type="hidden" name="active" value={o.active ? 'no' : 'yes'} />
          <button
            class={o.active ? 'danger' : ''}
            type="submit"
            aria-label={`${o.active ? 'Disable' : 'Enable'} ${o.email}`}
          >
            {o.active ? 'Disable' : 'Enable'}
          </button>
        </form>
      </td>
    </tr>
  );
}

/**
 * The tenant's operators for admins: email, roles (checkboxes and Save), active or disabled
 * (Disable / Enable), created, and whether they sign in through the identity provider. A change
 * holds from the operator's next request; the tenant always keeps an active admin.
 */
export function OperatorsPage(input: OperatorsPageProps) {
  return (
    <Layout title="Operators" nonce={input.nonce} session={input.session} current="operators">
      <main id="main">
        <div class="page-head">
          <div>
            <h1>Operators</h1>
            <p>
              Who may use this tenant's console and API. Disabling or demoting takes effect on the operator's
              next request, sessions and tokens alike; every change is audited.
            </p>
          </div>
        </div>
        {(input.notices ?? []).map((n) => (
          <NoticeBanner notice={n} />
        ))}
        <ListTable id="operators" caption="Operators">
          <ListHead columns={['Operator', 'Roles', 'State', 'Created']} actions />
          <tbody>
            {input.operators.map((o) => (
              <OperatorRow operator={o} roles={input.roles} session={input.session} />
            ))}
          </tbody>
        </ListTable>
      </main>
    </Layout>
  );
}

/** The operators page as a document. */
export function operatorsPage(input: OperatorsPageProps): Page {
  return renderPage(<OperatorsPage {...input} />);
}
