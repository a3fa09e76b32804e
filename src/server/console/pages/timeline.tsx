import type { ProposalTimeline, RepeatedEvents } from '../../../engine/audit-timeline.js';
import { isSha256Hex } from '../../../canonical/digest.js';
import type { AuditLine } from '../../../engine/queries.js';
import { formatInstant } from '../format-time.js';
import { UserText } from '../render-text.js';
import { Fields } from '../render-value.js';

function describe(line: AuditLine): { label: string; tone: '' | 'ok' | 'bad' | 'warn' } {
  const outcome = typeof line.detail['outcome'] === 'string' ? line.detail['outcome'] : '';
  switch (line.step) {
    case 'proposed':
      return { label: line.detail['supersedes'] ? 'Proposed as an edit' : 'Proposed', tone: '' };
    case 'edited':
      return { label: 'Edited: superseded by a new proposal', tone: 'warn' };
    case 'approved':
      return { label: line.reason === 'approved_by_grant' ? 'Approved by a grant' : 'Approved', tone: 'ok' };
    case 'partially_approved':
      return {
        label: `Approved ${String(line.detail['given'] ?? '?')} of ${String(line.detail['required'] ?? '?')}: another approver must approve`,
        tone: 'ok',
      };
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

// A full digest in an event's detail reads as its short hash, the form operators compare by eye.
function shortenDigests(value: unknown): unknown {
  return isSha256Hex(value) ? `${value.slice(0, 12)}…` : value;
}

const DIGEST_KEYS = ['proposed', 'seen', 'approved', 'requested'] as const;

// A stored value that is not a digest (a pasted short hash, a forged form field) shows as what it
// is, marked, never as a hash an operator could match by eye.
function HashChip({ line, name }: { readonly line: AuditLine; readonly name: (typeof DIGEST_KEYS)[number] }) {
  const valid = isSha256Hex((line.digests as Record<string, unknown>)[name]);
  return (
    <span>
      {name}{' '}
      <code class={`hash small${valid ? '' : ' invalid'}`} title={valid ? undefined : 'not a SHA-256 digest'}>
        {line.short[name]}
      </code>
    </span>
  );
}

function Hashes({ line }: { readonly line: AuditLine }) {
  const keys = DIGEST_KEYS.filter((k) => line.short[k] !== undefined);
  if (keys.length === 0 && !line.commandId && !line.attemptId) return null;
  return (
    <div class="event-hashes">
      {keys.map((k) => (
        <HashChip line={line} name={k} />
      ))}
      {line.attemptId ? (
        <span>
          attempt <code>{line.attemptId}</code>
        </span>
      ) : (
        ''
      )}
      {line.commandId ? (
        <span>
          command <code>{line.commandId}</code>
        </span>
      ) : (
        ''
      )}
    </div>
  );
}

function At({ line }: { readonly line: AuditLine }) {
  return <time datetime={new Date(line.at).toISOString()}>{formatInstant(line.at)}</time>;
}

function Event({ line }: { readonly line: AuditLine }) {
  const { label, tone } = describe(line);
  const detail = Object.fromEntries(
    Object.entries(line.detail)
      .filter(([k]) => !HIDDEN_DETAIL.includes(k))
      .map(([k, v]) => [k, shortenDigests(v)]),
  );
  return (
    <li class={tone}>
      <div class="event-head">
        <span class="event-step">{label}</span>
        {line.reason ? <span class="reason">{line.reason}</span> : ''}
        <span class="event-meta">
          <At line={line} /> · <UserText text={line.actor} />
        </span>
      </div>
      <Hashes line={line} />
      {Object.keys(detail).length > 0 ? (
        <div class="event-detail">
          <Fields value={detail} />
        </div>
      ) : (
        ''
      )}
    </li>
  );
}

const COUNT = new Intl.NumberFormat('en-US');

// Refusals (or replays) anyone may send again and again: one line with the count, never a page each.
function Repeated({ entry }: { readonly entry: RepeatedEvents }) {
  const { label, tone } = describe(entry.first);
  return (
    <li class={`${tone} repeated`} data-testid="repeated-events">
      <div class="event-head">
        <span class="event-step">
          {label} {COUNT.format(entry.count)} times
        </span>
        {entry.reason ? <span class="reason">{entry.reason}</span> : ''}
        <span class="event-meta">
          by <UserText text={entry.actor} />
        </span>
      </div>
      <div class="event-hashes">
        <span>
          first <At line={entry.first} />
        </span>
        <span>
          last <At line={entry.last} />
        </span>
      </div>
      <Hashes line={entry.last} />
    </li>
  );
}

/**
 * The audit events of one proposal as a timeline: step, time, actor, reason and every short hash;
 * repeated refusals by one actor collapsed into one line, so every decision is on the first screen.
 */
export function Timeline({ timeline }: { readonly timeline: ProposalTimeline }) {
  if (timeline.entries.length === 0) return <p class="muted">No audit events.</p>;
  const collapsed = timeline.entries.length < timeline.eventCount;
  return (
    <>
      <ol class="timeline">
        {timeline.entries.map((entry) =>
          entry.kind === 'event' ? <Event line={entry.line} /> : <Repeated entry={entry} />,
        )}
      </ol>
      {collapsed ? (
        <p class="muted">
          {COUNT.format(timeline.eventCount)} audit events; repeated ones are collapsed. Every event:{' '}
          <code>countersign audit show</code> or the audit API.
        </p>
      ) : (
        ''
      )}
    </>
  );
}
