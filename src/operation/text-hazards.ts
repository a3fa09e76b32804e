// Text a human reviews can hide what it says: invisible code points (a "hidden" instruction in
// Unicode tag characters, zero-width joiners, bidi overrides, fillers that render as nothing),
// runs of blank lines or spaces that push the rest out of view (a P.S. 400 lines below the
// fold), combining marks stacked on one letter until they cover the lines around it, and words
// that mix scripts ("Northwіnd" with a Cyrillic і). Everything here is built on the
// Unicode property escapes of the JavaScript engine (its own, current Unicode data), so there is
// no hand-kept table of code points to go stale; only the few look-alike letters at the end are
// listed by hand.

import { childPath, indexPath } from '../canonical/json-path.js';

/** Why a code point is marked: what kind of invisible or misleading character it is. */
export type HiddenKind =
  | 'tag'
  | 'bidi'
  | 'zero_width'
  | 'variation_selector'
  | 'hangul_filler'
  | 'soft_hyphen'
  | 'control'
  | 'space'
  | 'format'
  | 'ignorable'
  | 'private_use'
  | 'surrogate'
  | 'unassigned'
  | 'replacement'
  | 'blank';

/** How each kind reads in a marker's title and a warning. */
export const HIDDEN_KIND_LABEL: Readonly<Record<HiddenKind, string>> = Object.freeze({
  tag: 'tag character',
  bidi: 'bidi control',
  zero_width: 'zero-width character',
  variation_selector: 'variation selector',
  hangul_filler: 'Hangul filler',
  soft_hyphen: 'soft hyphen',
  control: 'control character',
  space: 'non-standard space',
  format: 'format character',
  ignorable: 'default-ignorable character',
  private_use: 'private-use character',
  surrogate: 'lone surrogate',
  unassigned: 'unassigned code point',
  replacement: 'replacement character, standing for something not shown',
  blank: 'blank character',
});

// Every code point a reviewer may not see as what it is. Tab, newline and carriage return are
// layout, and U+0020 is the space: those stay. Braille pattern blank (U+2800) and the musical
// null notehead (U+1D159) render as nothing but are symbols (So), so they are named; so are the
// object replacement and replacement characters (U+FFFC, U+FFFD), which stand for content
// the reviewer is not shown.
const HIDDEN_CLASS =
  '(?![\\t\\n\\r ])[\\p{Default_Ignorable_Code_Point}\\p{Cf}\\p{Cc}\\p{Co}\\p{Cs}\\p{Cn}\\p{Zs}\\p{Zl}\\p{Zp}\\u2800\\u{1D159}\\uFFFC\\uFFFD]';
// Two regexes: one to test (no state), one for matchAll and replace (whose lastIndex nothing moves).
const HIDDEN_ONE = new RegExp(HIDDEN_CLASS, 'u');
const HIDDEN_ALL = new RegExp(HIDDEN_CLASS, 'gu');

const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
const ZERO_WIDTH = /[\u200B-\u200D\u2060\uFEFF]/u;
const HANGUL_FILLER = /[\u115F\u1160\u3164\uFFA0]/u;

/** First and last code point of the Unicode tag block (U+E0000–U+E007F). */
const TAG_FIRST = 0xe0000;
const TAG_LAST = 0xe007f;

/** What kind of hidden code point `cp` is, or undefined for one that shows as itself. */
export function hiddenKind(cp: number): HiddenKind | undefined {
  const ch = String.fromCodePoint(cp);
  if (!HIDDEN_ONE.test(ch)) return undefined;
  if (cp >= TAG_FIRST && cp <= TAG_LAST) return 'tag';
  if (BIDI.test(ch)) return 'bidi';
  if (ZERO_WIDTH.test(ch)) return 'zero_width';
  if (/\p{Variation_Selector}/u.test(ch)) return 'variation_selector';
  if (HANGUL_FILLER.test(ch)) return 'hangul_filler';
  if (cp === 0xad) return 'soft_hyphen';
  if (/\p{Cc}/u.test(ch)) return 'control';
  if (/[\p{Zs}\p{Zl}\p{Zp}]/u.test(ch)) return 'space';
  if (/\p{Cf}/u.test(ch)) return 'format';
  if (/\p{Default_Ignorable_Code_Point}/u.test(ch)) return 'ignorable';
  if (/\p{Co}/u.test(ch)) return 'private_use';
  if (/\p{Cs}/u.test(ch)) return 'surrogate';
  if (/\p{Cn}/u.test(ch)) return 'unassigned';
  if (cp === 0xfffc || cp === 0xfffd) return 'replacement';
  return 'blank';
}

/** `U+202E` for a code point. */
export function codePointLabel(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** A piece of a string: text that shows as itself, or what to mark in its place. */
export type TextPiece =
  | { readonly kind: 'text'; readonly text: string }
  /** One hidden code point, `count` times in a row. */
  | {
      readonly kind: 'hidden';
      readonly codePoint: number;
      readonly hidden: Exclude<HiddenKind, 'tag'>;
      readonly count: number;
    }
  /** A run of tag characters and the ASCII they spell (U+E0041 is a hidden `A`). */
  | { readonly kind: 'tags'; readonly codePoints: readonly number[]; readonly decoded: string }
  /**
   * Whitespace that pushes what follows out of view, collapsed: `blank_lines` is {@link
   * MIN_BLANK_LINES} or more lines holding only spaces and tabs (`count` lines, each with its line
   * break), `spaces` a run of spaces and tabs at least {@link MIN_SPACE_COLUMNS} columns wide
   * (`count` columns, a tab as 8).
   */
  | { readonly kind: 'gap'; readonly run: 'blank_lines' | 'spaces'; readonly count: number }
  /**
   * Combining marks past the first {@link MAX_STACKED_MARKS} on one letter (the letter and those
   * marks stay in the text before), which would draw over the lines around it.
   */
  | { readonly kind: 'stack'; readonly codePoints: readonly number[] };

/** This many blank lines in a row, or more, are collapsed into one marker. */
export const MIN_BLANK_LINES = 3;
/** A run of spaces and tabs this many columns wide (a tab counts 8), or wider, is collapsed. */
export const MIN_SPACE_COLUMNS = 40;
/** Combining marks on one letter past this many are marked (Vietnamese stacks two). */
export const MAX_STACKED_MARKS = 2;

// What splitHidden marks, in order of precedence at one position: blank lines (only at a line's
// start), a wide run of spaces, stacked nonspacing or enclosing marks that are not themselves
// hidden (variation selectors and the grapheme joiner are marked as hidden), a hidden code point.
const MARKED = new RegExp(
  [
    `(?<blank>(?<=^|\\n)(?:[ \\t\\r]*\\n){${MIN_BLANK_LINES},})`,
    '(?<spaces>[ \\t]{5,})',
    `(?<stack>(?:(?!\\p{Default_Ignorable_Code_Point})[\\p{Mn}\\p{Me}]){${MAX_STACKED_MARKS + 1},})`,
    `(?<hidden>${HIDDEN_CLASS})`,
  ].join('|'),
  'gu',
);

const columns = (run: string): number => [...run].reduce((n, c) => n + (c === '\t' ? 8 : 1), 0);

/**
 * Splits a string into the text that shows as itself and what to mark in its place: runs of one
 * hidden code point are one piece with a count; a run of tag characters is one piece with the
 * text it spells (`U+E0049 U+E0047…` → `IG…`), non-printing tags as `<U+E007F>`; blank lines and
 * wide runs of spaces that would push the rest out of view are one `gap` piece with their count;
 * combining marks stacked past {@link MAX_STACKED_MARKS} on one letter are one `stack` piece.
 *
 * @example
 * splitHidden('a\u200Bb') // [{ kind: 'text', text: 'a' }, { kind: 'hidden', codePoint: 0x200b, hidden: 'zero_width', count: 1 }, { kind: 'text', text: 'b' }]
 * splitHidden('Hi.\n\n\n\n\nP.S.') // [{ kind: 'text', text: 'Hi.\n' }, { kind: 'gap', run: 'blank_lines', count: 4 }, { kind: 'text', text: 'P.S.' }]
 */
export function splitHidden(value: string): TextPiece[] {
  const pieces: TextPiece[] = [];
  let last = 0;
  let tags: number[] = [];
  const flushTags = () => {
    if (tags.length === 0) return;
    pieces.push({ kind: 'tags', codePoints: tags, decoded: decodeTags(tags) });
    tags = [];
  };
  const pushText = (text: string) => {
    const previous = pieces[pieces.length - 1];
    if (previous?.kind === 'text') pieces[pieces.length - 1] = { kind: 'text', text: previous.text + text };
    else pieces.push({ kind: 'text', text });
  };
  for (const match of value.matchAll(MARKED)) {
    const groups = match.groups!;
    // A narrow run of spaces is text: the pattern only finds candidates.
    if (groups['spaces'] !== undefined && columns(groups['spaces']) < MIN_SPACE_COLUMNS) continue;
    const index = match.index;
    if (index > last) {
      flushTags();
      pushText(value.slice(last, index));
    }
    last = index + match[0].length;
    if (groups['blank'] !== undefined || groups['spaces'] !== undefined) {
      flushTags();
      pieces.push(
        groups['blank'] !== undefined
          ? { kind: 'gap', run: 'blank_lines', count: groups['blank'].split('\n').length - 1 }
          : { kind: 'gap', run: 'spaces', count: columns(match[0]) },
      );
      continue;
    }
    if (groups['stack'] !== undefined) {
      flushTags();
      const marks = [...match[0]];
      pushText(marks.slice(0, MAX_STACKED_MARKS).join(''));
      pieces.push({
        kind: 'stack',
        codePoints: marks.slice(MAX_STACKED_MARKS).map((m) => m.codePointAt(0)!),
      });
      continue;
    }
    const cp = match[0].codePointAt(0)!;
    const kind = hiddenKind(cp)!;
    // A run of tags, or of one hidden code point, is one piece: text in between was pushed above.
    if (kind === 'tag') {
      tags.push(cp);
      continue;
    }
    flushTags();
    const previous = pieces[pieces.length - 1];
    if (previous?.kind === 'hidden' && previous.codePoint === cp) {
      pieces[pieces.length - 1] = { ...previous, count: previous.count + 1 };
    } else {
      pieces.push({ kind: 'hidden', codePoint: cp, hidden: kind, count: 1 });
    }
  }
  flushTags();
  if (last < value.length) pushText(value.slice(last));
  return pieces;
}

function decodeTags(codePoints: readonly number[]): string {
  return codePoints
    .map((cp) =>
      cp >= 0xe0020 && cp <= 0xe007e ? String.fromCharCode(cp - TAG_FIRST) : `<${codePointLabel(cp)}>`,
    )
    .join('');
}

/** The string with each hidden code point written as `⟦U+202E⟧`. */
export function escapeHidden(value: string): string {
  return value.replace(HIDDEN_ALL, (ch) => `⟦${codePointLabel(ch.codePointAt(0)!)}⟧`);
}

/** True when the string holds a code point {@link splitHidden} marks. */
export function hasHidden(value: string): boolean {
  return HIDDEN_ONE.test(value);
}

/** The string without its hidden code points (for form fields, which cannot show markers). */
export function withoutHidden(value: string): string {
  return value.replace(HIDDEN_ALL, '');
}

// Every script the Unicode Standard names, as V8 spells them; names a Node version does not know
// yet are skipped. A letter's Script_Extensions say which of these it is used with.
const SCRIPT_NAMES =
  'Adlam Ahom Anatolian_Hieroglyphs Arabic Armenian Avestan Balinese Bamum Bassa_Vah Batak Bengali Beria_Erfe Bhaiksuki Bopomofo Brahmi Braille Buginese Buhid Canadian_Aboriginal Carian Caucasian_Albanian Chakma Cham Cherokee Chisoi Chorasmian Coptic Cuneiform Cypriot Cypro_Minoan Cyrillic Deseret Devanagari Dives_Akuru Dogra Duployan Egyptian_Hieroglyphs Elbasan Elymaic Ethiopic Garay Georgian Glagolitic Gothic Grantha Greek Gujarati Gunjala_Gondi Gurmukhi Gurung_Khema Han Hangul Hanifi_Rohingya Hanunoo Hatran Hebrew Hiragana Imperial_Aramaic Inscriptional_Pahlavi Inscriptional_Parthian Javanese Kaithi Kannada Katakana Kawi Kayah_Li Kharoshthi Khitan_Small_Script Khmer Khojki Khudawadi Kirat_Rai Lao Latin Lepcha Limbu Linear_A Linear_B Lisu Lycian Lydian Mahajani Makasar Malayalam Mandaic Manichaean Marchen Masaram_Gondi Medefaidrin Meetei_Mayek Mende_Kikakui Meroitic_Cursive Meroitic_Hieroglyphs Miao Modi Mongolian Mro Multani Myanmar Nabataean Nag_Mundari Nandinagari New_Tai_Lue Newa Nko Nushu Nyiakeng_Puachue_Hmong Ogham Ol_Chiki Ol_Onal Old_Hungarian Old_Italic Old_North_Arabian Old_Permic Old_Persian Old_Sogdian Old_South_Arabian Old_Turkic Old_Uyghur Oriya Osage Osmanya Pahawh_Hmong Palmyrene Pau_Cin_Hau Phags_Pa Phoenician Psalter_Pahlavi Rejang Runic Samaritan Saurashtra Sharada Shavian Siddham Sidetic SignWriting Sinhala Sogdian Sora_Sompeng Soyombo Sundanese Sunuwar Syloti_Nagri Syriac Tagalog Tagbanwa Tai_Le Tai_Tham Tai_Viet Tai_Yo Takri Tamil Tangsa Tangut Telugu Thaana Thai Tibetan Tifinagh Tirhuta Todhri Tolong_Siki Toto Tulu_Tigalari Ugaritic Vai Vithkuqi Wancho Warang_Citi Yezidi Yi Zanabazar_Square'.split(
    ' ',
  );

interface ScriptTables {
  /** The scripts this engine knows, in {@link SCRIPT_NAMES} order. */
  readonly names: readonly string[];
  /** One alternative per script: the index of the group that matched names a code point's Script. */
  readonly script: RegExp;
  /** Code points whose Script_Extensions hold more than their Script (about 700 of them). */
  readonly extended: RegExp | undefined;
  /** Per script, its Script_Extensions: for the few code points `extended` matches. */
  readonly extensions: readonly RegExp[];
}

let tables: ScriptTables | undefined;

// One regex with a group per script runs inside the regex engine, ~10× faster than a test per
// script; only the code points `extended` matches (used by several scripts) are tested one by one.
function scriptTables(): ScriptTables {
  if (tables) return tables;
  const names = SCRIPT_NAMES.filter((name) => {
    try {
      new RegExp(`\\p{sc=${name}}`, 'u');
      return true;
    } catch {
      return false;
    }
  });
  let extended: RegExp | undefined;
  try {
    extended = new RegExp(`[${names.map((n) => `[\\p{scx=${n}}--\\p{sc=${n}}]`).join('')}]`, 'v');
  } catch {
    // An engine without the v flag: every code point gets the one-by-one test.
    extended = undefined;
  }
  tables = {
    names,
    script: new RegExp(`^(?:${names.map((n) => `(\\p{sc=${n}})`).join('|')})$`, 'u'),
    extended,
    extensions: names.map((n) => new RegExp(`^\\p{scx=${n}}$`, 'u')),
  };
  return tables;
}

// UTS #39 augmented script sets: Han is written with Hiragana and Katakana (Japanese), with
// Hangul (Korean) and with Bopomofo; those combinations are one writing system, not a mix.
const AUGMENT: Readonly<Record<string, readonly string[]>> = Object.freeze({
  Han: ['Japanese', 'Korean', 'Han_with_Bopomofo'],
  Hiragana: ['Japanese'],
  Katakana: ['Japanese'],
  Hangul: ['Korean'],
  Bopomofo: ['Han_with_Bopomofo'],
});

const scriptCache = new Map<number, readonly string[]>();

/**
 * The scripts a code point is used with (its Script_Extensions, augmented per UTS #39), or an
 * empty list for Common and Inherited ones (digits, punctuation, combining marks) that fit any.
 */
export function scriptsOf(cp: number): readonly string[] {
  const cached = scriptCache.get(cp);
  if (cached) return cached;
  const ch = String.fromCodePoint(cp);
  let scripts: string[];
  if (cp < 0x80) scripts = /[A-Za-z]/.test(ch) ? ['Latin'] : [];
  else {
    const t = scriptTables();
    if (t.extended === undefined || t.extended.test(ch)) {
      scripts = t.names.filter((_, i) => t.extensions[i]!.test(ch));
    } else {
      const match = t.script.exec(ch);
      const group = match ? match.findIndex((g, i) => i > 0 && g !== undefined) : -1;
      scripts = group > 0 ? [t.names[group - 1]!] : [];
    }
    scripts = [...new Set([...scripts, ...scripts.flatMap((s) => AUGMENT[s] ?? [])])];
    // Unknown to every script and not Common or Inherited: its own script, so it mixes with any.
    if (scripts.length === 0 && !/[\p{scx=Common}\p{scx=Inherited}]/u.test(ch))
      scripts = [`Unknown ${codePointLabel(cp)}`];
  }
  if (scriptCache.size < 50_000) scriptCache.set(cp, scripts);
  return scripts;
}

// Letters of other scripts that most fonts draw exactly like a Latin letter (from the Unicode
// confusables data, the unambiguous ones only). A word made only of them reads as Latin.
const LATIN_LOOKALIKES = new Set(
  [
    ...'аеіјорсухѕԁԛԝһӏ', // Cyrillic small
    ...'АВЕЅІЈКМНОРСТХҮԚԜ', // Cyrillic capital
    ...'ονΑΒΕΖΗΙΚΜΝΟΡΤΥΧ', // Greek
    ...'օսՏ', // Armenian
  ].map((c) => c.codePointAt(0)!),
);

/** A word that may not be what it looks like. */
export interface SuspiciousWord {
  readonly word: string;
  /** Where the word starts in the string (UTF-16 index). */
  readonly index: number;
  /** `mixed_script`: letters of several scripts (`Northwіnd`); `latin_lookalike`: only letters of another script that look Latin (`РауРаl`), in text that is otherwise Latin. */
  readonly kind: 'mixed_script' | 'latin_lookalike';
  /** The scripts of its letters, e.g. `['Latin', 'Cyrillic']`. */
  readonly scripts: readonly string[];
  /** The code points in it that are not of the text's main script (the ones to look at). */
  readonly odd: readonly number[];
}

// A word: letters, marks and digits, joined by the punctuation of identifiers, e-mail addresses
// and domain names (so `pаypal.com` is one word, and `acct_7` too).
const WORD = /[\p{L}\p{M}\p{N}]+(?:[._@'’-][\p{L}\p{M}\p{N}]+)*/gu;

function mainScript(scripts: readonly (readonly string[])[]): string | undefined {
  const counts = new Map<string, number>();
  for (const set of scripts) for (const s of set) counts.set(s, (counts.get(s) ?? 0) + 1);
  let best: string | undefined;
  for (const [script, n] of counts) if (best === undefined || n > counts.get(best)!) best = script;
  return best;
}

/**
 * Words of a string that mix scripts in a way one writing system does not (UTS #39 "highly
 * restrictive": Latin with Han and Kana or Hangul or Bopomofo is allowed), and words made only
 * of letters that look Latin but are not, in a string that also holds Latin letters.
 *
 * @example
 * suspiciousWords('Pay Northwіnd') // [{ word: 'Northwіnd', kind: 'mixed_script', scripts: ['Latin', 'Cyrillic'], odd: [0x456] }]
 */
export function suspiciousWords(value: string): SuspiciousWord[] {
  // Quick exit: text with no letter beyond ASCII cannot mix scripts.
  if (!/[\u0080-\u{10FFFF}]/u.test(value)) return [];
  const found: SuspiciousWord[] = [];
  const matches = [...value.matchAll(WORD)];
  const words = matches.map((m) => m[0]);
  const latinText = words.some((w) => [...w].some((c) => scriptsOf(c.codePointAt(0)!).includes('Latin')));
  for (const match of matches) {
    const word = match[0];
    const index = match.index;
    const cps = [...word].map((c) => c.codePointAt(0)!);
    const sets = cps.map(scriptsOf).filter((s) => s.length > 0);
    if (sets.length === 0) continue;
    const common = sets.reduce<readonly string[]>((acc, s) => acc.filter((x) => s.includes(x)), sets[0]!);
    const names = [...new Set(sets.map((s) => s[0]!))];
    if (common.length === 0) {
      const allowed = ['Japanese', 'Korean', 'Han_with_Bopomofo'].some((system) =>
        sets.every((s) => s.includes('Latin') || s.includes(system)),
      );
      if (allowed) continue;
      const main = mainScript(sets);
      found.push({
        word,
        index,
        kind: 'mixed_script',
        scripts: names,
        odd: cps.filter((cp) => {
          const s = scriptsOf(cp);
          return s.length > 0 && main !== undefined && !s.includes(main);
        }),
      });
      continue;
    }
    if (
      !common.includes('Latin') &&
      cps.every((cp) => LATIN_LOOKALIKES.has(cp) || scriptsOf(cp).length === 0) &&
      cps.some((cp) => LATIN_LOOKALIKES.has(cp)) &&
      latinText
    ) {
      found.push({
        word,
        index,
        kind: 'latin_lookalike',
        scripts: names,
        odd: cps.filter((cp) => LATIN_LOOKALIKES.has(cp)),
      });
    }
  }
  return found;
}

/** One hazard found in a JSON value, with the path of the string (or key) that holds it. */
export type TextHazard =
  | {
      readonly kind: 'hidden';
      readonly path: string;
      /** The code point, e.g. `U+202E`; for a run of tag characters the first one. */
      readonly codePoint: string;
      readonly hidden: HiddenKind;
      readonly count: number;
      /** For tag characters: the text they spell. */
      readonly decoded?: string;
    }
  | {
      readonly kind: SuspiciousWord['kind'];
      readonly path: string;
      readonly word: string;
      readonly scripts: readonly string[];
      /** Code points to look at, e.g. `['U+0456']`. */
      readonly odd: readonly string[];
    }
  | {
      /** Blank lines or spaces that push the rest of the string out of view (shown collapsed). */
      readonly kind: 'whitespace_run';
      readonly path: string;
      readonly run: 'blank_lines' | 'spaces';
      /** Blank lines, or columns of spaces (a tab as 8). */
      readonly count: number;
    }
  | {
      /** Combining marks stacked on one letter past the two a script needs (Zalgo text). */
      readonly kind: 'stacked_marks';
      readonly path: string;
      /** The first mark past the two, e.g. `U+0301`. */
      readonly codePoint: string;
      /** How many marks past the two. */
      readonly count: number;
    };

/**
 * Every hidden code point, whitespace run that pushes text out of view, stack of combining marks
 * and suspicious word in a JSON value (keys included), each with the path of the string that
 * holds it: what an approver must be told before approving, and what an
 * API client rendering its own page must mark. At most `limit` hazards (default 100).
 */
export function findTextHazards(value: unknown, path = '$', limit = 100): TextHazard[] {
  const out: TextHazard[] = [];
  const visit = (v: unknown, at: string): void => {
    if (out.length >= limit) return;
    if (typeof v === 'string') {
      for (const piece of splitHidden(v)) {
        if (piece.kind === 'hidden')
          out.push({
            kind: 'hidden',
            path: at,
            codePoint: codePointLabel(piece.codePoint),
            hidden: piece.hidden,
            count: piece.count,
          });
        else if (piece.kind === 'tags')
          out.push({
            kind: 'hidden',
            path: at,
            codePoint: codePointLabel(piece.codePoints[0]!),
            hidden: 'tag',
            count: piece.codePoints.length,
            decoded: piece.decoded,
          });
        else if (piece.kind === 'gap')
          out.push({ kind: 'whitespace_run', path: at, run: piece.run, count: piece.count });
        else if (piece.kind === 'stack')
          out.push({
            kind: 'stacked_marks',
            path: at,
            codePoint: codePointLabel(piece.codePoints[0]!),
            count: piece.codePoints.length,
          });
      }
      for (const word of suspiciousWords(withoutHidden(v))) {
        out.push({
          kind: word.kind,
          path: at,
          word: word.word,
          scripts: word.scripts,
          odd: word.odd.map(codePointLabel),
        });
      }
      return;
    }
    if (Array.isArray(v)) {
      for (const [i, item] of v.entries()) visit(item, indexPath(at, i));
      return;
    }
    if (v !== null && typeof v === 'object') {
      for (const [key, child] of Object.entries(v)) {
        // A key holding hidden code points is named with them escaped, so the path shows them.
        const childAt = childPath(at, escapeHidden(key));
        visit(key, `${childAt} (key)`);
        visit(child, childAt);
      }
    }
  };
  visit(value, path);
  return out.slice(0, limit);
}
