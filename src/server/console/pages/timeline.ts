import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import { shortHash } from '../../../canonical/digest.js';
import type { AuditLine } from '../../../engine/queries.js';
import { formatInstant } from '../format-time.js';
import { userText } from '../render-text.js';
import { renderFields } from '../render-value.js';

function describe(line: AuditLine): { label: string; tone: '' | 'ok' | 'bad' | 'warn' } {
  const outcome = typeof line.detail['outcome'] === 'string' ? line.detail['outcome'] : '';
  switch (line.step) {
    case 'proposed':
      return { label: line.detail['supersedes'] ? 'Proposed as an edit' : 'Proposed', tone: '' };
    case 'edited':
      return { label: 'Edited: superseded by a new proposal', tone: 'warn' };
    case 'approved':
      return { label: line.reason === 'approved_by_grant' ? 'Approved by a grant' : 'Approved', tone: 'ok' };
    case 'declined':
      return { label: 'Declined', tone: 'bad' };
    case 'expired':
      return { label: 'Expired', tone: 'warn' };
    case 'claimed':
      return { label: `Claimed for execution (attempt ${String(line.detail['attempt'] ?? '?')})`, tone: '' };
    case 'revalidated':
      return line.reason === 'revision_required'
        ? { label: 'Revalidation failed', tone: 'warn' }
        : { label: 'Revalidated against current state', tone: 'ok' };
    case 'command':
      return { label: 'Command sent', tone: '' };
    case 'outcome':
      return {
        label: `Outcome: ${outcome.replaceAll('_', ' ')}`,
        tone: outcome === 'succeeded' ? 'ok' : outcome === 'terminal_failure' ? 'bad' : 'warn',
      };
    case 'replayed':
      return { label: 'Approval replayed: the stored outcome was returned', tone: '' };
    case 'denied':
      return { label: 'Refused', tone: 'bad' };
    case 'reconciled':
      return { label: 'Reconciled with the provider', tone: 'ok' };
    case 'shadow_mismatch':
      return { label: 'Shadow run differed from the proposal', tone: 'warn' };
    case 'granted':
      return { label: 'Grant issued', tone: '' };
    case 'revoked':
      return { label: 'Grant revoked', tone: 'warn' };
    default:
      // A step added to the audit trail after this console was written still shows, by name.
      return { label: String(line.step).replaceAll('_', ' '), tone: '' };
  }
}

const HIDDEN_DETAIL = ['operation', 'scopeDigest', 'outcome', 'attempt', 'scopeVersion', 'viewVersion'];
const FULL_DIGEST = /^[0-9a-f]{64}$/;

// A full digest in an event's detail reads as its short hash, the form operators compare by eye.
function shortenDigests(value: unknown): unknown {
  return typeof value === 'string' && FULL_DIGEST.test(value) ? `${shortHash(value)}…` : value;
}

/** The audit events of one proposal as a timeline: step, time, actor, reason and every short hash. */
export function timeline(lines: readonly AuditLine[]): HtmlEscapedString {
  if (lines.length === 0) return html`<p class="muted">No audit events.</p>` as HtmlEscapedString;
  const items = lines.map((line) => {
    const { label, tone } = describe(line);
    const hashes = (['proposed', 'seen', 'approved', 'requested'] as const).filter((k) => line.short[k]);
    const detail = Object.fromEntries(
      Object.entries(line.detail)
        .filter(([k]) => !HIDDEN_DETAIL.includes(k))
        .map(([k, v]) => [k, shortenDigests(v)]),
    );
    return html`<li class="${tone}">
      <div class="event-head">
        <span class="event-step">${label}</span>
        ${line.reason ? html`<span class="reason">${line.reason}</span>` : ''}
        <span class="event-meta"><time datetime="${new Date(line.at).toISOString()}">${formatInstant(line.at)}</time> · ${userText(line.actor)}</span>
      </div>
      ${
        hashes.length > 0 || line.commandId || line.attemptId
          ? html`<div class="event-hashes">${hashes.map((k) => html`<span>${k} <code class="hash small">${line.short[k]}</code></span>`)}${
              line.attemptId ? html`<span>attempt <code>${line.attemptId}</code></span>` : ''
            }${line.commandId ? html`<span>command <code>${line.commandId}</code></span>` : ''}</div>`
          : ''
      }
      ${Object.keys(detail).length > 0 ? html`<div class="event-detail">${renderFields(detail)}</div>` : ''}
    </li>`;
  });
  return html`<ol class="timeline">${items}</ol>` as HtmlEscapedString;
}
