import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import { formatMoney } from '../../operation/money.js';
import { userText } from './render-text.js';

type Html = HtmlEscapedString;

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

function money(value: { minor: number; currency: string; display?: string }): Html {
  // Formatted again from the integer minor units: the stored display text is never trusted to be exact.
  const exact = formatMoney(value.minor, value.currency);
  const differs = value.display !== undefined && value.display !== exact;
  return html`<span class="money"><data value="${value.minor}">${exact}</data></span><span class="minor">${value.minor} minor units</span>${
    differs
      ? html`<div class="hint">The operation's own text says ${userText(value.display ?? '')}.</div>`
      : ''
  }` as Html;
}

/**
 * Renders any JSON value of a preview at full precision, recursively: objects as definition
 * lists, arrays with every item listed (and counted), money from its integer minor units with its
 * currency, strings escaped and bidi-inert. Nothing is summarized or hidden.
 */
export function renderValue(value: unknown): Html {
  if (value === null || value === undefined) return html`<span class="none">none</span>` as Html;
  if (typeof value === 'string')
    return value.includes('\n')
      ? (html`<div class="multiline">${userText(value)}</div>` as Html)
      : userText(value);
  if (typeof value === 'number') return html`<span class="mono">${String(value)}</span>` as Html;
  if (typeof value === 'boolean') return html`${value ? 'yes' : 'no'}` as Html;
  if (Array.isArray(value)) {
    if (value.length === 0) return html`<span class="none">none (empty list)</span>` as Html;
    return html`<span class="count">${value.length} ${value.length === 1 ? 'item' : 'items'}</span><ol class="items">${value.map(
      (item) => html`<li>${renderValue(item)}</li>`,
    )}</ol>` as Html;
  }
  if (isRecord(value)) {
    if (isMoney(value)) return money(value);
    return renderFields(value);
  }
  return userText(String(value));
}

/** An object as a definition list, keys in their stored order, optionally leaving some out (`title`, shown as the heading). */
export function renderFields(value: Readonly<Record<string, unknown>>, omit: readonly string[] = []): Html {
  const keys = Object.keys(value).filter((k) => !omit.includes(k));
  if (keys.length === 0) return html`<span class="none">no fields</span>` as Html;
  return html`<dl class="value">${keys.map((key) => html`<dt>${userText(fieldLabel(key))}</dt><dd>${renderValue(value[key])}</dd>`)}</dl>` as Html;
}

/** The one-line summary of a preview: its `title` when it has one. */
export function previewTitle(preview: unknown, fallback: string): string {
  return isRecord(preview) && typeof preview['title'] === 'string' && preview['title'].trim() !== ''
    ? preview['title']
    : fallback;
}
