// @ts-check
// Sections and edits for the redline's tests and benchmark, like the documents Redline keeps
// (sanitized, serialized HTML) and the changes an AI proposes. Seeded, so every run sees the
// same input.

/**
 * A seeded generator of numbers in [0, 1) (mulberry32).
 * @param {number} seed
 * @returns {() => number}
 */
export function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'the party shall within thirty days of notice deliver to the other all documents records and ' +
  'materials relating to this agreement including any copies summaries or extracts thereof ' +
  'provided that nothing herein requires either party to disclose privileged information ' +
  'payment terms are net sixty from invoice date unless otherwise agreed in writing'
).split(' ');
const OTHER = ['合同', '付款', 'العقد', 'الدفع', 'Zahlung', 'café', '🙂', 'naïve', 'don’t', '3.5%'];

/** @param {() => number} rand @param {readonly string[]} list */
const pick = (rand, list) => list[Math.floor(rand() * list.length)];

/** A sentence with some inline markup, entities and punctuation. @param {() => number} rand */
function sentence(rand) {
  const n = 6 + Math.floor(rand() * 10);
  /** @type {string[]} */
  const words = [];
  for (let i = 0; i < n; i++) {
    const r = rand();
    let word = r < 0.06 ? pick(rand, OTHER) : pick(rand, WORDS);
    if (r > 0.97) word = `<b>${word}</b>`;
    else if (r > 0.95) word = `<i>${word}</i>`;
    else if (r > 0.94) word = `<a href="https://example.com/?a=1&amp;b=2" title="x > y">${word}</a>`;
    else if (r > 0.93) word = `${word} &amp;`;
    words.push(word);
  }
  words[0] = words[0].replace(/^[a-z]/, (c) => c.toUpperCase());
  return `${words.join(' ')}${rand() < 0.2 ? ';' : '.'}`;
}

/** One block element. @param {() => number} rand */
function block(rand) {
  const r = rand();
  if (r < 0.1) return `<h2>${sentence(rand)}</h2>`;
  if (r < 0.2) {
    const items = 2 + Math.floor(rand() * 3);
    return `<ul>${Array.from({ length: items }, () => `<li>${sentence(rand)}</li>`).join('')}</ul>`;
  }
  if (r < 0.28) {
    const row = () => `<tr><td>${pick(rand, WORDS)} ${pick(rand, WORDS)}</td><td>${Math.floor(rand() * 1000)}</td></tr>`;
    return `<table><tbody>${row()}${row()}${row()}</tbody></table>`;
  }
  if (r < 0.31) return `<p><img src="data:image/png;base64,iVBORw0KGgo=" alt="figure ${Math.floor(rand() * 9)}"></p>`;
  return `<p>${sentence(rand)} ${sentence(rand)}</p>`;
}

/**
 * A section of about `bytes` bytes: a `div` of blocks, as the sectioning makes of a long part.
 * @param {() => number} rand @param {number} bytes
 */
export function section(rand, bytes) {
  let html = '';
  while (html.length < bytes) html += block(rand);
  return `<div data-chunk-id="c${Math.floor(rand() * 1e6)}">${html}</div>`;
}

/** Tags (quote-aware) and the text between them. */
const PIECES = /<(?:[^"'<>]|"[^"]*"|'[^']*')*>|[^<]+/g;

/**
 * A proposed change: about `rate` of the words replaced, deleted, followed by a new word or
 * made bold, and some paragraphs dropped or followed by a new block. The result stays
 * well-formed.
 * @param {() => number} rand @param {string} html @param {number} rate
 */
export function edit(rand, html, rate) {
  const words = html.replace(PIECES, (piece) =>
    piece.startsWith('<')
      ? piece
      : piece.replace(/&[#\w]+;|[\p{L}\p{N}]+/gu, (word) => {
          const r = rand();
          if (r >= rate || word.startsWith('&')) return word;
          if (r < rate / 4) return '';
          if (r < rate / 2) return pick(rand, WORDS);
          if (r < (rate * 3) / 4) return `${word} ${pick(rand, WORDS)}`;
          return `<b>${word}</b>`;
        }),
  );
  return words.replace(/<p>(?:(?!<\/p>)[\s\S])*<\/p>/g, (paragraph) => {
    const r = rand();
    if (r < rate / 8) return '';
    if (r < rate / 4) return `${paragraph}${block(rand)}`;
    return paragraph;
  });
}
