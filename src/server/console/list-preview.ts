import { redact } from '../../ledger/incident-export.js';
import type { Proposal } from '../../engine/proposal.js';
import type { AnyOperation } from '../../operation/define-operation.js';

/** Money in a preview: integer minor units and an ISO currency. */
export interface ListedAmount {
  readonly minor: number;
  readonly currency: string;
}

/** What an inbox row shows beside the title, read from the preview as the operation redacts it. */
export interface ListedFields {
  readonly amount?: ListedAmount;
  /** The preview's destination or recipients, after redaction (text or a list of texts). */
  readonly destination?: string | readonly string[];
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function moneyOf(value: unknown): ListedAmount | undefined {
  return isRecord(value) &&
    Number.isSafeInteger(value['minor']) &&
    typeof value['currency'] === 'string' &&
    /^[A-Z]{3}$/.test(value['currency'])
    ? { minor: value['minor'] as number, currency: value['currency'] }
    : undefined;
}

const DESTINATION = /destination|recipient/i;

/**
 * The amount (the preview's `amount`, else its first money value: the one the inbox sorts by
 * comes first) and the destination (the first field named like `destination` or `recipients`),
 * from the preview with the operation's redaction applied: a redacted account shows as redacted.
 */
export function listedFields(proposal: Proposal, operation: AnyOperation | undefined): ListedFields {
  const preview = operation ? redact(proposal.preview, operation.fields, '$') : proposal.preview;
  if (!isRecord(preview)) return {};
  const amount =
    moneyOf(preview['amount']) ??
    Object.values(preview)
      .map(moneyOf)
      .find((m) => m !== undefined);
  const key = Object.keys(preview).find((k) => DESTINATION.test(k));
  const value = key === undefined ? undefined : preview[key];
  const destination =
    typeof value === 'string'
      ? value
      : Array.isArray(value) && value.every((v) => typeof v === 'string')
        ? (value as string[])
        : undefined;
  return { ...(amount ? { amount } : {}), ...(destination !== undefined ? { destination } : {}) };
}
