import type { ProposalTimeline, RepeatedEvents } from '../../../engine/audit-timeline.js';
import { isSha256Hex } from '../../../canonical/digest.js';
import type { AuditLine } from '../../../engine/queries.js';
import { formatInstant } from '../format-time.js';
import { UserText } from '../render-text.js';
import { Fields } from '../render-value.js';
import { eventHashFacts } from '../review/event-hashes.js';
import { HashFacts } from './review-parts.js';

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
    case 'approval_withdrawn':
      return {
        label: `Approval withdrawn: ${String(line.detail['approver'] ?? '?')} may no longer decide (${String(line.detail['why'] ?? line.reason ?? '?')})`,
        tone: 'warn',
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
    case 'escalated':
      return {
        label: `Escalated to the group ${String(line.detail['to'] ?? '?')}: nobody decided it in time`,
        tone: 'warn',
      };
    case 'reminded':
      return { label: 'Approvers reminded: it expires soon', tone: '' };
    default:
      // A step added to the audit trail after this console was written still shows, by name.
      return { label: String(line.step).replaceAll('_', ' '), tone: '' };
  }
}

// `approvedScope` is shown compared with the requested scope (see `eventHashFacts`).
const HIDDEN_DETAIL = [
  'operation',
  'scopeDigest',
  'approvedScope',
  'outcome',
  'attempt',
  'scopeVersion',
  'viewVersion',
];

// A full digest in an event's detail reads as its short hash, the form operators compare by eye.
function shortenDigests(value: unknown): unknown {
  return isSha256Hex(value) ? `${value.slice(0, 12)}…` : value;
}

/** Props of the parts that show an event's digests. */
interface HashesProps {
  readonly line: AuditLine;
  /** The proposal's scope digest: what a requested scope is compared with when the event names none. */
  readonly approvedScope: string | undefined;
}

function Hashes({ line, approvedScope }: HashesProps) {
  const facts = eventHashFacts(line.digests, line.detail, approvedScope);
  if (facts.length === 0 && !line.commandId && !line.attemptId) return null;
  return (
    <div class="event-hashes">
      <HashFacts facts={facts} />
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

function Event({ line, approvedScope }: HashesProps) {
  const { label, tone } = describe(line);
  const detail = Object.fromEntries(
    Object.entries(line.detail)
      .filter(([k]) => !HIDDEN_DETAIL.includes(k))
      .map(([k, v]) => [k, shortenDigests(v)]),
  );
  return (
    <li class={tone} data-step={line.step}>
      <div class="event-head">
        <span class="event-step">{label}</span>
        {line.reason ? <span class="reason">{line.reason}</span> : ''}
        <span class="event-meta">
          <At line={line} /> · <UserText text={line.actor} />
        </span>
      </div>
      <Hashes line={line} approvedScope={approvedScope} />
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
function Repeated({
  entry,
  approvedScope,
}: {
  readonly entry: RepeatedEvents;
  readonly approvedScope: string | undefined;
}) {
  const { label, tone } = describe(entry.first);
  return (
    <li class={`${tone} repeated`} data-testid="repeated-events" data-step={entry.step}>
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
      <Hashes line={entry.last} approvedScope={approvedScope} />
    </li>
  );
}

/**
 * The audit events of one proposal as a timeline: step, time, actor, reason and every short hash,
 * like compared with like (a requested scope with `approvedScope`, the proposal's scope digest;
 * the digest an approver saw with the contract); repeated refusals by one actor collapsed into one
 * line, so every decision is on the first screen.
 */
export function Timeline({
  timeline,
  approvedScope,
}: {
  readonly timeline: ProposalTimeline;
  /** The proposal's scope digest (see {@link eventHashFacts}). */
  readonly approvedScope?: string;
}) {
  if (timeline.entries.length === 0) return <p class="muted">No audit events.</p>;
  const collapsed = timeline.entries.length < timeline.eventCount;
  return (
    <>
      <ol class="timeline">
        {timeline.entries.map((entry) =>
          entry.kind === 'event' ? (
            <Event line={entry.line} approvedScope={approvedScope} />
          ) : (
            <Repeated entry={entry} approvedScope={approvedScope} />
          ),
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
