import { canonicalize } from '../../canonical/canonicalize.js';
import type { Proposal } from '../../engine/proposal.js';
import type { Grant } from '../../grants/grant.js';
import type { DeliveryView } from '../../notify/deliveries.js';
import { type ModelText, modelText } from './model-text.js';

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The texts of a proposal the agent or its model wrote, as {@link ModelText}: the one place the
 * console wraps them (preview values, the request and outcome results are rendered through
 * `Value`, which marks every string in them).
 */
export interface ProposalModelText {
  /** The preview's `title`, else the operation's name. */
  readonly title: ModelText;
  readonly runId: ModelText;
  readonly resource: ModelText;
  readonly section: ModelText | null;
}

/** The one-line summary of a preview: its `title` when it has one. */
export function previewTitle(preview: unknown, fallback: string): ModelText {
  return modelText(
    isRecord(preview) && typeof preview['title'] === 'string' && preview['title'].trim() !== ''
      ? preview['title']
      : fallback,
  );
}

/** Wraps the model-written texts of a proposal for the views. */
export function proposalModelText(p: Proposal): ProposalModelText {
  return {
    title: previewTitle(p.preview, p.operation),
    runId: modelText(p.runId),
    resource: modelText(p.resource),
    section: p.section === null ? null : modelText(p.section),
  };
}

/**
 * The texts of a grant that an admin typed, possibly pasted from an agent's proposal, as
 * {@link ModelText}: the agent it names, its resource boundary and its constraints.
 */
export interface GrantModelText {
  readonly subject: ModelText;
  readonly resource: ModelText;
  /** Each field's bound, `field {json}`, joined by `; `. */
  readonly constraints: ModelText;
}

/** Wraps the typed-in texts of a grant for the views. */
export function grantModelText(g: Grant): GrantModelText {
  return {
    subject: modelText(g.subject),
    resource: modelText(g.resource),
    constraints: modelText(
      Object.entries(g.constraints)
        .map(([field, c]) => `${field} ${canonicalize(c)}`)
        .join('; '),
    ),
  };
}

/**
 * A delivery's last error as {@link ModelText}. The dispatcher stores only codes, but a row
 * written by an older version (or by hand) may hold anything: it is shown as text all the same.
 * Null when there is none to show.
 */
export function deliveryLastError(d: DeliveryView): ModelText | null {
  return d.lastError ? modelText(d.lastError) : null;
}
