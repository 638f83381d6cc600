// @ts-check
// The redline of one section, like Word's Track Changes: the new section's markup, with each
// run of inserted words in `<ins class="redline-ins">` and each run of deleted words, where it
// stood in the old text, in `<del class="redline-del">`. Pure string work (no DOM), so the
// browser and Node's tests run the same code. docs/web.md, "How a redline is computed".
//
// Invariants, for well-formed (sanitized, serialized) input:
// - Every token of the new section is in the output once, in order: the output has the new
//   section's structure and text, and is as balanced as it.
// - Of the old section's tags, only whole elements of a deleted run are kept, and only where
//   they land in an element of the name their old parent had (a deleted `<li>` in a list); the
//   others are dropped. So no tag is left open, and no block lands where it cannot be.
// - `<ins>` and `<del>` hold text and `<img>` only, never another tag: runs break at tags.
// - Text is copied as it is in the input, entities and all; nothing is unescaped.
import { diffArrays } from 'diff/lib/diff/array.js';
import { CLOSE, Keys, MARK, OPEN, SPACE, TAG, VOID, tokenize } from './redline-tokens.js';

/** @typedef {import('./redline-tokens.js').Token} Token */
/** @typedef {import('./redline-tokens.js').Side} Side */

/**
 * The longest edit (inserted plus deleted tokens) a diff looks for. Myers' diff costs about
 * (old + new tokens) × edit length at worst; beyond this length a change is shown whole: its
 * old text deleted, then its new text inserted.
 */
const MAX_EDIT_LENGTH = 1000;
/** A backstop on the time all the diffs of one redline take, in ms. */
const TIMEOUT_MS = 100;

const INS_OPEN = '<ins class="redline-ins">';
const DEL_OPEN = '<del class="redline-del">';

/** Elements whose content is other elements: a deleted run waits until it can stand as text. */
const NO_TEXT = new Set(['table', 'thead', 'tbody', 'tfoot', 'tr', 'colgroup', 'ul', 'ol', 'dl', 'select', 'optgroup']);
/** Elements whose tags end a block: the first, coarse diff compares the stretches they end. */
const BLOCKS = new Set([
  'address', 'blockquote', 'br', 'caption', 'dd', 'div', 'dl', 'dt', 'figcaption', 'figure', 'h1', 'h2', 'h3',
  'h4', 'h5', 'h6', 'hr', 'li', 'ol', 'p', 'pre', 'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'ul',
]);
/**
 * A stretch of the alignment, in indexes of the sides' `ids`: equal keys, or a change (old
 * ones deleted, new ones inserted).
 * @typedef {{equal: boolean, oldStart: number, oldEnd: number, newStart: number, newEnd: number}} Op
 */

/** Sides with fewer keys than this together are compared word by word at once. */
const SMALL = 1000;

/**
 * Aligns the keys in two steps: the stretches ending at block tags (paragraphs, items, cells)
 * first, then the words of each run of changed stretches.
 * @param {Side} before @param {Side} after @param {number} deadline `Date.now()` to give up at
 * @returns {Op[]}
 */
function align(before, after, deadline) {
  /** @type {Op[]} */
  const ops = [];
  if (before.ids.length + after.ids.length < SMALL) {
    alignWords(before.ids, after.ids, 0, before.ids.length, 0, after.ids.length, deadline, ops);
    return ops;
  }
  const lines = new Map();
  const a = blocks(before, lines);
  const b = blocks(after, lines);
  const changes = diff(a.ids, b.ids, 0, a.ids.length, 0, b.ids.length, deadline);
  if (!changes) {
    alignWords(before.ids, after.ids, 0, before.ids.length, 0, after.ids.length, deadline, ops);
    return ops;
  }
  let i = 0;
  let j = 0;
  // The start of the run of changed blocks, in blocks.
  let i0 = 0;
  let j0 = 0;
  const flush = () => {
    if (i > i0 || j > j0) {
      alignWords(before.ids, after.ids, a.starts[i0], a.starts[i], b.starts[j0], b.starts[j], deadline, ops);
    }
  };
  for (const change of changes) {
    if (change.added) j += change.count;
    else if (change.removed) i += change.count;
    else {
      flush();
      push(ops, true, a.starts[i], a.starts[i + change.count], b.starts[j], b.starts[j + change.count]);
      i += change.count;
      j += change.count;
      i0 = i;
      j0 = j;
    }
  }
  flush();
  return ops;
}

/**
 * A side cut after each block tag: the key of each stretch (from `lines`, shared by both
 * sides) and where each starts in `ids` (with the end last).
 * @param {Side} side @param {Map<string, number>} lines
 */
function blocks(side, lines) {
  /** @type {number[]} */
  const ids = [];
  const starts = [0];
  for (let k = 0; k < side.ids.length; k++) {
    const t = side.tokens[side.at[k]];
    if ((t.kind === TAG && BLOCKS.has(t.name)) || k === side.ids.length - 1) {
      const key = side.ids.slice(starts[starts.length - 1], k + 1).join(' ');
      let id = lines.get(key);
      if (id === undefined) lines.set(key, (id = lines.size));
      ids.push(id);
      starts.push(k + 1);
    }
  }
  return { ids, starts };
}

/**
 * Appends the ops of `a[a0..a1)` against `b[b0..b1)`: their common head and tail, and jsdiff's
 * diff between them, or the middle as one change when that diff is too long or too slow.
 * @param {number[]} a @param {number[]} b @param {number} a0 @param {number} a1 @param {number} b0
 * @param {number} b1 @param {number} deadline @param {Op[]} ops
 */
function alignWords(a, b, a0, a1, b0, b1, deadline, ops) {
  let head = 0;
  while (a0 + head < a1 && b0 + head < b1 && a[a0 + head] === b[b0 + head]) head++;
  let tail = 0;
  while (a1 - tail > a0 + head && b1 - tail > b0 + head && a[a1 - tail - 1] === b[b1 - tail - 1]) tail++;
  push(ops, true, a0, a0 + head, b0, b0 + head);
  let i = a0 + head;
  let j = b0 + head;
  const changes = diff(a, b, i, a1 - tail, j, b1 - tail, deadline);
  if (changes) {
    for (const change of changes) {
      const n = change.count;
      if (change.added) push(ops, false, i, i, j, (j += n));
      else if (change.removed) push(ops, false, i, (i += n), j, j);
      else push(ops, true, i, (i += n), j, (j += n));
    }
  } else {
    push(ops, false, i, a1 - tail, j, b1 - tail);
  }
  push(ops, true, a1 - tail, a1, b1 - tail, b1);
}

/**
 * jsdiff's diff of `a[a0..a1)` and `b[b0..b1)`, or undefined when the change is whole anyway
 * (a side empty, no key in common) or the diff would be too long or too slow. Its length is at
 * least the number of keys one side has and the other lacks, which rules out most rewritten
 * sections without diffing.
 * @param {number[]} a @param {number[]} b @param {number} a0 @param {number} a1 @param {number} b0
 * @param {number} b1 @param {number} deadline
 */
function diff(a, b, a0, a1, b0, b1, deadline) {
  const timeout = deadline - Date.now();
  if (a1 <= a0 || b1 <= b0 || timeout <= 0 || Math.abs(a1 - a0 - (b1 - b0)) > MAX_EDIT_LENGTH) return undefined;
  /** @type {Map<number, number>} */
  const count = new Map();
  for (let i = a0; i < a1; i++) count.set(a[i], (count.get(a[i]) ?? 0) + 1);
  let common = 0;
  for (let j = b0; j < b1; j++) {
    const n = count.get(b[j]);
    if (n) {
      common++;
      count.set(b[j], n - 1);
    }
  }
  if (!common || a1 - a0 + (b1 - b0) - 2 * common > MAX_EDIT_LENGTH) return undefined;
  return diffArrays(a.slice(a0, a1), b.slice(b0, b1), { maxEditLength: MAX_EDIT_LENGTH, timeout });
}

/**
 * Appends an op, unless it is empty.
 * @param {Op[]} ops @param {boolean} equal @param {number} oldStart @param {number} oldEnd
 * @param {number} newStart @param {number} newEnd
 */
function push(ops, equal, oldStart, oldEnd, newStart, newEnd) {
  if (oldEnd > oldStart || newEnd > newStart) ops.push({ equal, oldStart, oldEnd, newStart, newEnd });
}

/** How far a pure insertion or deletion may slide to find its tags' partners. */
const MAX_SLIDE = 32;

/**
 * Slides each pure insertion or deletion, where the keys around it allow (the same keys
 * shifted, as `<li>A</li>[<li>B</li>]` against `<li>A[</li><li>B]</li>`), to where most of its
 * tags pair up within it, so that a deleted list item or paragraph is one whole element rather
 * than the end of one and the start of the next.
 * @param {Op[]} ops changed in place @param {Side} before @param {Side} after
 * @returns {Op[]} the ops, without those left empty
 */
function slide(ops, before, after) {
  for (let k = 0; k < ops.length; k++) {
    const op = ops[k];
    const removal = op.newStart === op.newEnd;
    if (op.equal || (!removal && op.oldStart !== op.oldEnd)) continue;
    // It slides between the equal stretches around it: one gives what the other takes.
    const prev = ops[k - 1];
    const next = ops[k + 1];
    if (!prev?.equal || !next?.equal) continue;
    const side = removal ? before : after;
    const ids = side.ids;
    const start = removal ? op.oldStart : op.newStart;
    const end = removal ? op.oldEnd : op.newEnd;
    const floor = removal ? prev.oldStart : prev.newStart;
    const ceiling = removal ? next.oldEnd : next.newEnd;
    let left = 0;
    while (left < MAX_SLIDE && start - left - 1 >= floor && ids[start - left - 1] === ids[end - left - 1]) left++;
    let right = 0;
    while (right < MAX_SLIDE && end + right < ceiling && ids[start + right] === ids[end + right]) right++;
    if (!left && !right) continue;
    let best = 0;
    let bestScore = unpaired(side, start, end);
    for (let d = -left; d <= right; d++) {
      const score = unpaired(side, start + d, end + d);
      if (score < bestScore || (score === bestScore && Math.abs(d) < Math.abs(best))) {
        best = d;
        bestScore = score;
      }
    }
    if (!best) continue;
    op.oldStart += best;
    op.oldEnd += best;
    op.newStart += best;
    op.newEnd += best;
    prev.oldEnd += best;
    prev.newEnd += best;
    next.oldStart += best;
    next.newStart += best;
  }
  return ops.filter((op) => op.oldEnd > op.oldStart || op.newEnd > op.newStart);
}

/** The number of tags among `ids[start..end)` whose partner is not there too. */
function unpaired(/** @type {Side} */ side, /** @type {number} */ start, /** @type {number} */ end) {
  /** @type {string[]} */
  const opened = [];
  let alone = 0;
  for (let k = start; k < end; k++) {
    const t = side.tokens[side.at[k]];
    if (t.kind !== TAG || t.role === VOID) continue;
    if (t.role === OPEN) opened.push(t.name);
    else if (opened.length && opened[opened.length - 1] === t.name) opened.pop();
    else alone++;
  }
  return alone + opened.length;
}

/** Merges each run of adjacent changes into one. @param {Op[]} ops @returns {Op[]} */
function mergeChanges(ops) {
  /** @type {Op[]} */
  const merged = [];
  for (const op of ops) {
    const last = merged[merged.length - 1];
    if (!op.equal && last && !last.equal) {
      last.oldEnd = op.oldEnd;
      last.newEnd = op.newEnd;
    } else {
      merged.push({ ...op });
    }
  }
  return merged;
}

/** The output, and the stack of open elements (new ones, and old ones a deleted run keeps). */
class Writer {
  constructor() {
    /** @type {string[]} */
    this.out = [];
    /** @type {string[]} */
    this.open = [];
    /** @type {string[]} deleted runs waiting for a place that takes text */
    this.pending = [];
    this.inserted = 0;
    this.deleted = 0;
  }

  top() {
    return this.open.length ? this.open[this.open.length - 1] : '';
  }

  takesText() {
    return !NO_TEXT.has(this.top());
  }

  /** @param {Token} token */
  tag(token) {
    this.out.push(token.raw);
    if (token.role === OPEN) {
      this.open.push(token.name);
    } else if (token.role === CLOSE) {
      const i = this.open.lastIndexOf(token.name);
      if (i >= 0) this.open.length = i;
    }
    if (this.pending.length && this.takesText()) {
      this.out.push(...this.pending);
      this.pending.length = 0;
    }
  }

  /**
   * A run of text tokens, in `<ins>` or `<del>` when it has a MARK; its leading and trailing
   * whitespace stay outside.
   * @param {Token[]} run @param {boolean} inserted
   * @param {boolean} keepSpace whether a deleted run of whitespace only is written
   */
  run(run, inserted, keepSpace) {
    let first = 0;
    while (first < run.length && run[first].kind === SPACE) first++;
    const raw = (/** @type {Token[]} */ tokens) => tokens.map((t) => t.raw).join('');
    if (first === run.length) {
      if (inserted || (keepSpace && this.takesText())) this.out.push(raw(run));
      return;
    }
    let last = run.length;
    while (run[last - 1].kind === SPACE) last--;
    const middle = run.slice(first, last);
    const marks = middle.reduce((n, t) => n + (t.kind === MARK ? 1 : 0), 0);
    const text = `${raw(run.slice(0, first))}${inserted ? INS_OPEN : DEL_OPEN}${raw(middle)}${
      inserted ? '</ins>' : '</del>'
    }${raw(run.slice(last))}`;
    if (inserted) {
      this.inserted += marks;
      this.out.push(text);
    } else {
      this.deleted += marks;
      if (this.takesText()) this.out.push(text);
      else this.pending.push(text);
    }
  }

  /** @param {Token[]} tokens new tokens the old text had too (but for whitespace) */
  equal(tokens) {
    for (const t of tokens) {
      if (t.kind === TAG) this.tag(t);
      else this.out.push(t.raw);
    }
  }

  /** @param {Token[]} tokens new tokens */
  insert(tokens) {
    /** @type {Token[]} */
    let run = [];
    for (const t of tokens) {
      if (t.kind !== TAG) {
        run.push(t);
        continue;
      }
      if (run.length) this.run(run, true, true);
      run = [];
      this.tag(t);
    }
    if (run.length) this.run(run, true, true);
  }

  /**
   * Old tokens, deleted. Their text goes in `<del>` runs; of their tags, an element whole in
   * these tokens and holding some of their text is kept where it lands in an element of the
   * same name as its old parent, with the empty elements (`<br>`) inside it; every other tag
   * is dropped, lest it show the old structure as the new one's.
   * @param {Token[]} tokens
   */
  delete(tokens) {
    /** the index of each tag's partner in `tokens`, or -1 */
    const partner = new Int32Array(tokens.length).fill(-1);
    /** @type {number[]} */
    const opened = [];
    tokens.forEach((t, i) => {
      if (t.kind !== TAG) return;
      if (t.role === OPEN) {
        opened.push(i);
      } else if (t.role === CLOSE) {
        const o = opened[opened.length - 1];
        if (o !== undefined && tokens[o].name === t.name) {
          opened.pop();
          partner[o] = i;
          partner[i] = o;
        } else {
          opened.length = 0; // it closes an element opened before: nothing pairs across it
        }
      }
    });
    /** the number of MARKs before each token */
    const marksBefore = new Int32Array(tokens.length + 1);
    tokens.forEach((t, i) => {
      marksBefore[i + 1] = marksBefore[i] + (t.kind === MARK ? 1 : 0);
    });
    const hasMarks = marksBefore[tokens.length] > 0;
    const kept = new Uint8Array(tokens.length);
    let keptOpen = 0;
    /** @type {Token[]} */
    let run = [];
    tokens.forEach((t, i) => {
      if (t.kind !== TAG) {
        run.push(t);
        return;
      }
      if (run.length) this.run(run, false, hasMarks);
      run = [];
      let keep;
      if (t.role === CLOSE) keep = partner[i] >= 0 && kept[partner[i]] === 1;
      else if (t.role === VOID) keep = keptOpen > 0 && t.name !== '!' && t.parent === this.top();
      else keep = partner[i] > i && marksBefore[partner[i]] > marksBefore[i] && t.parent === this.top();
      if (keep) {
        kept[i] = 1;
        if (t.role === OPEN) keptOpen++;
        else if (t.role === CLOSE) keptOpen--;
        this.tag(t);
      }
    });
    if (run.length) this.run(run, false, hasMarks);
  }
}

/**
 * The redline of one section: `newHtml`'s markup with the words inserted since `oldHtml` in
 * `<ins class="redline-ins">` and the words deleted, where they stood, in
 * `<del class="redline-del">`. A word whose formatting changed (made bold, a link's address)
 * is deleted and inserted. Whitespace-only differences are not shown. `inserted` and
 * `deleted` count the tokens marked (words, CJK characters, punctuation marks, emoji,
 * pictures): both are 0 exactly when nothing is marked.
 * @param {string} oldHtml a sanitized, serialized fragment ('' for a new section)
 * @param {string} newHtml the same section changed ('' for a deleted section)
 * @returns {{html: string, inserted: number, deleted: number}}
 */
export function redline(oldHtml, newHtml) {
  if (oldHtml === newHtml) return { html: newHtml, inserted: 0, deleted: 0 };
  const deadline = Date.now() + TIMEOUT_MS;
  const keys = new Keys();
  const before = tokenize(oldHtml, keys);
  const after = tokenize(newHtml, keys);
  const writer = new Writer();
  /**
   * The tokens of `ids[from..to)` of a side, each with the whitespace before it.
   * @param {Side} side @param {number} from @param {number} to
   */
  const tokens = (side, from, to) => side.tokens.slice(from ? side.at[from - 1] + 1 : 0, to ? side.at[to - 1] + 1 : 0);
  for (const op of mergeChanges(slide(align(before, after, deadline), before, after))) {
    if (op.equal) {
      writer.equal(tokens(after, op.newStart, op.newEnd));
    } else {
      writer.delete(tokens(before, op.oldStart, op.oldEnd));
      writer.insert(tokens(after, op.newStart, op.newEnd));
    }
  }
  const last = after.ids.length;
  writer.equal(after.tokens.slice(last ? after.at[last - 1] + 1 : 0));
  writer.out.push(...writer.pending);
  return { html: writer.out.join(''), inserted: writer.inserted, deleted: writer.deleted };
}
