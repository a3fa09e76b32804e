import type { Child } from 'hono/jsx';
import type { DecisionRight } from '../../../engine/decision-right.js';
import type { Proposal } from '../../../engine/proposal.js';
import type { ProposalTimeline } from '../../../engine/audit-timeline.js';
import type { RelatedProposals } from '../../../engine/related-proposals.js';
import type { ConsoleSession } from '../../directory/principal-directory.js';
import type { EditField } from '../edit-fields.js';
import { formatAge, formatInstant, formatSpan } from '../format-time.js';
import { Layout, type Page, renderPage } from '../layout.js';
import { findTextHazards, type TextHazard } from '../../../operation/text-hazards.js';
import type { ModelText } from '../model-text.js';
import { proposalModelText } from '../model-view.js';
import { TextWarning, UserText, withoutInvisible } from '../render-text.js';
import { Fields, fieldLabel } from '../render-value.js';
import { editChanges } from '../review/edit-changes.js';
import { type FieldDeclarations, reviewFields } from '../review/field-order.js';
import { OutcomePanel } from './outcome-panel.js';
import { EditChanges, RelatedFacts, ReviewedPreview, SameScopeWarning } from './review-parts.js';
import { StatusBadge } from './status-badge.js';
import { Timeline } from './timeline.js';
import { type Notice, NoticeBanner } from './notice-banner.js';

/** Everything the proposal page shows. */
export interface ProposalPageInput {
  readonly nonce: string;
  readonly session: ConsoleSession;
  readonly proposal: Proposal;
  readonly timeline: ProposalTimeline;
  readonly now: number;
  /** What the engine lets this operator do with it (`engine.proposals.mayDecide`), with the reason when not. */
  readonly rights: {
    readonly approve: DecisionRight;
    readonly decline: DecisionRight;
    readonly edit: DecisionRight;
    readonly reconcile: DecisionRight;
  };
  readonly editFields: readonly EditField[];
  /** What the agent was told (`handbackText`), made model text by the route. */
  readonly handback: ModelText;
  readonly notices: readonly Notice[];
  /** False when the link's run id is not the proposal's: nothing can be approved from it. */
  readonly runMatches: boolean;
  /** The edit links, the re-proposal links and the other pending proposals with the same scope (`engine.proposals.related`). */
  readonly related: RelatedProposals;
  /** The registered operation's declarations (order, emphasis, redaction), when it is still registered. */
  readonly operation: FieldDeclarations | undefined;
}

/** "1 of 2 approvals" and who gave them, for a proposal whose policy needs more than one. */
function ApprovalsFact({ proposal: p }: { readonly proposal: Proposal }) {
  const { required, roles, given } = p.approvals;
  if (required <= 1) return null;
  return (
    <>
      <dt>Approvals</dt>
      <dd>
        <strong data-testid="approvals">
          {given.length} of {required}
        </strong>
        {roles.length > 0 ? (
          <>
            {' '}
            <span class="muted">(role {roles.join(' or ')})</span>
          </>
        ) : (
          ''
        )}
        {given.length > 0 ? (
          <>
            :{' '}
            {given.map((g, i) => (
              <>
                {i === 0 ? '' : ', '}
                <UserText text={g.by} /> <span class="muted">at {formatInstant(g.at)}</span>
              </>
            ))}
          </>
        ) : (
          ''
        )}{' '}
        <span class="muted">(the proposer and the editor never count)</span>
      </dd>
    </>
  );
}

/** The route a proposal was given: its group (the only one that decides it), channel and escalation. */
function RouteFact({ proposal: p }: { readonly proposal: Proposal }) {
  const route = p.route;
  if (route === null) return null;
  const escalation = route.escalation;
  return (
    <>
      <dt>Route</dt>
      <dd data-testid="route">
        group <UserText text={route.group} />
        {route.channel !== null ? (
          <>
            {' '}
            · <UserText text={route.channel} />
          </>
        ) : (
          ''
        )}{' '}
        <span class="muted">
          (route <UserText text={route.name} />; only its members decide)
        </span>
        {escalation !== null ? (
          <div class="sub">
            {route.escalatedAt !== null ? 'escalated' : 'escalates'} to <UserText text={escalation.group} />{' '}
            {route.escalatedAt !== null
              ? `at ${formatInstant(route.escalatedAt)}`
              : `at ${formatInstant(escalation.at)}`}
          </div>
        ) : (
          ''
        )}
      </dd>
    </>
  );
}

function Facts({ input }: { readonly input: ProposalPageInput }) {
  const { proposal: p, now } = input;
  const model = proposalModelText(p);
  const left = p.expiresAt.getTime() - now;
  return (
    <section class="card" aria-labelledby="contract-h">
      <h2 id="contract-h">Contract</h2>
      <dl class="facts">
        <dt>Short hash</dt>
        <dd>
          <span class="hash" data-testid="short-hash">
            {p.short}
          </span>
        </dd>
        <dt>Digest</dt>
        <dd class="digest" data-testid="digest">
          {p.digest}
        </dd>
        <dt>Operation</dt>
        <dd>
          <span class="op">{p.operation}</span>
        </dd>
        <dt>Versions</dt>
        <dd>
          scope v{p.scopeVersion} · view v{p.viewVersion}
        </dd>
        <dt>Run id</dt>
        <dd>
          <code>
            <UserText text={model.runId} />
          </code>
        </dd>
        <dt>Section</dt>
        <dd>
          {model.section === null ? (
            <span class="muted">none</span>
          ) : (
            <code>
              <UserText text={model.section} />
            </code>
          )}
        </dd>
        <dt>Resource</dt>
        <dd>
          <code>
            <UserText text={model.resource} />
          </code>
        </dd>
        <dt>Proposal id</dt>
        <dd>
          <code>{p.id}</code>
        </dd>
        <dt>Requested by</dt>
        <dd>
          <UserText text={p.requestedBy} />
        </dd>
        {p.editedBy === null ? (
          ''
        ) : (
          <>
            <dt>Edited by</dt>
            <dd>
              <UserText text={p.editedBy} />{' '}
              <span class="muted">(the editor does not approve their own edit)</span>
            </dd>
          </>
        )}
        <ApprovalsFact proposal={p} />
        <RouteFact proposal={p} />
        <dt>Created</dt>
        <dd>
          <time datetime={p.createdAt.toISOString()}>{formatInstant(p.createdAt)}</time>{' '}
          <span class="muted">({formatAge(p.createdAt, now)})</span>
        </dd>
        <dt>Expires</dt>
        <dd>
          <time datetime={p.expiresAt.toISOString()}>{formatInstant(p.expiresAt)}</time>{' '}
          {p.status === 'pending' ? (
            <span class={left <= 0 ? 'gone' : left < 5 * 60_000 ? 'soon' : 'muted'}>
              ({left <= 0 ? 'expired' : `${formatSpan(left)} left`})
            </span>
          ) : (
            ''
          )}
        </dd>
        <RelatedFacts related={input.related} />
        {p.decidedBy ? (
          <>
            <dt>Decided by</dt>
            <dd>
              <UserText text={p.decidedBy} />
              {p.decidedAt ? (
                <>
                  {' '}
                  <span class="muted">at {formatInstant(p.decidedAt)}</span>
                </>
              ) : (
                ''
              )}
            </dd>
          </>
        ) : (
          ''
        )}
        {p.decisionNote ? (
          <>
            <dt>Note</dt>
            <dd>
              <UserText text={p.decisionNote} />
            </dd>
          </>
        ) : (
          ''
        )}
      </dl>
    </section>
  );
}

function EditInput({ field, value }: { readonly field: EditField; readonly value: unknown }) {
  const id = `field-${field.name}`;
  const name = `field.${field.name}`;
  const original = value === undefined || value === null ? '' : String(value);
  // A form field cannot show invisible characters as markers, so it never holds them: saving an
  // edit removes them, and the operator is told so (the new proposal gets its own review).
  const text = withoutInvisible(original);
  const stripped = text !== original;
  return (
    <>
      <label for={id}>{fieldLabel(field.name)}</label>
      {field.input === 'textarea' ? (
        // The newline after the tag keeps a leading newline of the value (HTML drops the first one).
        <textarea id={id} name={name}>
          {'\n'}
          {text}
        </textarea>
      ) : field.input === 'checkbox' ? (
        <input id={id} name={name} type="checkbox" checked={value === true} />
      ) : (
        <input
          id={id}
          name={name}
          type={field.input}
          step={field.input === 'number' ? 'any' : undefined}
          value={text}
        />
      )}
      {stripped ? (
        <p class="hint">
          The current value holds invisible or direction-changing characters; saving removes them.
        </p>
      ) : (
        ''
      )}
      {field.description ? <p class="hint">{field.description}</p> : ''}
    </>
  );
}

/** What the approver must be told about the text under review: the preview's, and the resource the agent named. */
function hazardsOf(p: Proposal): TextHazard[] {
  // Worst first: hidden text a model can read and text pushed out of view, then look-alike
  // words, then direction changes, then the rest.
  const rank = (h: TextHazard): number => {
    if (h.kind === 'whitespace_run') return 0;
    if (h.kind === 'stacked_marks') return 3;
    if (h.kind !== 'hidden') return 1;
    return h.hidden === 'tag' ? 0 : h.hidden === 'bidi' ? 2 : 3;
  };
  return [...findTextHazards(p.preview, '$'), ...findTextHazards(p.resource, 'resource')].sort(
    (a, b) => rank(a) - rank(b),
  );
}

function Refusal({
  right,
  children,
}: {
  readonly right: DecisionRight & { kind: 'refused' };
  readonly children: Child;
}) {
  return (
    <p class="muted" data-testid="decision-refused">
      {children}: <UserText text={right.message} />.{' '}
      <span>
        Reason <code class="reason-code">{right.reason}</code>
      </span>
    </p>
  );
}

function Decisions({
  input,
  hazards,
}: {
  readonly input: ProposalPageInput;
  readonly hazards: readonly TextHazard[];
}) {
  const { proposal: p, session } = input;
  const csrf = session.csrfToken;
  if (p.status !== 'pending') return null;
  if (p.expiresAt.getTime() <= input.now) {
    return (
      <section class="card decide">
        <h2>Decision</h2>
        <p class="muted">This proposal expired; it can no longer be approved.</p>
      </section>
    );
  }
  if (!input.runMatches) {
    return (
      <section class="card decide">
        <h2>Decision</h2>
        <p class="muted">Open this proposal from its own run's link, or from the inbox, to decide.</p>
      </section>
    );
  }
  const { approve, decline, edit } = input.rights;
  if (approve.kind === 'refused' && decline.kind === 'refused') {
    return (
      <section class="card decide">
        <h2>Decision</h2>
        <Refusal right={approve}>You can review this proposal, not decide it</Refusal>
      </section>
    );
  }
  const request = (typeof p.request === 'object' && p.request !== null ? p.request : {}) as Record<
    string,
    unknown
  >;
  return (
    <section class="card decide" aria-labelledby="decide-h">
      <h2 id="decide-h">Decision</h2>
      <TextWarning hazards={hazards} where="What you are approving" limit={4} />
      {approve.kind === 'refused' ? (
        <Refusal right={approve}>You cannot approve this proposal</Refusal>
      ) : (
        <form class="approve-form" method="post" action={`/proposals/${p.id}/approve`}>
          <p>
            {p.approvals.required > 1
              ? `This proposal needs ${p.approvals.required} approvers (${p.approvals.given.length} of ${p.approvals.required} so far); the approval that completes it executes exactly this contract, once.`
              : 'Approving executes exactly this contract, once.'}{' '}
            Check that the short hash matches what you reviewed.
          </p>
          <input type="hidden" name="digest" value={p.digest} />
          <input type="hidden" name="csrf" value={csrf} />
          {/* The name says what is approved; it starts with the visible label, so speech input finds it. */}
          <button class="primary" type="submit">
            Approve <span class="hash">{p.short}</span>
            <span class="sr-only">
              {' · '}
              <UserText text={proposalModelText(p).title} />
            </span>
          </button>
        </form>
      )}
      {decline.kind === 'allowed' ? (
        <details class="action">
          <summary>Decline</summary>
          <form method="post" action={`/proposals/${p.id}/decline`}>
            <input type="hidden" name="csrf" value={csrf} />
            <label for="decline-reason">
              Reason <span class="muted">(optional; the agent reads it)</span>
            </label>
            <textarea id="decline-reason" name="reason" maxlength={500}></textarea>
            <div class="form-actions">
              <button class="danger" type="submit">
                Decline proposal
              </button>
            </div>
          </form>
        </details>
      ) : (
        ''
      )}
      {edit.kind === 'allowed' && input.editFields.length > 0 ? (
        <details class="action">
          <summary>Edit</summary>
          <form method="post" action={`/proposals/${p.id}/edit`}>
            <input type="hidden" name="csrf" value={csrf} />
            {input.editFields.map((f) => (
              <EditInput field={f} value={request[f.name]} />
            ))}
            <p class="hint">
              Saving creates a new proposal with a new hash; this one becomes superseded and approval is
              needed again.
            </p>
            <div class="form-actions">
              <button class="secondary" type="submit">
                Save as a new proposal
              </button>
            </div>
          </form>
        </details>
      ) : (
        ''
      )}
    </section>
  );
}

/**
 * One proposal: the preview at full precision, the contract (short hash, digest, run id,
 * operation, versions), the decision forms (the approve form carries only the displayed digest and
 * the CSRF token), the outcome and the audit timeline.
 */
export function ProposalPage(input: ProposalPageInput) {
  const { proposal: p } = input;
  const preview = p.preview;
  const previewBody =
    typeof preview === 'object' && preview !== null && !Array.isArray(preview) ? (
      <ReviewedPreview
        fields={reviewFields(preview as Record<string, unknown>, input.operation, ['title'])}
      />
    ) : (
      <Fields value={{ value: preview }} />
    );
  const { supersedes, supersededBy } = input.related;
  // The edit's changes, on the edit (from its predecessor) and on the superseded one (to its edit).
  const changes = supersedes ? (
    <EditChanges
      changes={editChanges(supersedes.scope, p.scope, input.operation)}
      other={supersedes}
      side="edit"
    />
  ) : supersededBy ? (
    <EditChanges
      changes={editChanges(p.scope, supersededBy.scope, input.operation)}
      other={supersededBy}
      side="superseded"
    />
  ) : (
    ''
  );
  const hazards = hazardsOf(p);
  const shownStatus = p.status === 'pending' && p.expiresAt.getTime() <= input.now ? 'expired' : p.status;
  return (
    <Layout title={`Proposal ${p.short}`} nonce={input.nonce} session={input.session} current="inbox">
      <main id="main">
        <div class="crumbs">
          <a href="/">Inbox</a> / <a href="/history">History</a> / <code>{p.id}</code>
        </div>
        <div class="proposal-head">
          <div>
            <p class="kicker">
              <span class="op">{p.operation}</span>{' '}
              <span class="hash">
                <span class="sr-only">Short hash </span>
                {p.short}
              </span>
            </p>
            <h1>
              <UserText text={proposalModelText(p).title} />
            </h1>
          </div>
          <StatusBadge status={shownStatus} />
        </div>
        {input.notices.map((n) => (
          <NoticeBanner notice={n} />
        ))}
        <SameScopeWarning related={input.related} />
        <div class="grid">
          <div class="review">
            <OutcomePanel
              proposal={p}
              handback={input.handback}
              csrf={input.session.csrfToken}
              mayReconcile={input.rights.reconcile.kind === 'allowed'}
            />
            {changes}
            <section class="card" aria-labelledby="preview-h" data-testid="preview">
              <h2 id="preview-h">
                {p.status === 'pending' ? 'What you are approving' : 'What was reviewed'}
              </h2>
              <TextWarning hazards={hazards} where="This preview" />
              {previewBody}
            </section>
          </div>
          <aside>
            <Decisions input={input} hazards={hazards} />
            <Facts input={input} />
          </aside>
          {/* After the decision in the markup, so a phone's one column reads preview, Approve, timeline. */}
          <div class="history">
            <section class="card" aria-labelledby="timeline-h">
              <h2 id="timeline-h">Audit timeline</h2>
              <Timeline timeline={input.timeline} approvedScope={p.scopeDigest} />
            </section>
          </div>
        </div>
      </main>
    </Layout>
  );
}

/** The proposal page as a document. */
export function proposalPage(input: ProposalPageInput): Page {
  return renderPage(<ProposalPage {...input} />);
}
