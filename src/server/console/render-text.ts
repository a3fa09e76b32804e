import { html, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import {
  codePointLabel,
  HIDDEN_KIND_LABEL,
  scriptsOf,
  splitHidden,
  suspiciousWords,
  type TextHazard,
  withoutHidden,
} from '../../operation/text-hazards.js';

type Html = HtmlEscapedString;

function hiddenMark(piece: Exclude<ReturnType<typeof splitHidden>[number], { kind: 'text' }>): Html {
  if (piece.kind === 'tags') {
    const first = codePointLabel(piece.codePoints[0]!);
    return html`<span class="ctl tag" title="${piece.codePoints.length} invisible tag characters from ${first}, which spell the text shown">⟦hidden text: “${piece.decoded}”⟧</span>` as Html;
  }
  const name = codePointLabel(piece.codePoint);
  const times = piece.count > 1 ? ` ×${piece.count}` : '';
  return html`<span class="ctl" title="invisible character ${name} (${HIDDEN_KIND_LABEL[piece.hidden]})${times}">⟦${name}${times}⟧</span>` as Html;
}

/** Text with its suspicious words flagged: odd letters highlighted and the scripts named after the word. */
function flagWords(text: string): (string | Html)[] {
  const words = suspiciousWords(text);
  if (words.length === 0) return [text];
  const parts: (string | Html)[] = [];
  let last = 0;
  for (const word of words) {
    if (word.index > last) parts.push(text.slice(last, word.index));
    const odd = new Set(word.odd);
    const letters = [...word.word].map((ch) => {
      const cp = ch.codePointAt(0)!;
      return odd.has(cp)
        ? html`<mark class="odd" title="${codePointLabel(cp)} ${scriptsOf(cp)[0] ?? ''}">${ch}</mark>`
        : ch;
    });
    const what =
      word.kind === 'mixed_script'
        ? `mixed scripts: ${word.scripts.join(' + ')}`
        : `not Latin: ${word.scripts[0]}`;
    parts.push(
      html`<span class="confusable">${letters}</span><span class="ctl script" title="This word mixes scripts or only looks Latin; letters that look alike may differ">⟦⚠ ${what}⟧</span>` as Html,
    );
    last = word.index + word.word.length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

/**
 * Renders a string that came from a model, an agent or a user: HTML-escaped, isolated in a
 * `<bdi>` so its direction cannot leak into the page, every invisible, direction-changing,
 * default-ignorable, format, tag, private-use or unassigned code point replaced by a visible
 * `⟦U+XXXX⟧` marker (a run of tag characters by the text it spells), and every word that mixes
 * scripts or only looks Latin flagged, so it renders inert and a reviewer sees it.
 */
export function userText(value: string): HtmlEscapedString {
  const parts = splitHidden(value).map((piece) =>
    piece.kind === 'text' ? flagWords(piece.text) : hiddenMark(piece),
  );
  return html`<bdi>${parts}</bdi>` as HtmlEscapedString;
}

/** The text without its marked code points (for form fields, which cannot show markers). */
export function withoutInvisible(value: string): string {
  return withoutHidden(value);
}

/**
 * The warning an approver reads before deciding: each hidden code point and suspicious word of
 * the preview, with the path of the field that holds it (the first `limit` of them). Empty when
 * there is nothing to say.
 */
export function textWarning(
  hazards: readonly TextHazard[],
  where: string,
  limit = Number.POSITIVE_INFINITY,
): HtmlEscapedString {
  if (hazards.length === 0) return html`` as Html;
  const hidden = hazards.filter((h) => h.kind === 'hidden').length;
  const words = hazards.length - hidden;
  const summary = [
    hidden > 0 ? `${hidden} invisible or hidden ${hidden === 1 ? 'character run' : 'character runs'}` : '',
    words > 0
      ? `${words} ${words === 1 ? 'word that mixes' : 'words that mix'} scripts or only looks Latin`
      : '',
  ]
    .filter(Boolean)
    .join(' and ');
  const items = hazards
    .slice(0, limit)
    .map((h) =>
      h.kind === 'hidden'
        ? html`<li><code>${userText(h.path)}</code>: ${
            h.decoded !== undefined
              ? html`${h.count} tag characters spelling <q>${h.decoded}</q>`
              : html`${h.codePoint} (${HIDDEN_KIND_LABEL[h.hidden]})${h.count > 1 ? ` ×${h.count}` : ''}`
          }</li>`
        : html`<li><code>${userText(h.path)}</code>: ${userText(h.word)} (${h.scripts.join(' + ')}; look at ${h.odd.join(', ')})</li>`,
    );
  return html`<div class="banner warn text-warning" role="alert" data-testid="text-warning"><strong>Check the text before approving.</strong> ${where} holds ${summary}: text can read differently from what it is.<ul>${items}${
    hazards.length > limit ? html`<li>and ${hazards.length - limit} more, listed with the preview</li>` : ''
  }</ul></div>` as Html;
}

/** Our own markup, already escaped. Never pass anything that came from a request or a record. */
export function trusted(markup: string): HtmlEscapedString {
  return raw(markup);
}
