import { html, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

// Bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), marks (U+200E,
// U+200F, U+061C), zero-width characters, C0/C1 controls except tab and newline, and the BOM:
// characters that change what a reviewer sees without being seen themselves.
const INVISIBLE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point: they are made visible.
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF]/g;

/** `U+202E` for a character. */
function codePoint(ch: string): string {
  return `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Renders a string that came from a model, an agent or a user: HTML-escaped, isolated in a
 * `<bdi>` so its direction cannot leak into the page, and every invisible or direction-changing
 * character replaced by a visible `U+XXXX` marker, so it renders inert and a reviewer sees it.
 */
export function userText(value: string): HtmlEscapedString {
  const parts: (string | HtmlEscapedString)[] = [];
  let last = 0;
  for (const match of value.matchAll(INVISIBLE)) {
    const index = match.index;
    if (index > last) parts.push(value.slice(last, index));
    const name = codePoint(match[0]);
    parts.push(
      html`<span class="ctl" title="invisible character ${name}">${name}</span>` as HtmlEscapedString,
    );
    last = index + match[0].length;
  }
  if (last < value.length) parts.push(value.slice(last));
  return html`<bdi>${parts}</bdi>` as HtmlEscapedString;
}

/** The text without invisible and direction-changing characters (for form fields, which cannot show markers). */
export function withoutInvisible(value: string): string {
  return value.replace(INVISIBLE, '');
}

/** Our own markup, already escaped. Never pass anything that came from a request or a record. */
export function trusted(markup: string): HtmlEscapedString {
  return raw(markup);
}
