import type { Child } from 'hono/jsx';
import {
  codePointLabel,
  HIDDEN_KIND_LABEL,
  scriptsOf,
  splitHidden,
  suspiciousWords,
  type TextHazard,
  withoutHidden,
} from '../../operation/text-hazards.js';
import { ModelText } from './model-text.js';

type HiddenPiece = Exclude<ReturnType<typeof splitHidden>[number], { kind: 'text' }>;

function HiddenMark({ piece }: { readonly piece: HiddenPiece }) {
  if (piece.kind === 'tags') {
    const first = codePointLabel(piece.codePoints[0]!);
    return (
      <span
        class="ctl tag"
        title={`${piece.codePoints.length} invisible tag characters from ${first}, which spell the text shown`}
      >
        ⟦hidden text: “{piece.decoded}”⟧
      </span>
    );
  }
  if (piece.kind === 'gap') {
    // The blank lines' marker keeps a line of its own, so what came after them starts the next line.
    return piece.run === 'blank_lines' ? (
      <>
        <span
          class="ctl gap"
          title={`${piece.count} blank lines in a row, collapsed: they would push what follows out of view`}
        >
          ⟦{piece.count} blank lines⟧
        </span>
        {'\n'}
      </>
    ) : (
      <span
        class="ctl gap"
        title={`a run of spaces ${piece.count} columns wide, collapsed: it would push what follows out of view`}
      >
        ⟦{piece.count} spaces⟧
      </span>
    );
  }
  if (piece.kind === 'stack') {
    const first = codePointLabel(piece.codePoints[0]!);
    return (
      <span
        class="ctl stack"
        title={`${piece.codePoints.length} more combining marks stacked on this letter, from ${first}: not drawn, as they would cover the text around them`}
      >
        ⟦+{piece.codePoints.length} combining marks⟧
      </span>
    );
  }
  const name = codePointLabel(piece.codePoint);
  const times = piece.count > 1 ? ` ×${piece.count}` : '';
  return (
    <span class="ctl" title={`invisible character ${name} (${HIDDEN_KIND_LABEL[piece.hidden]})${times}`}>
      ⟦{name}
      {times}⟧
    </span>
  );
}

/** Text with its suspicious words flagged: odd letters highlighted and the scripts named after the word. */
function flagWords(text: string): Child[] {
  const words = suspiciousWords(text);
  if (words.length === 0) return [text];
  const parts: Child[] = [];
  let last = 0;
  for (const word of words) {
    if (word.index > last) parts.push(text.slice(last, word.index));
    const odd = new Set(word.odd);
    const letters = [...word.word].map((ch) => {
      const cp = ch.codePointAt(0)!;
      return odd.has(cp) ? (
        <mark class="odd" title={`${codePointLabel(cp)} ${scriptsOf(cp)[0] ?? ''}`}>
          {ch}
        </mark>
      ) : (
        ch
      );
    });
    const what =
      word.kind === 'mixed_script'
        ? `mixed scripts: ${word.scripts.join(' + ')}`
        : `not Latin: ${word.scripts[0]}`;
    parts.push(
      <>
        <span class="confusable">{letters}</span>
        <span
          class="ctl script"
          title="This word mixes scripts or only looks Latin; letters that look alike may differ"
        >
          ⟦⚠ {what}⟧
        </span>
      </>,
    );
    last = word.index + word.word.length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

/** Props of {@link UserText}. */
export interface UserTextProps {
  /** Text from a model, an agent or a user (operator input, a principal id). */
  readonly text: ModelText | string;
}

/**
 * Renders a string that came from a model, an agent or a user: HTML-escaped, isolated in a
 * `<bdi>` so its direction cannot leak into the page, every invisible, direction-changing,
 * default-ignorable, format, tag, private-use or unassigned code point replaced by a visible
 * `⟦U+XXXX⟧` marker (a run of tag characters by the text it spells), three or more blank lines
 * or a wide run of spaces collapsed into `⟦400 blank lines⟧` (so nothing hides below the fold),
 * combining marks past two on one letter into `⟦+9 combining marks⟧`, and every word that mixes
 * scripts or only looks Latin flagged, so it renders inert and a reviewer sees it. The only way
 * to put a {@link ModelText} on a page.
 */
export function UserText({ text }: UserTextProps) {
  const parts = splitHidden(ModelText.read(text)).map((piece) =>
    piece.kind === 'text' ? flagWords(piece.text) : <HiddenMark piece={piece} />,
  );
  return <bdi>{parts}</bdi>;
}

/** {@link UserText} as a function, for places that build children in code. */
export function userText(text: ModelText | string) {
  return <UserText text={text} />;
}

/** The text without its marked code points (for form fields, which cannot show markers). */
export function withoutInvisible(value: ModelText | string): string {
  return withoutHidden(ModelText.read(value));
}

/** Props of {@link TextWarning}. */
export interface TextWarningProps {
  readonly hazards: readonly TextHazard[];
  /** What holds the text, as the sentence's subject ("This preview"). */
  readonly where: string;
  /** How many hazards to list (all by default). */
  readonly limit?: number;
}

function HazardItem({ hazard }: { readonly hazard: TextHazard }) {
  return (
    <li>
      <code>
        <UserText text={hazard.path} />
      </code>
      : <HazardText hazard={hazard} />
    </li>
  );
}

/** What one hazard is, after the path of the field that holds it. */
function HazardText({ hazard: h }: { readonly hazard: TextHazard }) {
  switch (h.kind) {
    case 'hidden':
      return h.decoded !== undefined ? (
        <>
          {h.count} tag characters spelling <q>{h.decoded}</q>
        </>
      ) : (
        <>
          {h.codePoint} ({HIDDEN_KIND_LABEL[h.hidden]}){h.count > 1 ? ` ×${h.count}` : ''}
        </>
      );
    case 'whitespace_run':
      return (
        <>
          {h.run === 'blank_lines'
            ? `${h.count} blank lines in a row (collapsed in the preview)`
            : `a run of spaces ${h.count} columns wide (collapsed in the preview)`}
        </>
      );
    case 'stacked_marks':
      return (
        <>
          {h.count} extra combining marks stacked on one letter, from {h.codePoint}
        </>
      );
    default:
      return (
        <>
          <UserText text={h.word} /> ({h.scripts.join(' + ')}; look at {h.odd.join(', ')})
        </>
      );
  }
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * The warning an approver reads before deciding: each hidden code point, collapsed whitespace
 * run, stack of combining marks and suspicious word of the preview, with the path of the field that holds it (the first `limit` of them). Nothing when
 * there is nothing to say.
 */
export function TextWarning({ hazards, where, limit = Number.POSITIVE_INFINITY }: TextWarningProps) {
  if (hazards.length === 0) return null;
  const count = (kinds: readonly TextHazard['kind'][]) =>
    hazards.filter((h) => kinds.includes(h.kind)).length;
  const hidden = count(['hidden']);
  const gaps = count(['whitespace_run']);
  const stacks = count(['stacked_marks']);
  const words = count(['mixed_script', 'latin_lookalike']);
  const summary = [
    gaps > 0 ? `${plural(gaps, 'run', 'runs')} of blank lines or spaces that push text out of view` : '',
    hidden > 0
      ? plural(hidden, 'invisible or hidden character run', 'invisible or hidden character runs')
      : '',
    stacks > 0 ? plural(stacks, 'stack of combining marks', 'stacks of combining marks') : '',
    words > 0 ? `${plural(words, 'word that mixes', 'words that mix')} scripts or only looks Latin` : '',
  ]
    .filter(Boolean)
    .join(' and ');
  return (
    <div class="banner warn text-warning" role="alert" data-testid="text-warning">
      <strong>Check the text before approving.</strong> {where} holds {summary}: text can read differently
      from what it is.
      <ul>
        {hazards.slice(0, limit).map((h) => (
          <HazardItem hazard={h} />
        ))}
        {hazards.length > limit ? <li>and {hazards.length - limit} more, listed with the preview</li> : ''}
      </ul>
    </div>
  );
}
