import type { Proposal } from '../../../engine/proposal.js';
import type { RelatedProposals } from '../../../engine/related-proposals.js';
import { ProposalLink } from './proposal-link.js';
import { UserText } from '../render-text.js';
import { fieldLabel, Value } from '../render-value.js';
import type { FieldChange } from '../review/edit-changes.js';
import type { HashFact, ShownHash } from '../review/event-hashes.js';
import type { ReviewField } from '../review/field-order.js';

/** The marker beside a field the operation declares `highImpact`. */
function Impact() {
  return (
    <>
      {' '}
      <span class="impact">high impact</span>
    </>
  );
}

/** A field's label (the key comes from the preview or the scope, so it is rendered as user text). */
function Label({ name, highImpact }: { readonly name: string; readonly highImpact: boolean }) {
  return (
    <>
      <UserText text={fieldLabel(name)} />
      {highImpact ? <Impact /> : ''}
    </>
  );
}

/** The preview's fields in declared order, high-impact ones emphasised and labelled. */
export function ReviewedPreview({ fields }: { readonly fields: readonly ReviewField[] }) {
  if (fields.length === 0) return <span class="none">no fields</span>;
  return (
    <dl class="value review-fields">
      {fields.map((f) => (
        <>
          <dt class={f.highImpact ? 'high-impact' : undefined} data-field={f.key}>
            <Label name={f.key} highImpact={f.highImpact} />
          </dt>
          <dd class={f.highImpact ? 'high-impact' : undefined}>
            <Value value={f.value} />
          </dd>
        </>
      ))}
    </dl>
  );
}

function Side({ present, value }: { readonly present: boolean; readonly value: unknown }) {
  return present ? <Value value={value} /> : <span class="none">absent</span>;
}

/**
 * An edit's changes, old → new per field with both values in full (redacted as the operation
 * says). On the edit it links back to the proposal it supersedes; on the superseded one, forward.
 */
export function EditChanges({
  changes,
  other,
  side,
}: {
  readonly changes: readonly FieldChange[];
  /** The superseded proposal (on the edit) or the edit (on the superseded one). */
  readonly other: Proposal;
  readonly side: 'edit' | 'superseded';
}) {
  return (
    <section class="card" aria-labelledby="edit-changes-h" data-testid="edit-changes">
      <h2 id="edit-changes-h">
        {side === 'edit' ? 'Changed by this edit' : 'Changed by the edit that replaced it'}
      </h2>
      <p class="muted">
        {side === 'edit' ? (
          <>
            Edited from <ProposalLink proposal={other} />: every scope field the edit changed, before → after.
          </>
        ) : (
          <>
            Edited into <ProposalLink proposal={other} />: review and approve that one.
          </>
        )}
      </p>
      {changes.length === 0 ? (
        <p class="muted">The scope did not change.</p>
      ) : (
        <table class="changes">
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Before</th>
              <th scope="col">
                <span class="sr-only">becomes</span>
              </th>
              <th scope="col">After</th>
            </tr>
          </thead>
          <tbody>
            {changes.map((c) => (
              <tr data-field={c.key} class={c.highImpact ? 'high-impact' : undefined}>
                <th scope="row">
                  <Label name={c.key || 'value'} highImpact={c.highImpact} />
                </th>
                <td class="old">
                  <Side present={'from' in c} value={c.from} />
                </td>
                <td aria-hidden="true">→</td>
                <td class="new">
                  <Side present={'to' in c} value={c.to} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function RelatedRow({
  label,
  id,
  proposal,
  note,
}: {
  readonly label: string;
  readonly id: string;
  readonly proposal: Proposal | undefined;
  readonly note?: string;
}) {
  if (!proposal) return null;
  return (
    <>
      <dt>{label}</dt>
      <dd data-testid={id}>
        <ProposalLink proposal={proposal} />
        {note ? (
          <>
            {' '}
            <span class="muted">({note})</span>
          </>
        ) : (
          ''
        )}
      </dd>
    </>
  );
}

/** Facts rows for the related proposals: supersedes / superseded by / replaces / replaced by. */
export function RelatedFacts({ related }: { readonly related: RelatedProposals }) {
  return (
    <>
      <RelatedRow label="Supersedes" id="supersedes" proposal={related.supersedes} />
      <RelatedRow label="Superseded by" id="superseded-by" proposal={related.supersededBy} />
      <RelatedRow
        label="Replaces"
        id="replaces"
        proposal={related.replaces}
        note="its outcome was revision required"
      />
      <RelatedRow
        label="Replaced by"
        id="replaced-by"
        proposal={related.replacedBy}
        note="proposed again after revision required"
      />
    </>
  );
}

/** The warning that other pending proposals have the same scope, with a link to each. */
export function SameScopeWarning({ related }: { readonly related: RelatedProposals }) {
  const n = related.sameScope.length;
  if (n === 0) return null;
  const title =
    n === 1 && !related.sameScopeTruncated
      ? '1 other pending proposal has the same scope'
      : `${related.sameScopeTruncated ? `${n} or more` : n} other pending proposals have the same scope`;
  return (
    <div class="banner warn" role="alert" data-testid="same-scope">
      <strong>{title}.</strong> Approving more than one does the same thing more than once.
      <ul class="same-scope">
        {related.sameScope.map((p) => (
          <li>
            <ProposalLink proposal={p} /> <span class="muted">by </span>
            <UserText text={p.requestedBy} />
          </li>
        ))}
      </ul>
    </div>
  );
}

function Hash({ hash: h }: { readonly hash: ShownHash }) {
  return (
    <code
      class={`hash small${h.valid ? '' : ' invalid'}`}
      title={h.valid ? undefined : 'not a SHA-256 digest'}
    >
      {h.short}
    </code>
  );
}

/** One event's digests, like with like: a comparison with ✓ or ✗, or a digest on its own. */
export function HashFacts({ facts }: { readonly facts: readonly HashFact[] }) {
  return (
    <>
      {facts.map((f) =>
        f.kind === 'single' ? (
          <span>
            {f.hash.label} <Hash hash={f.hash} />
          </span>
        ) : (
          <span class={`compare ${f.equal ? 'same' : 'differs'}`}>
            {f.left.label} <Hash hash={f.left} /> {f.equal ? '=' : '≠'} {f.right.label}{' '}
            <Hash hash={f.right} />{' '}
            <span role="img" aria-label={f.equal ? 'equal' : 'different'}>
              {f.equal ? '✓' : '✗'}
            </span>
          </span>
        ),
      )}
    </>
  );
}
