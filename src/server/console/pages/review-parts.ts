import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { Proposal } from '../../../engine/proposal.js';
import type { RelatedProposals } from '../../../engine/related-proposals.js';
import { userText } from '../render-text.js';
import { fieldLabel, renderValue } from '../render-value.js';
import type { FieldChange } from '../review/edit-changes.js';
import type { HashFact, ShownHash } from '../review/event-hashes.js';
import type { ReviewField } from '../review/field-order.js';

type Html = HtmlEscapedString;

const IMPACT = html` <span class="impact">high impact</span>`;

/** The preview's fields in declared order, high-impact ones emphasised and labelled. */
export function reviewedPreview(fields: readonly ReviewField[]): Html {
  if (fields.length === 0) return html`<span class="none">no fields</span>` as Html;
  return html`<dl class="value review-fields">${fields.map(
    (f) =>
      html`<dt${f.highImpact ? html` class="high-impact"` : ''} data-field="${f.key}">${fieldLabel(f.key)}${
        f.highImpact ? IMPACT : ''
      }</dt><dd${f.highImpact ? html` class="high-impact"` : ''}>${renderValue(f.value)}</dd>`,
  )}</dl>` as Html;
}

function proposalLink(p: Proposal): Html {
  return html`<a href="/proposals/${p.id}"><code>${p.id}</code></a> <span class="hash small">${p.short}</span>` as Html;
}

/**
 * An edit's changes, old → new per field with both values in full (redacted as the operation
 * says). On the edit it links back to the proposal it supersedes; on the superseded one, forward.
 */
export function editChangesCard(
  changes: readonly FieldChange[],
  other: Proposal,
  side: 'edit' | 'superseded',
): Html {
  const heading = side === 'edit' ? 'Changed by this edit' : 'Changed by the edit that replaced it';
  const intro =
    side === 'edit'
      ? html`Edited from ${proposalLink(other)}: every scope field the edit changed, before → after.`
      : html`Edited into ${proposalLink(other)}: review and approve that one.`;
  const value = (present: boolean, v: unknown) =>
    present ? renderValue(v) : html`<span class="none">absent</span>`;
  return html`<section class="card" aria-labelledby="edit-changes-h" data-testid="edit-changes">
    <h2 id="edit-changes-h">${heading}</h2>
    <p class="muted">${intro}</p>
    ${
      changes.length === 0
        ? html`<p class="muted">The scope did not change.</p>`
        : html`<table class="changes">
      <thead><tr><th scope="col">Field</th><th scope="col">Before</th><th scope="col"><span class="sr-only">becomes</span></th><th scope="col">After</th></tr></thead>
      <tbody>${changes.map(
        (c) =>
          html`<tr data-field="${c.key}"${c.highImpact ? html` class="high-impact"` : ''}><th scope="row">${fieldLabel(c.key || 'value')}${
            c.highImpact ? IMPACT : ''
          }</th><td class="old">${value('from' in c, c.from)}</td><td aria-hidden="true">→</td><td class="new">${value('to' in c, c.to)}</td></tr>`,
      )}</tbody>
    </table>`
    }
  </section>` as Html;
}

/** Facts rows for the related proposals: supersedes / superseded by / replaces / replaced by. */
export function relatedFacts(related: RelatedProposals): Html {
  const row = (label: string, id: string, p: Proposal | undefined, note = '') =>
    p ? html`<dt>${label}</dt><dd data-testid="${id}">${proposalLink(p)}${note}</dd>` : '';
  return html`${row('Supersedes', 'supersedes', related.supersedes)}${row(
    'Superseded by',
    'superseded-by',
    related.supersededBy,
  )}${row('Replaces', 'replaces', related.replaces, html` <span class="muted">(its outcome was revision required)</span>` as Html)}${row(
    'Replaced by',
    'replaced-by',
    related.replacedBy,
    html` <span class="muted">(proposed again after revision required)</span>` as Html,
  )}` as Html;
}

/** The warning that other pending proposals have the same scope, with a link to each. */
export function sameScopeWarning(related: RelatedProposals): Html | '' {
  const n = related.sameScope.length;
  if (n === 0) return '';
  const count = related.sameScopeTruncated ? `${n} or more` : String(n);
  const title =
    n === 1 && !related.sameScopeTruncated
      ? '1 other pending proposal has the same scope'
      : `${count} other pending proposals have the same scope`;
  return html`<div class="banner warn" role="alert" data-testid="same-scope"><strong>${title}.</strong> Approving more than one does the same thing more than once.<ul class="same-scope">${related.sameScope.map(
    (p) => html`<li>${proposalLink(p)} <span class="muted">by ${userText(p.requestedBy)}</span></li>`,
  )}</ul></div>` as Html;
}

function hashCode(h: ShownHash): Html {
  return html`<code class="hash small${h.valid ? '' : ' invalid'}"${h.valid ? '' : html` title="not a SHA-256 digest"`}>${h.short}</code>` as Html;
}

/** One event's digests, like with like: a comparison with ✓ or ✗, or a digest on its own. */
export function hashFacts(facts: readonly HashFact[]): Html[] {
  return facts.map((f) =>
    f.kind === 'single'
      ? (html`<span>${f.hash.label} ${hashCode(f.hash)}</span>` as Html)
      : (html`<span class="compare ${f.equal ? 'same' : 'differs'}">${f.left.label} ${hashCode(f.left)} ${
          f.equal ? '=' : '≠'
        } ${f.right.label} ${hashCode(f.right)} <span aria-label="${f.equal ? 'equal' : 'different'}">${
          f.equal ? '✓' : '✗'
        }</span></span>` as Html),
  );
}
