import { formatMoney } from '../../operation/money.js';
import { UserText } from './render-text.js';

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A preview money value: integer minor units and an ISO currency (with an optional display text). */
function isMoney(
  value: Readonly<Record<string, unknown>>,
): value is { minor: number; currency: string; display?: string } {
  const keys = Object.keys(value);
  return (
    keys.every((k) => k === 'minor' || k === 'currency' || k === 'display') &&
    Number.isSafeInteger(value['minor']) &&
    typeof value['currency'] === 'string' &&
    /^[A-Z]{3}$/.test(value['currency']) &&
    (value['display'] === undefined || typeof value['display'] === 'string')
  );
}

/** `destination_account_id` → `Destination account id`. */
export function fieldLabel(key: string): string {
  const words = key
    .replace(/[_-]+/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .trim();
  return words ? words.charAt(0).toUpperCase() + words.slice(1) : key;
}

function Money({ value }: { readonly value: { minor: number; currency: string; display?: string } }) {
  // Formatted again from the integer minor units: the stored display text is never trusted to be exact.
  const exact = formatMoney(value.minor, value.currency);
  const differs = value.display !== undefined && value.display !== exact;
  return (
    <>
      <span class="money">
        <data value={String(value.minor)}>{exact}</data>
      </span>{' '}
      {/* For the eye checking exactness; read aloud it would run into the amount ("99.99 USD9999 minor units"). */}
      <span class="minor" aria-hidden="true">
        {value.minor} minor units
      </span>
      {differs ? (
        <div class="hint">
          The operation's own text says <UserText text={value.display ?? ''} />.
        </div>
      ) : (
        ''
      )}
    </>
  );
}

/** Props of {@link Value}. */
export interface ValueProps {
  /** Any JSON value of a preview, an outcome or an audit detail: every string in it is model or user text. */
  readonly value: unknown;
}

/**
 * Renders any JSON value of a preview at full precision, recursively: objects as definition
 * lists, arrays with every item listed (and counted), money from its integer minor units with its
 * currency, strings through {@link UserText} (escaped, bidi-inert, hidden characters marked).
 * Nothing is summarized or hidden.
 */
export function Value({ value }: ValueProps) {
  if (value === null || value === undefined) return <span class="none">none</span>;
  if (typeof value === 'string')
    return value.includes('\n') ? (
      <div class="multiline">
        <UserText text={value} />
      </div>
    ) : (
      <UserText text={value} />
    );
  if (typeof value === 'number') return <span class="mono">{String(value)}</span>;
  if (typeof value === 'boolean') return <>{value ? 'yes' : 'no'}</>;
  if (Array.isArray(value)) {
    if (value.length === 0) return <span class="none">none (empty list)</span>;
    return (
      <>
        <span class="count">
          {value.length} {value.length === 1 ? 'item' : 'items'}
        </span>
        <ol class="items">
          {value.map((item) => (
            <li>
              <Value value={item} />
            </li>
          ))}
        </ol>
      </>
    );
  }
  if (isRecord(value)) {
    if (isMoney(value)) return <Money value={value} />;
    return <Fields value={value} />;
  }
  return <UserText text={String(value)} />;
}

/** Props of {@link Fields}. */
export interface FieldsProps {
  readonly value: Readonly<Record<string, unknown>>;
  /** Keys left out (`title`, shown as the heading). */
  readonly omit?: readonly string[];
}

/** An object as a definition list, keys in their stored order, optionally leaving some out. */
export function Fields({ value, omit = [] }: FieldsProps) {
  const keys = Object.keys(value).filter((k) => !omit.includes(k));
  if (keys.length === 0) return <span class="none">no fields</span>;
  return (
    <dl class="value">
      {keys.map((key) => (
        <>
          <dt>
            <UserText text={fieldLabel(key)} />
          </dt>
          <dd>
            <Value value={value[key]} />
          </dd>
        </>
      ))}
    </dl>
  );
}
