import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import { canonicalize } from '../../../canonical/canonicalize.js';
import type { Grant } from '../../../grants/grant.js';
import type { ConsoleSession } from '../../directory/principal-directory.js';
import { formatInstant } from '../format-time.js';
import { layout } from '../layout.js';
import { userText } from '../render-text.js';
import type { Notice } from './proposal-page.js';

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
  /** `yes` when the admin ticked "may stand in for a two-person approval". */
  readonly satisfiesQuorum: string;
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
  satisfiesQuorum: '',
};

function constraintsText(grant: Grant): string {
  return Object.entries(grant.constraints)
    .map(([field, c]) => `${field} ${canonicalize(c)}`)
    .join('; ');
}

function capText(grant: Grant): string {
  const parts = [];
  if (grant.cap.total !== null)
    parts.push(`${grant.usage.total} of ${grant.cap.total} ${grant.cap.field ?? ''}`.trim());
  if (grant.cap.uses !== null) parts.push(`${grant.usage.uses} of ${grant.cap.uses} uses`);
  return parts.length > 0 ? parts.join(', ') : `${grant.usage.uses} uses, no cap`;
}

/**
 * Grants of the tenant with their usage; admins also get the create form (every bound stated
 * explicitly: a grant is never made from a proposal's card) and a revoke button per live grant.
 */
export function grantsPage(input: {
  readonly nonce: string;
  readonly session: ConsoleSession;
  readonly grants: readonly Grant[];
  readonly operations: readonly string[];
  readonly notices?: readonly Notice[];
  readonly form?: GrantFormValues;
}): HtmlEscapedString {
  const isAdmin = input.session.actor.roles.includes('admin');
  const form = input.form ?? EMPTY;
  const notices = (input.notices ?? []).map(
    (n) =>
      html`<div class="banner ${n.tone}" role="${n.tone === 'bad' || n.tone === 'warn' ? 'alert' : 'status'}"><strong>${n.title}</strong>${n.body ?? ''}</div>`,
  );
  const rows = input.grants.map(
    (g) => html`<tr>
      <td><span class="hash small">${g.id}</span><div class="sub">${userText(g.subject)}</div></td>
      <td>${g.operations.map((o) => html`<span class="op">${o}</span> `)}<div class="sub">${userText(g.resource)}</div></td>
      <td>${userText(constraintsText(g))}</td>
      <td>${capText(g)}</td>
      <td class="nowrap"><time datetime="${g.expiresAt.toISOString()}">${formatInstant(g.expiresAt)}</time></td>
      <td><span class="badge ${g.state === 'live' ? 'succeeded' : 'expired'}">${g.state}</span></td>
      <td>${
        isAdmin && g.state !== 'revoked'
          ? html`<form method="post" action="/grants/${g.id}/revoke"><input type="hidden" name="csrf" value="${input.session.csrfToken}"><button class="danger" type="submit">Revoke</button></form>`
          : ''
      }</td>
    </tr>`,
  );
  const field = (name: keyof GrantFormValues, label: string, hint: string, type = 'text') =>
    html`<label for="grant-${name}">${label}</label><input id="grant-${name}" name="${name}" type="${type}" value="${form[name]}"><p class="sub">${hint}</p>`;
  const create = isAdmin
    ? html`<section class="card" aria-labelledby="new-grant">
    <h2 id="new-grant">New grant</h2>
    <p class="sub">A grant approves one agent's proposals without a click while they fit every bound below. State each bound; nothing is inferred from a proposal.</p>
    <form method="post" action="/grants" class="grant-form">
      <input type="hidden" name="csrf" value="${input.session.csrfToken}">
      ${field('subject', 'Agent', 'e.g. agent:acme-assistant')}
      ${field('operations', 'Operations', `comma-separated: ${input.operations.join(', ')}`)}
      ${field('resource', 'Resource', 'an exact resource, or a prefix ending in * such as order:*')}
      <label for="grant-constraints">Constraints (JSON by scope field)</label><textarea id="grant-constraints" name="constraints" rows="5">${form.constraints}</textarea><p class="sub">{ "field": { "equals" | "oneOf" | "min" | "max" | "subsetOf": … } }</p>
      ${field('capField', 'Cap field', 'the numeric scope field a total sums, e.g. amount_minor')}
      ${field('capTotal', 'Cap total', 'in the field’s units (minor units for money)', 'number')}
      ${field('capUses', 'Cap uses', 'most proposals it may approve', 'number')}
      ${field('expiresAt', 'Expires at (UTC)', 'e.g. 2026-11-29T18:00', 'datetime-local')}
      ${field('note', 'Note', 'why, for the audit')}
      <label class="check"><input type="checkbox" name="satisfiesQuorum" value="yes"${form.satisfiesQuorum === 'yes' ? ' checked' : ''}> May stand in for a two-person approval</label><p class="sub">Off by default: a proposal that needs two approvers waits for them even inside this grant.</p>
      <button class="primary" type="submit">Create grant</button>
    </form>
  </section>`
    : '';
  const body = html`<main id="main">
  <div class="page-head"><div><h1>Grants</h1><p>Bounded approvals of this tenant, with their usage.</p></div></div>
  ${notices}
  ${
    input.grants.length === 0
      ? html`<div class="empty"><strong>No grants</strong>Every proposal waits for a human.</div>`
      : html`<section class="table-scroll" aria-labelledby="grants-caption" tabindex="0"><table class="list">
    <caption id="grants-caption" class="sr-only">Grants</caption>
    <thead><tr><th scope="col">Grant · agent</th><th scope="col">Operations · resource</th><th scope="col">Constraints</th><th scope="col">Usage</th><th scope="col">Expires</th><th scope="col">State</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
    <tbody>${rows}</tbody>
  </table></section>`
  }
  ${create}
</main>` as HtmlEscapedString;
  return layout({ title: 'Grants', nonce: input.nonce, session: input.session, current: 'grants', body });
}
