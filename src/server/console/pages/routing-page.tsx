import type { Group, Route } from '../../../engine/route-admin.js';
import type { ConsoleSession } from '../../directory/principal-directory.js';
import { Layout, type Page, renderPage } from '../layout.js';
import { UserText } from '../render-text.js';
import { ListHead, ListTable } from './list-table.js';
import { type Notice, NoticeBanner } from './notice-banner.js';

/** Props of {@link RoutingPage}. */
export interface RoutingPageProps {
  readonly nonce: string;
  readonly session: ConsoleSession;
  readonly routes: readonly Route[];
  readonly groups: readonly Group[];
  /** The registered operation kinds a route may name. */
  readonly operations: readonly string[];
  readonly notices?: readonly Notice[];
}

/** A threshold in minor units: "100,000 minor units (1,000.00 in a two-decimal currency)". */
function thresholdText(minor: number): string {
  const major = (minor / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  return `${minor.toLocaleString('en-US')} minor units (${major} in a two-decimal currency)`;
}

function RouteRule({ route }: { readonly route: Route }) {
  return (
    <>
      <code>{route.operation}</code>
      {route.resource !== null ? (
        <>
          {' '}
          on <UserText text={route.resource} />
        </>
      ) : (
        ''
      )}
      {route.amount !== null ? (
        <>
          {' '}
          where <code>{route.amount.field}</code> is above {thresholdText(route.amount.above)}
        </>
      ) : (
        ''
      )}
    </>
  );
}

function RouteRow({ route, csrf }: { readonly route: Route; readonly csrf: string }) {
  return (
    <tr>
      <td class="nowrap">{route.position}</td>
      <td>
        <UserText text={route.name} />
        <div class="sub">
          <span class="hash small">{route.id}</span>
        </div>
      </td>
      <td>
        <RouteRule route={route} />
      </td>
      <td>
        <UserText text={route.group} />
        {route.channel !== null ? (
          <div class="sub">
            <UserText text={route.channel} />
          </div>
        ) : (
          ''
        )}
      </td>
      <td>
        {route.escalation !== null ? (
          <>
            after {Math.round(route.escalation.afterMs / 60_000)} min to{' '}
            <UserText text={route.escalation.group} />
            {route.escalation.channel !== null ? (
              <div class="sub">
                <UserText text={route.escalation.channel} />
              </div>
            ) : (
              ''
            )}
          </>
        ) : (
          <span class="muted">never</span>
        )}
      </td>
      <td>
        <form method="post" action={`/routing/routes/${route.id}/delete`}>
          <input type="hidden" name="csrf" value={csrf} />
          <button class="danger" type="submit" aria-label={`Delete route ${route.name}`}>
            Delete
          </button>
        </form>
      </td>
    </tr>
  );
}

function GroupRow({ group, csrf }: { readonly group: Group; readonly csrf: string }) {
  const id = `members-${group.name}`;
  return (
    <tr>
      <td>
        <UserText text={group.name} />
      </td>
      <td>
        <form method="post" action="/routing/groups" aria-label={`Members of ${group.name}`}>
          <input type="hidden" name="csrf" value={csrf} />
          <input type="hidden" name="name" value={group.name} />
          <label for={id} class="sr-only">
            Members of {group.name}, one per line
          </label>
          <textarea id={id} name="members" rows={3}>
            {group.members.join('\n')}
          </textarea>
          <button type="submit">Save members</button>
        </form>
      </td>
      <td>
        <form method="post" action={`/routing/groups/${group.name}/delete`}>
          <input type="hidden" name="csrf" value={csrf} />
          <button class="danger" type="submit" aria-label={`Delete group ${group.name}`}>
            Delete
          </button>
        </form>
      </td>
    </tr>
  );
}

/** A field's id: `route-name` in the new route's form, `route-<id>-name` in a route's edit form. */
type FieldIds = (name: string) => string;

function Field(props: {
  readonly ids: FieldIds;
  readonly name: string;
  readonly label: string;
  readonly hint: string;
  readonly type?: 'text' | 'number';
  readonly value?: string | number | null | undefined;
}) {
  const id = props.ids(props.name);
  return (
    <>
      <label for={id}>{props.label}</label>
      <input id={id} name={props.name} type={props.type ?? 'text'} value={props.value ?? ''} />
      <p class="hint">{props.hint}</p>
    </>
  );
}

function Select(props: {
  readonly ids: FieldIds;
  readonly name: string;
  readonly label: string;
  readonly options: readonly string[];
  readonly selected?: string | null | undefined;
  readonly none?: string;
}) {
  const id = props.ids(props.name);
  return (
    <>
      <label for={id}>{props.label}</label>
      <select id={id} name={props.name}>
        {props.none !== undefined ? <option value="">{props.none}</option> : ''}
        {props.options.map((o) => (
          <option value={o} selected={o === props.selected}>
            {o}
          </option>
        ))}
      </select>
    </>
  );
}

/**
 * A route's form: empty, it creates a route (Create route); given `route`, its fields are filled in
 * and it replaces that route (Save route NAME), which keeps its id.
 */
function RouteForm({ page, route: r }: { readonly page: RoutingPageProps; readonly route?: Route }) {
  const ids: FieldIds = (name) => (r ? `route-${r.id}-${name}` : `route-${name}`);
  const groups = page.groups.map((g) => g.name);
  return (
    <form method="post" action={r ? `/routing/routes/${r.id}` : '/routing/routes'} class="routing-form">
      <input type="hidden" name="csrf" value={page.session.csrfToken} />
      <Field ids={ids} name="name" label="Name" hint="e.g. payments over 1,000.00" value={r?.name} />
      <Select
        ids={ids}
        name="operation"
        label="Operation"
        options={page.operations}
        selected={r?.operation}
      />
      <Field
        ids={ids}
        name="resource"
        label="Resource (optional)"
        hint="an exact resource, or a prefix ending in * such as invoice:*"
        value={r?.resource}
      />
      <Field
        ids={ids}
        name="amountField"
        label="Amount field (optional)"
        hint="a scope field in minor units, e.g. amount_minor"
        value={r?.amount?.field}
      />
      <Field
        ids={ids}
        name="above"
        label="Above (minor units)"
        hint="100000 is 1,000.00: only amounts above it"
        type="number"
        value={r?.amount?.above}
      />
      <Select ids={ids} name="group" label="Group" options={groups} selected={r?.group} />
      <Field
        ids={ids}
        name="channel"
        label="Channel (optional)"
        hint="where its notifications go, e.g. #finance-approvals"
        value={r?.channel}
      />
      <Field
        ids={ids}
        name="escalateAfter"
        label="Escalate after (minutes, optional)"
        hint="undecided this long: escalated"
        type="number"
        value={r?.escalation ? Math.round(r.escalation.afterMs / 60_000) : null}
      />
      <Select
        ids={ids}
        name="escalationGroup"
        label="Escalation group"
        options={groups}
        selected={r?.escalation?.group}
        none="no escalation"
      />
      <Field
        ids={ids}
        name="escalationChannel"
        label="Escalation channel (optional)"
        hint="e.g. #finance-leads"
        value={r?.escalation?.channel}
      />
      <Field
        ids={ids}
        name="position"
        label="Order (optional)"
        hint="routes are tried from the lowest order; empty: after the last route"
        type="number"
        value={r?.position}
      />
      <div class="form-actions">
        <button class="primary" type="submit">
          {r ? `Save route ${r.name}` : 'Create route'}
        </button>
      </div>
    </form>
  );
}

function NewRoute(props: RoutingPageProps) {
  return (
    <section class="card" aria-labelledby="new-route">
      <h2 id="new-route">New route</h2>
      {props.groups.length === 0 ? (
        <p class="sub">Create a group first: a route sends proposals to a group.</p>
      ) : (
        <RouteForm page={props} />
      )}
    </section>
  );
}

/** Each route's fields to change, folded: a change keeps its id, and is audited `updated`. */
function EditRoutes(props: RoutingPageProps) {
  return (
    <>
      {props.routes.map((r) => (
        <details class="card">
          <summary>Edit route {r.name}</summary>
          <RouteForm page={props} route={r} />
        </details>
      ))}
    </>
  );
}

function NewGroup({ csrf }: { readonly csrf: string }) {
  return (
    <section class="card" aria-labelledby="new-group">
      <h2 id="new-group">New group</h2>
      <form method="post" action="/routing/groups" class="routing-form">
        <input type="hidden" name="csrf" value={csrf} />
        <label for="group-name">Name</label>
        <input id="group-name" name="name" type="text" value="" />
        <p class="hint">lower-case letters, digits, - or _, e.g. finance</p>
        <label for="group-members">Members, one per line</label>
        <textarea id="group-members" name="members" rows={4}></textarea>
        <p class="hint">an operator's email (ana@acme.test), or a principal id (user:ana@acme.test)</p>
        <div class="form-actions">
          <button class="primary" type="submit">
            Save group
          </button>
        </div>
      </form>
    </section>
  );
}

/**
 * Routing for admins: the tenant's routes in the order they are tried (rule, group and channel,
 * escalation; Delete), a form for a new route, the groups with their members (Save members,
 * Delete) and a form for a new group. Every change is audited; pending proposals keep their route.
 */
export function RoutingPage(props: RoutingPageProps) {
  const csrf = props.session.csrfToken;
  return (
    <Layout title="Routing" nonce={props.nonce} session={props.session} current="routing">
      <main id="main">
        <div class="page-head">
          <div>
            <h1>Routing</h1>
            <p>
              A route sends new proposals of an operation (above an amount, or for a resource pattern) to a
              group: only its members decide them, see them in Needs you and are notified. Undecided past the
              escalation time, a proposal is escalated to the escalation group. Proposals no route matches go
              to every approver. Routes are tried in order; the first that matches wins. Every change is
              audited; pending proposals keep the route they were given.
            </p>
          </div>
        </div>
        {(props.notices ?? []).map((n) => (
          <NoticeBanner notice={n} />
        ))}
        <h2>Routes</h2>
        {props.routes.length === 0 ? (
          <p class="muted">No routes: every proposal goes to every approver.</p>
        ) : (
          <ListTable id="routes" caption="Routes">
            <ListHead columns={['Order', 'Route', 'Rule', 'Group and channel', 'Escalation']} actions />
            <tbody>
              {props.routes.map((r) => (
                <RouteRow route={r} csrf={csrf} />
              ))}
            </tbody>
          </ListTable>
        )}
        <EditRoutes {...props} />
        <NewRoute {...props} />
        <h2>Groups</h2>
        {props.groups.length === 0 ? (
          <p class="muted">No groups yet.</p>
        ) : (
          <ListTable id="groups" caption="Groups">
            <ListHead columns={['Group', 'Members']} actions />
            <tbody>
              {props.groups.map((g) => (
                <GroupRow group={g} csrf={csrf} />
              ))}
            </tbody>
          </ListTable>
        )}
        <NewGroup csrf={csrf} />
      </main>
    </Layout>
  );
}

/** The routing page as a document. */
export function routingPage(props: RoutingPageProps): Page {
  return renderPage(<RoutingPage {...props} />);
}
