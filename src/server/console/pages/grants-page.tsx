import type { Grant } from '../../../grants/grant.js';
import { ListHead, ListTable } from './list-table.js';
import type { ConsoleSession } from '../../directory/principal-directory.js';
import { formatInstant } from '../format-time.js';
import { Layout, type Page, renderPage } from '../layout.js';
import { grantModelText } from '../model-view.js';
import { UserText } from '../render-text.js';
import { type Notice, NoticeBanner } from './notice-banner.js';

/** What the create form had, to show it again with the problems named. */
export interface GrantFormValues {
  readonly subject: string;
  readonly operations: string;
  readonly resource: string;
  readonly constraints: string;
  readonly capField: string;
  readonly capTotal: string;
  readonly capUses: string;
  readonly expiresAt: string;
  readonly note: string;
}

/** Props of {@link GrantsPage}. */
export interface GrantsPageProps {
  readonly nonce: string;
  readonly session: ConsoleSession;
  readonly grants: readonly Grant[];
  readonly operations: readonly string[];
  readonly notices?: readonly Notice[];
  readonly form?: GrantFormValues;
}

const EMPTY: GrantFormValues = {
  subject: '',
  operations: '',
  resource: '',
  constraints: '{\n  "amount_minor": { "max": 10000 },\n  "currency": { "equals": "USD" }\n}',
  capField: '',
  capTotal: '',
  capUses: '',
  expiresAt: '',
  note: '',
};

function capText(grant: Grant): string {
  const parts = [];
  if (grant.cap.total !== null)
    parts.push(`${grant.usage.total} of ${grant.cap.total} ${grant.cap.field ?? ''}`.trim());
  if (grant.cap.uses !== null) parts.push(`${grant.usage.uses} of ${grant.cap.uses} uses`);
  return parts.length > 0 ? parts.join(', ') : `${grant.usage.uses} uses, no cap`;
}

function GrantRow(props: {
  readonly grant: Grant;
  readonly session: ConsoleSession;
  readonly isAdmin: boolean;
}) {
  const { grant: g } = props;
  const text = grantModelText(g);
  return (
    <tr>
      <td>
        <span class="hash small">{g.id}</span>
        <div class="sub">
          <UserText text={text.subject} />
        </div>
      </td>
      <td>
        {g.operations.map((o) => (
          <>
            <span class="op">{o}</span>{' '}
          </>
        ))}
        <div class="sub">
          <UserText text={text.resource} />
        </div>
      </td>
      <td>
        <UserText text={text.constraints} />
      </td>
      <td>{capText(g)}</td>
      <td class="nowrap">
        <time datetime={g.expiresAt.toISOString()}>{formatInstant(g.expiresAt)}</time>
      </td>
      <td>
        <span class={`badge ${g.state === 'live' ? 'succeeded' : 'expired'}`}>{g.state}</span>
      </td>
      <td>
        {props.isAdmin && g.state !== 'revoked' ? (
          <form method="post" action={`/grants/${g.id}/revoke`}>
            <input type="hidden" name="csrf" value={props.session.csrfToken} />
            <button class="danger" type="submit">
              Revoke
            </button>
          </form>
        ) : (
          ''
        )}
      </td>
    </tr>
  );
}

function Field(props: {
  readonly form: GrantFormValues;
  readonly name: keyof GrantFormValues;
  readonly label: string;
  readonly hint: string;
  readonly type?: 'text' | 'number' | 'datetime-local';
}) {
  return (
    <>
      <label for={`grant-${props.name}`}>{props.label}</label>
      <input
        id={`grant-${props.name}`}
        name={props.name}
        type={props.type ?? 'text'}
        value={props.form[props.name]}
      />
      <p class="sub">{props.hint}</p>
    </>
  );
}

// Every bound stated explicitly: a grant is never made from a proposal's card.
function CreateGrant(props: {
  readonly form: GrantFormValues;
  readonly operations: readonly string[];
  readonly csrf: string;
}) {
  const { form } = props;
  return (
    <section class="card" aria-labelledby="new-grant">
      <h2 id="new-grant">New grant</h2>
      <p class="sub">
        A grant approves one agent's proposals without a click while they fit every bound below. State each
        bound; nothing is inferred from a proposal.
      </p>
      <form method="post" action="/grants" class="grant-form">
        <input type="hidden" name="csrf" value={props.csrf} />
        <Field form={form} name="subject" label="Agent" hint="e.g. agent:acme-assistant" />
        <Field
          form={form}
          name="operations"
          label="Operations"
          hint={`comma-separated: ${props.operations.join(', ')}`}
        />
        <Field
          form={form}
          name="resource"
          label="Resource"
          hint="an exact resource, or a prefix ending in * such as order:*"
        />
        <label for="grant-constraints">Constraints (JSON by scope field)</label>
        <textarea id="grant-constraints" name="constraints" rows={5}>
          {form.constraints}
        </textarea>
        <p class="sub">{'{ "field": { "equals" | "oneOf" | "min" | "max" | "subsetOf": … } }'}</p>
        <Field
          form={form}
          name="capField"
          label="Cap field"
          hint="the numeric scope field a total sums, e.g. amount_minor"
        />
        <Field
          form={form}
          name="capTotal"
          label="Cap total"
          hint="in the field’s units (minor units for money)"
          type="number"
        />
        <Field
          form={form}
          name="capUses"
          label="Cap uses"
          hint="most proposals it may approve"
          type="number"
        />
        <Field
          form={form}
          name="expiresAt"
          label="Expires at (UTC)"
          hint="e.g. 2026-11-29T18:00"
          type="datetime-local"
        />
        <Field form={form} name="note" label="Note" hint="why, for the audit" />
        <p class="sub">
          A grant approves only what one approver may: a proposal that needs two approvers waits for them even
          inside this grant.
        </p>
        <button class="primary" type="submit">
          Create grant
        </button>
      </form>
    </section>
  );
}

/**
 * Grants of the tenant with their usage; admins also get the create form (every bound stated
 * explicitly: a grant is never made from a proposal's card) and a revoke button per live grant.
 */
export function GrantsPage(input: GrantsPageProps) {
  const isAdmin = input.session.actor.roles.includes('admin');
  return (
    <Layout title="Grants" nonce={input.nonce} session={input.session} current="grants">
      <main id="main">
        <div class="page-head">
          <div>
            <h1>Grants</h1>
            <p>Bounded approvals of this tenant, with their usage.</p>
          </div>
        </div>
        {(input.notices ?? []).map((n) => (
          <NoticeBanner notice={n} />
        ))}
        {input.grants.length === 0 ? (
          <div class="empty">
            <strong>No grants</strong>Every proposal waits for a human.
          </div>
        ) : (
          <ListTable id="grants" caption="Grants">
            <ListHead
              columns={['Grant · agent', 'Operations · resource', 'Constraints', 'Usage', 'Expires', 'State']}
              actions
            />
            <tbody>
              {input.grants.map((g) => (
                <GrantRow grant={g} session={input.session} isAdmin={isAdmin} />
              ))}
            </tbody>
          </ListTable>
        )}
        {isAdmin ? (
          <CreateGrant
            form={input.form ?? EMPTY}
            operations={input.operations}
            csrf={input.session.csrfToken}
          />
        ) : (
          ''
        )}
      </main>
    </Layout>
  );
}

/** The grants page as a document. */
export function grantsPage(input: GrantsPageProps): Page {
  return renderPage(<GrantsPage {...input} />);
}
