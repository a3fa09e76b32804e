import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { DecisionRight } from '../../../engine/decision-right.js';
import type { Proposal } from '../../../engine/proposal.js';
import type { ProposalTimeline } from '../../../engine/audit-timeline.js';
import type { RelatedProposals } from '../../../engine/related-proposals.js';
import type { ConsoleSession } from '../../directory/principal-directory.js';
import type { EditField } from '../edit-fields.js';
import { formatAge, formatInstant, formatSpan } from '../format-time.js';
import { layout } from '../layout.js';
import { findTextHazards, type TextHazard } from '../../../operation/text-hazards.js';
import { textWarning, userText, withoutInvisible } from '../render-text.js';
import { fieldLabel, previewTitle, renderFields } from '../render-value.js';
import { editChanges } from '../review/edit-changes.js';
import { type FieldDeclarations, reviewFields } from '../review/field-order.js';
import { outcomePanel } from './outcome-panel.js';
import { editChangesCard, relatedFacts, reviewedPreview, sameScopeWarning } from './review-parts.js';
import { statusBadge } from './status-badge.js';
import { timeline } from './timeline.js';

/** A banner above the proposal: the result of the last action, or why the page cannot be acted on. */
export interface Notice {
  readonly tone: 'ok' | 'warn' | 'bad' | 'info';
  readonly title: string;
  readonly body?: HtmlEscapedString | string;
  readonly reason?: string;
}

/** Everything the proposal page shows. */
export interface ProposalPageInput {
  readonly nonce: string;
  readonly session: ConsoleSession;
  readonly proposal: Proposal;
  readonly timeline: ProposalTimeline;
  readonly now: number;
  /** What the engine lets this operator do with it (`engine.mayDecide`), with the reason when not. */
  readonly rights: {
    readonly approve: DecisionRight;
    readonly decline: DecisionRight;
    readonly edit: DecisionRight;
    readonly reconcile: DecisionRight;
  };
  readonly editFields: readonly EditField[];
  readonly handback: string;
  readonly notices: readonly Notice[];
  /** False when the link's run id is not the proposal's: nothing can be approved from it. */
  readonly runMatches: boolean;
  /** The edit links, the re-proposal links and the other pending proposals with the same scope (`engine.related`). */
  readonly related: RelatedProposals;
  /** The registered operation's declarations (order, emphasis, redaction), when it is still registered. */
  readonly operation: FieldDeclarations | undefined;
}

function notice(n: Notice): HtmlEscapedString {
  return html`<div class="banner ${n.tone}" role="${n.tone === 'bad' || n.tone === 'warn' ? 'alert' : 'status'}"><strong>${n.title}</strong>${n.body ?? ''}${
    n.reason ? html` <span class="muted">Reason <code class="reason-code">${n.reason}</code></span>` : ''
  }</div>` as HtmlEscapedString;
}

/** "1 of 2 approvals" and who gave them, for a proposal whose policy needs more than one. */
function approvalsFact(p: Proposal): HtmlEscapedString | '' {
  const { required, roles, given } = p.approvals;
  if (required <= 1) return '';
  const who = given.map((g) => html`${userText(g.by)} <span class="muted">at ${formatInstant(g.at)}</span>`);
  return html`<dt>Approvals</dt><dd><strong data-testid="approvals">${given.length} of ${required}</strong>${
    roles.length > 0 ? html` <span class="muted">(role ${roles.join(' or ')})</span>` : ''
  }${who.length > 0 ? html`: ${who.map((w, i) => (i === 0 ? w : html`, ${w}`))}` : ''} <span class="muted">(the proposer and the editor never count)</span></dd>` as HtmlEscapedString;
}

function facts(input: ProposalPageInput): HtmlEscapedString {
  const { proposal: p, now } = input;
  const left = p.expiresAt.getTime() - now;
  return html`<section class="card" aria-labelledby="contract-h">
    <h2 id="contract-h">Contract</h2>
    <dl class="facts">
      <dt>Short hash</dt><dd><span class="hash" data-testid="short-hash">${p.short}</span></dd>
      <dt>Digest</dt><dd class="digest" data-testid="digest">${p.digest}</dd>
      <dt>Operation</dt><dd><span class="op">${p.operation}</span></dd>
      <dt>Versions</dt><dd>scope v${p.scopeVersion} · view v${p.viewVersion}</dd>
      <dt>Run id</dt><dd><code>${userText(p.runId)}</code></dd>
      <dt>Section</dt><dd>${p.section === null ? html`<span class="muted">none</span>` : html`<code>${userText(p.section)}</code>`}</dd>
      <dt>Resource</dt><dd><code>${userText(p.resource)}</code></dd>
      <dt>Proposal id</dt><dd><code>${p.id}</code></dd>
      <dt>Requested by</dt><dd>${userText(p.requestedBy)}</dd>${
        p.editedBy === null
          ? ''
          : html`<dt>Edited by</dt><dd>${userText(p.editedBy)} <span class="muted">(the editor does not approve their own edit)</span></dd>`
      }
${approvalsFact(p)}
      <dt>Created</dt><dd><time datetime="${p.createdAt.toISOString()}">${formatInstant(p.createdAt)}</time> <span class="muted">(${formatAge(p.createdAt, now)})</span></dd>
      <dt>Expires</dt><dd><time datetime="${p.expiresAt.toISOString()}">${formatInstant(p.expiresAt)}</time> ${
        p.status === 'pending'
          ? html`<span class="${left <= 0 ? 'gone' : left < 5 * 60_000 ? 'soon' : 'muted'}">(${left <= 0 ? 'expired' : `${formatSpan(left)} left`})</span>`
          : ''
      }</dd>
      ${relatedFacts(input.related)}
      ${p.decidedBy ? html`<dt>Decided by</dt><dd>${userText(p.decidedBy)}${p.decidedAt ? html` <span class="muted">at ${formatInstant(p.decidedAt)}</span>` : ''}</dd>` : ''}
      ${p.decisionNote ? html`<dt>Note</dt><dd>${userText(p.decisionNote)}</dd>` : ''}
    </dl>
  </section>` as HtmlEscapedString;
}

function editInput(field: EditField, value: unknown): HtmlEscapedString {
  const id = `field-${field.name}`;
  const name = `field.${field.name}`;
  const original = value === undefined || value === null ? '' : String(value);
  // A form field cannot show invisible characters as markers, so it never holds them: saving an
  // edit removes them, and the operator is told so (the new proposal gets its own review).
  const text = withoutInvisible(original);
  const stripped = text !== original;
  const control =
    field.input === 'textarea'
      ? // The newline after the tag keeps a leading newline of the value (HTML drops the first one).
        html`<textarea id="${id}" name="${name}">\n${text}</textarea>`
      : field.input === 'checkbox'
        ? html`<input id="${id}" name="${name}" type="checkbox"${value === true ? html` checked` : ''}>`
        : html`<input id="${id}" name="${name}" type="${field.input}"${field.input === 'number' ? html` step="any"` : ''} value="${text}">`;
  return html`<label for="${id}">${fieldLabel(field.name)}</label>${control}${
    stripped
      ? html`<p class="hint">The current value holds invisible or direction-changing characters; saving removes them.</p>`
      : ''
  }${field.description ? html`<p class="hint">${field.description}</p>` : ''}` as HtmlEscapedString;
}

/** What the approver must be told about the text under review: the preview's, and the resource the agent named. */
function hazardsOf(p: Proposal): TextHazard[] {
  // Worst first: hidden text a model can read, then look-alike words, then direction changes.
  const rank = (h: TextHazard) =>
    h.kind !== 'hidden' ? 1 : h.hidden === 'tag' ? 0 : h.hidden === 'bidi' ? 2 : 3;
  return [...findTextHazards(p.preview, '$'), ...findTextHazards(p.resource, 'resource')].sort(
    (a, b) => rank(a) - rank(b),
  );
}

function decisions(input: ProposalPageInput, hazards: readonly TextHazard[]): HtmlEscapedString {
  const { proposal: p, session } = input;
  const csrf = session.csrfToken;
  if (p.status !== 'pending') return html`` as HtmlEscapedString;
  if (p.expiresAt.getTime() <= input.now) {
    return html`<section class="card decide"><h2>Decision</h2><p class="muted">This proposal expired; it can no longer be approved.</p></section>` as HtmlEscapedString;
  }
  if (!input.runMatches) {
    return html`<section class="card decide"><h2>Decision</h2><p class="muted">Open this proposal from its own run's link, or from the inbox, to decide.</p></section>` as HtmlEscapedString;
  }
  const { approve, decline, edit } = input.rights;
  if (approve.kind === 'refused' && decline.kind === 'refused') {
    return html`<section class="card decide"><h2>Decision</h2><p class="muted" data-testid="decision-refused">You can review this proposal, not decide it: ${userText(approve.message)}. <span>Reason <code class="reason-code">${approve.reason}</code></span></p></section>` as HtmlEscapedString;
  }
  const request = (typeof p.request === 'object' && p.request !== null ? p.request : {}) as Record<
    string,
    unknown
  >;
  return html`<section class="card decide" aria-labelledby="decide-h">
    <h2 id="decide-h">Decision</h2>
    ${textWarning(hazards, 'What you are approving', 4)}
    ${
      approve.kind === 'refused'
        ? html`<p class="muted" data-testid="decision-refused">You cannot approve this proposal: ${userText(approve.message)}. <span>Reason <code class="reason-code">${approve.reason}</code></span></p>`
        : html`<form class="approve-form" method="post" action="/proposals/${p.id}/approve">
      <p>${
        p.approvals.required > 1
          ? `This proposal needs ${p.approvals.required} approvers (${p.approvals.given.length} of ${p.approvals.required} so far); the approval that completes it executes exactly this contract, once.`
          : 'Approving executes exactly this contract, once.'
      } Check that the short hash matches what you reviewed.</p>
      <input type="hidden" name="digest" value="${p.digest}">
      <input type="hidden" name="csrf" value="${csrf}">
      <button class="primary" type="submit">Approve <span class="hash">${p.short}</span></button>
    </form>`
    }
    ${
      decline.kind === 'allowed'
        ? html`<details class="action">
      <summary>Decline</summary>
      <form method="post" action="/proposals/${p.id}/decline">
        <input type="hidden" name="csrf" value="${csrf}">
        <label for="decline-reason">Reason <span class="muted">(optional; the agent reads it)</span></label>
        <textarea id="decline-reason" name="reason" maxlength="500"></textarea>
        <div class="form-actions"><button class="danger" type="submit">Decline proposal</button></div>
      </form>
    </details>`
        : ''
    }
    ${
      edit.kind === 'allowed' && input.editFields.length > 0
        ? html`<details class="action">
      <summary>Edit</summary>
      <form method="post" action="/proposals/${p.id}/edit">
        <input type="hidden" name="csrf" value="${csrf}">
        ${input.editFields.map((f) => editInput(f, request[f.name]))}
        <p class="hint">Saving creates a new proposal with a new hash; this one becomes superseded and approval is needed again.</p>
        <div class="form-actions"><button class="secondary" type="submit">Save as a new proposal</button></div>
      </form>
    </details>`
        : ''
    }
  </section>` as HtmlEscapedString;
}

/**
 * One proposal: the preview at full precision, the contract (short hash, digest, run id,
 * operation, versions), the decision forms (the approve form carries only the displayed digest and
 * the CSRF token), the outcome and the audit timeline.
 */
export function proposalPage(input: ProposalPageInput): HtmlEscapedString {
  const { proposal: p } = input;
  const preview = p.preview;
  const previewBody =
    typeof preview === 'object' && preview !== null && !Array.isArray(preview)
      ? reviewedPreview(reviewFields(preview as Record<string, unknown>, input.operation, ['title']))
      : renderFields({ value: preview });
  const { supersedes, supersededBy } = input.related;
  // The edit's changes, on the edit (from its predecessor) and on the superseded one (to its edit).
  const changes = supersedes
    ? editChangesCard(editChanges(supersedes.scope, p.scope, input.operation), supersedes, 'edit')
    : supersededBy
      ? editChangesCard(editChanges(p.scope, supersededBy.scope, input.operation), supersededBy, 'superseded')
      : '';
  const hazards = hazardsOf(p);
  const shownStatus = p.status === 'pending' && p.expiresAt.getTime() <= input.now ? 'expired' : p.status;
  const body = html`<main id="main">
  <div class="crumbs"><a href="/">Inbox</a> / <a href="/history">History</a> / <code>${p.id}</code></div>
  <div class="proposal-head">
    <div>
      <p class="kicker"><span class="op">${p.operation}</span> <span class="hash" aria-label="short hash">${p.short}</span></p>
      <h1>${userText(previewTitle(preview, p.operation))}</h1>
    </div>
    ${statusBadge(shownStatus)}
  </div>
  ${input.notices.map(notice)}
  ${sameScopeWarning(input.related)}
  <div class="grid">
    <div>
      ${outcomePanel({ proposal: p, handback: input.handback, csrf: input.session.csrfToken, mayReconcile: input.rights.reconcile.kind === 'allowed' })}
      ${changes}
      <section class="card" aria-labelledby="preview-h" data-testid="preview">
        <h2 id="preview-h">${p.status === 'pending' ? 'What you are approving' : 'What was reviewed'}</h2>
        ${textWarning(hazards, 'This preview')}
        ${previewBody}
      </section>
      <section class="card" aria-labelledby="timeline-h">
        <h2 id="timeline-h">Audit timeline</h2>
        ${timeline(input.timeline, p.scopeDigest)}
      </section>
    </div>
    <aside>
      ${decisions(input, hazards)}
      ${facts(input)}
    </aside>
  </div>
</main>` as HtmlEscapedString;
  return layout({
    title: `Proposal ${p.short}`,
    nonce: input.nonce,
    session: input.session,
    current: 'inbox',
    body,
  });
}
