// @ts-check
// The tokens of the redline (lib/redline.js): an HTML fragment split into tags, whitespace and
// words, with comparison keys shared by the two sides. Pure string work (no DOM).

// Token kinds. A MARK is what a run shows and counts: a word, a CJK character, a punctuation
// mark, an entity, an emoji or a picture. Whitespace is no part of the comparison.
export const TAG = 0;
export const SPACE = 1;
export const MARK = 2;
// Tag roles.
export const OPEN = 1;
export const CLOSE = 2;
export const VOID = 3;

/**
 * @typedef {object} Token
 * @property {number} kind TAG, SPACE or MARK
 * @property {string} raw the token as it is in the input
 * @property {number} role OPEN, CLOSE or VOID for a tag (and a picture), 0 for text
 * @property {string} name a tag's element name, lower case ('!' for a comment); '' for text
 * @property {string} parent the name of the element the token is in ('' at the top)
 */

/**
 * A side of the comparison: all its tokens, and the comparison keys (as numbers) of those
 * that are not whitespace, with where each is in `tokens`.
 * @typedef {{tokens: Token[], ids: number[], at: number[]}} Side
 */

/** A start or end tag; quoted attribute values may hold `>`. Comments are found apart. */
const TAG_RE = /<(\/?)([A-Za-z][^\s/<>]*)((?:[^"'<>]|"[^"]*"|'[^']*')*)>/y;
const ATTR_RE = /([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
const VOID_ELEMENTS = new Set([
  'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr',
]);
/** Attributes that name an element rather than format it: they never make a change. */
const IDENTITY_ATTRIBUTES = new Set(['data-chunk-id']);
const NBSP = new Set(['&nbsp;', '&#160;', '&#xa0;']);

// Scripts written without spaces between words: each character is a token, but for a run of
// katakana, which is mostly one (borrowed) word.
const UNSPACED = String.raw`\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}`;
// ASCII first: most words are, and it spares them the lookahead.
const WORD_CHAR = String.raw`(?:[A-Za-z0-9_]|(?![${UNSPACED}])[\p{L}\p{M}\p{N}\p{Pc}\u200C\u200D])`;
const EMOJI = String.raw`\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier}|[\u{E0020}-\u{E007F}])*`;
/**
 * The tokens of text, in order of preference: whitespace (group 1), a word (with inner
 * apostrophes), an emoji sequence, a flag, a run of katakana, a character of another unspaced
 * script, an entity (group 2), and any other character with its combining marks.
 */
const TEXT_RE = new RegExp(
  [
    String.raw`(\s+)`,
    String.raw`${WORD_CHAR}+(?:['’]${WORD_CHAR}+)*`,
    String.raw`${EMOJI}(?:\u200D${EMOJI})*`,
    String.raw`\p{Regional_Indicator}{2}`,
    String.raw`\p{sc=Katakana}[\p{sc=Katakana}\u30FC\p{M}]*`,
    String.raw`[${UNSPACED}]\p{M}*`,
    String.raw`(&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);)`,
    String.raw`[\s\S]\p{M}*`,
  ].join('|'),
  'gu',
);

/**
 * The comparison keys of both sides, as numbers: a tag's key is its name and attributes
 * (sorted, identity attributes left out); a word's is its text in the keys of the elements it
 * is in, so a word whose formatting changed is another word.
 */
export class Keys {
  constructor() {
    /** @type {Map<string, number>} tag keys, and contexts (the keys of the open elements) */
    this.tags = new Map();
    /** @type {Map<string, number>[]} by context: text -> key */
    this.words = [];
    this.next = 0;
  }

  /** @param {string} key */
  tag(key) {
    let id = this.tags.get(key);
    if (id === undefined) this.tags.set(key, (id = this.next++));
    return id;
  }

  /** A context: the one inside `outer`'s elements and then `key`'s. @param {number} outer @param {number} key */
  context(outer, key) {
    const name = `${outer} ${key}`;
    let id = this.tags.get(name);
    if (id === undefined) {
      this.tags.set(name, (id = this.words.length));
      this.words.push(new Map());
    }
    return id;
  }

  /** @param {number} context @param {string} text */
  word(context, text) {
    const words = this.words[context];
    let id = words.get(text);
    if (id === undefined) words.set(text, (id = this.next++));
    return id;
  }
}

/**
 * Splits a fragment into tags, whitespace and words.
 * @param {string} html @param {Keys} keys
 * @returns {Side}
 */
export function tokenize(html, keys) {
  /** @type {Token[]} */
  const tokens = [];
  /** @type {number[]} */
  const ids = [];
  /** @type {number[]} */
  const at = [];
  const top = keys.context(-1, -1);
  /** @type {{name: string, context: number}[]} the open elements */
  const open = [];
  let parent = '';
  let context = top;
  const entered = () => {
    const inner = open[open.length - 1];
    parent = inner ? inner.name : '';
    context = inner ? inner.context : top;
  };
  /** @param {Token} token @param {number} id */
  const push = (token, id) => {
    if (id >= 0) {
      ids.push(id);
      at.push(tokens.length);
    }
    tokens.push(token);
  };
  /** @param {number} from @param {number} to */
  const words = (from, to) => {
    TEXT_RE.lastIndex = from;
    while (TEXT_RE.lastIndex < to) {
      const m = /** @type {RegExpExecArray} */ (TEXT_RE.exec(html));
      const raw = m[0];
      if (m[1] !== undefined || (m[2] !== undefined && NBSP.has(raw.toLowerCase()))) {
        push({ kind: SPACE, raw, role: 0, name: '', parent }, -1);
      } else {
        push({ kind: MARK, raw, role: 0, name: '', parent }, keys.word(context, raw));
      }
    }
  };
  /** @param {string} raw @param {boolean} closing @param {string} name @param {string} attributes */
  const tag = (raw, closing, name, attributes) => {
    if (closing) {
      push({ kind: TAG, raw, role: CLOSE, name, parent }, keys.tag(`</${name}`));
      let i = open.length - 1;
      while (i >= 0 && open[i].name !== name) i--;
      if (i >= 0) {
        open.length = i;
        entered();
      }
      return;
    }
    const key = keys.tag(`<${name}${attributeKey(attributes)}`);
    const isVoid = VOID_ELEMENTS.has(name) || /\/\s*$/.test(attributes);
    if (name === 'img') {
      // A picture is shown and counted like a word, in its formatting like a word.
      push({ kind: MARK, raw, role: VOID, name, parent }, keys.word(context, `<${key}`));
    } else {
      push({ kind: TAG, raw, role: isVoid ? VOID : OPEN, name, parent }, key);
    }
    if (!isVoid) {
      open.push({ name, context: keys.context(context, key) });
      entered();
    }
  };
  let textStart = 0;
  let scan = 0;
  for (;;) {
    const lt = html.indexOf('<', scan);
    if (lt < 0) break;
    let end;
    if (html.startsWith('<!--', lt)) {
      const close = html.indexOf('-->', lt + 4);
      end = close < 0 ? html.length : close + 3;
      words(textStart, lt);
      const raw = html.slice(lt, end);
      push({ kind: TAG, raw, role: VOID, name: '!', parent }, keys.tag(raw));
    } else {
      TAG_RE.lastIndex = lt;
      const m = TAG_RE.exec(html);
      if (!m) {
        scan = lt + 1; // a `<` that starts no tag is text
        continue;
      }
      end = TAG_RE.lastIndex;
      words(textStart, lt);
      tag(m[0], m[1] === '/', m[2].toLowerCase(), m[3]);
    }
    textStart = scan = end;
  }
  words(textStart, html.length);
  return { tokens, ids, at };
}

/** The attributes of a start tag as a comparison key: sorted, identity attributes left out. */
function attributeKey(/** @type {string} */ attributes) {
  if (!/\S/.test(attributes)) return '';
  /** @type {string[]} */
  const parts = [];
  for (const m of attributes.matchAll(ATTR_RE)) {
    const name = m[1].toLowerCase();
    if (!IDENTITY_ATTRIBUTES.has(name)) parts.push(`${name}="${m[2] ?? m[3] ?? m[4] ?? ''}"`);
  }
  return parts.length ? ` ${parts.sort().join(' ')}` : '';
}
