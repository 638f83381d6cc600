// @ts-check
// The redline of a section (assets/lib/redline.js), in Node: no browser, no server.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { redline } from '../assets/lib/redline.js';
import { edit, section, seeded } from './redline-samples.mjs';

const INS = '<ins class="redline-ins">';
const DEL = '<del class="redline-del">';
/** @param {string} text */
const ins = (text) => `${INS}${text}</ins>`;
/** @param {string} text */
const del = (text) => `${DEL}${text}</del>`;

const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);
/** Tags (quote-aware) or a `<` that starts none. */
const TAGS = /<(\/?)([A-Za-z][^\s/<>]*)(?:[^"'<>]|"[^"]*"|'[^']*')*>|</g;

/**
 * Checks that `html` is balanced (every element closed, in order) and that the redline's
 * `<ins>`/`<del>` hold no tag but `<img>` and are never nested.
 * @param {string} html
 */
function assertWellFormed(html) {
  /** @type {string[]} */
  const open = [];
  let inRun = false;
  for (const m of html.matchAll(TAGS)) {
    const [tag, closing, rawName] = m;
    assert.ok(rawName, `a stray '<' at ${m.index}: ${html.slice(Math.max(0, (m.index ?? 0) - 40), (m.index ?? 0) + 40)}`);
    const name = rawName.toLowerCase();
    const run = tag === INS || tag === DEL;
    if (run) {
      assert.ok(!inRun, `a run inside a run: ${html}`);
      inRun = true;
    } else if (inRun && !((name === 'ins' || name === 'del') && closing)) {
      assert.equal(name, 'img', `a tag inside a run: ${tag} in ${html}`);
    }
    if (closing) {
      assert.equal(open.pop(), name, `</${name}> closes another element in ${html}`);
      if (name === 'ins' || name === 'del') inRun = false;
    } else if (!VOID.has(name)) {
      open.push(name);
    }
  }
  assert.deepEqual(open, [], `left open in ${html}`);
}

/** @param {string} html */
const tagsOf = (html) => new Set([...html.matchAll(TAGS)].map((m) => m[0]));

/**
 * The text a reader sees once the changes are accepted (deletions dropped) or rejected
 * (insertions dropped), without whitespace.
 * @param {string} html @param {'accept' | 'reject'} choice
 */
function textAfter(html, choice) {
  const dropped =
    choice === 'accept' ? /<del class="redline-del">[\s\S]*?<\/del>/g : /<ins class="redline-ins">[\s\S]*?<\/ins>/g;
  return plain(html.replace(dropped, ''));
}
/** @param {string} html */
const plain = (html) => html.replace(TAGS, '').replace(/\s+|&nbsp;/g, '');

/**
 * Checks what every redline must be: balanced, made of the inputs' tags and the runs', the new
 * text when accepted and the old when rejected, and counted when marked.
 * @param {string} oldHtml @param {string} newHtml
 */
function assertRedline(oldHtml, newHtml) {
  const result = redline(oldHtml, newHtml);
  assertWellFormed(result.html);
  const allowed = new Set([...tagsOf(oldHtml), ...tagsOf(newHtml), INS, '</ins>', DEL, '</del>']);
  for (const tag of tagsOf(result.html)) assert.ok(allowed.has(tag), `${tag} is not from the inputs`);
  assert.equal(textAfter(result.html, 'accept'), plain(newHtml));
  assert.equal(textAfter(result.html, 'reject'), plain(oldHtml));
  assert.equal(result.inserted > 0, result.html.includes(INS), 'inserted counts the insertions');
  assert.equal(result.deleted > 0, result.html.includes(DEL), 'deleted counts the deletions');
  return result;
}

describe('words', () => {
  test('a replaced word is deleted where it stood, then the new one inserted', () => {
    const r = assertRedline('<p data-chunk-id="c3">The quick fox.</p>', '<p data-chunk-id="c3">The slow fox.</p>');
    assert.equal(r.html, `<p data-chunk-id="c3">The ${del('quick')} ${ins('slow')} fox.</p>`);
    assert.deepEqual([r.inserted, r.deleted], [1, 1]);
  });

  test('neighbouring changed words make one run each', () => {
    const r = assertRedline('<p>The quick brown fox.</p>', '<p>The slow red fox.</p>');
    assert.equal(r.html, `<p>The ${del('quick brown')} ${ins('slow red')} fox.</p>`);
    assert.deepEqual([r.inserted, r.deleted], [2, 2]);
  });

  test('words inserted at the start, in the middle and at the end', () => {
    const old = '<p>payment is due</p>';
    assert.equal(redline(old, '<p>Every payment is due</p>').html, `<p>${ins('Every')} payment is due</p>`);
    assert.equal(redline(old, '<p>payment is not due</p>').html, `<p>payment is ${ins('not')} due</p>`);
    const end = assertRedline(old, '<p>payment is due in thirty days.</p>');
    assert.equal(end.html, `<p>payment is due ${ins('in thirty days.')}</p>`);
    assert.deepEqual([end.inserted, end.deleted], [4, 0], 'three words and a full stop');
  });

  test('deleted words keep their place and the new text is unchanged around them', () => {
    const r = assertRedline('<p>Pay within thirty calendar days.</p>', '<p>Pay within thirty days.</p>');
    assert.equal(r.html, `<p>Pay within thirty ${del('calendar')} days.</p>`);
    assert.deepEqual([r.inserted, r.deleted], [0, 1]);
  });

  test('a word gets its own token, not its punctuation', () => {
    const r = assertRedline('<p>Yes, sir.</p>', '<p>Yes; sir!</p>');
    assert.equal(r.html, `<p>Yes${del(',')}${ins(';')} sir${del('.')}${ins('!')}</p>`);
    assert.deepEqual([r.inserted, r.deleted], [2, 2]);
  });
});

describe('formatting', () => {
  test('a word made bold is deleted plain and inserted bold', () => {
    const r = assertRedline('<p>Some bold text</p>', '<p>Some <b>bold</b> text</p>');
    assert.equal(r.html, `<p>Some ${del('bold')} <b>${ins('bold')}</b> text</p>`);
    assert.deepEqual([r.inserted, r.deleted], [1, 1]);
  });

  test('bold removed from a word', () => {
    const r = assertRedline('<p>Some <strong>loud</strong> text</p>', '<p>Some loud text</p>');
    assert.equal(r.html, `<p>Some <strong>${del('loud')}</strong> ${ins('loud')} text</p>`);
  });

  test("a link's changed address marks its words", () => {
    const r = assertRedline(
      '<p>See <a href="https://a.example/" rel="noopener noreferrer">the terms</a> now.</p>',
      '<p>See <a href="https://b.example/" rel="noopener noreferrer">the terms</a> now.</p>',
    );
    const link = '<a href="https://b.example/" rel="noopener noreferrer">';
    assert.equal(r.html, `<p>See ${del('the terms')} ${link}${ins('the terms')}</a> now.</p>`);
    assert.deepEqual([r.inserted, r.deleted], [2, 2]);
  });

  test('a paragraph made a heading shows the old paragraph deleted', () => {
    const r = assertRedline('<p>Terms</p>', '<h2>Terms</h2>');
    assert.equal(r.html, `<p>${del('Terms')}</p><h2>${ins('Terms')}</h2>`);
  });

  test('the order of attributes and the section id change nothing', () => {
    const r = assertRedline(
      '<p data-chunk-id="a1"><a title="t" href="/x">go</a></p>',
      '<p data-chunk-id="b2"><a href="/x" title="t">go</a></p>',
    );
    assert.equal(r.html, '<p data-chunk-id="b2"><a href="/x" title="t">go</a></p>');
    assert.deepEqual([r.inserted, r.deleted], [0, 0]);
  });
});

describe('structure', () => {
  test('a table cell edited', () => {
    const row = (/** @type {string} */ a, /** @type {string} */ b) =>
      `<table><tbody><tr><td>Fee</td><td>${a}</td></tr><tr><td>Term</td><td>${b}</td></tr></tbody></table>`;
    const r = assertRedline(row('100 EUR', '12 months'), row('120 EUR', '12 months'));
    assert.equal(r.html, row(`${del('100')}${ins('120')} EUR`, '12 months'));
  });

  test('a table row added, and one deleted', () => {
    const table = (/** @type {string} */ rows) => `<table><tbody>${rows}</tbody></table>`;
    const a = '<tr><td>A</td><td>1</td></tr>';
    const b = '<tr><td>B</td><td>2</td></tr>';
    const c = '<tr><td>C</td><td>3</td></tr>';
    const added = assertRedline(table(a + c), table(a + b + c));
    assert.equal(added.html, table(`${a}<tr><td>${ins('B')}</td><td>${ins('2')}</td></tr>${c}`));
    const deleted = assertRedline(table(a + b + c), table(a + c));
    assert.equal(deleted.html, table(`${a}<tr><td>${del('B')}</td><td>${del('2')}</td></tr>${c}`));
    assert.deepEqual([deleted.inserted, deleted.deleted], [0, 2]);
  });

  test('a list item added, and one deleted, is a whole item', () => {
    const list = (/** @type {string[]} */ items) => `<ul>${items.map((i) => `<li>${i}</li>`).join('')}</ul>`;
    const added = assertRedline(list(['One', 'Three']), list(['One', 'Two', 'Three']));
    assert.equal(added.html, list(['One', ins('Two'), 'Three']));
    const deleted = assertRedline(list(['One', 'Two', 'Three']), list(['One', 'Three']));
    assert.equal(deleted.html, list(['One', del('Two'), 'Three']));
  });

  test('a deleted paragraph stays a paragraph of its own', () => {
    const r = assertRedline('<div><p>one</p><p>two words</p><p>three</p></div>', '<div><p>one</p><p>three</p></div>');
    assert.equal(r.html, `<div><p>one</p><p>${del('two words')}</p><p>three</p></div>`);
  });

  test('an element deleted whole keeps its markup', () => {
    const r = assertRedline('<p>Keep <em>this and <b>that</b></em> here</p>', '<p>Keep here</p>');
    assert.equal(r.html, `<p>Keep <em>${del('this and')} <b>${del('that')}</b></em> here</p>`);
  });

  test('a deleted run across elements drops the old tags that do not pair', () => {
    // Two paragraphs joined: the old `</p><p>` between them would close the new paragraph.
    const r = assertRedline('<p>one two</p><p>three</p>', '<p>one three</p>');
    assert.equal(r.html, `<p>one ${del('two')} three</p>`);
  });

  test('deleted text never stands where the new side takes no text', () => {
    // Text right inside a list (the parser keeps it) is shown in the next item, or after the list.
    const before = assertRedline('<ul>loose <li>a</li></ul>', '<ul><li>a</li></ul>');
    assert.equal(before.html, `<ul><li>${del('loose')}a</li></ul>`);
    const after = assertRedline('<ul><li>a</li> loose</ul><p>b</p>', '<ul><li>a</li></ul><p>b</p>');
    assert.equal(after.html, `<ul><li>a</li></ul> ${del('loose')}<p>b</p>`);
  });

  test('a picture changed is marked as a word is', () => {
    const r = assertRedline('<p>Logo <img src="a.png" alt="old"></p>', '<p>Logo <img src="b.png" alt="new"></p>');
    assert.equal(r.html, `<p>Logo ${del('<img src="a.png" alt="old">')} ${ins('<img src="b.png" alt="new">')}</p>`);
    assert.deepEqual([r.inserted, r.deleted], [1, 1]);
  });
});

describe('text', () => {
  test('Chinese is compared character by character', () => {
    const r = assertRedline('<p>我喜欢猫。</p>', '<p>我喜欢狗和猫。</p>');
    assert.equal(r.html, `<p>我喜欢${ins('狗和')}猫。</p>`);
    assert.deepEqual([r.inserted, r.deleted], [2, 0]);
  });

  test('Japanese: a run of katakana is one word, kanji and kana one token each', () => {
    const r = assertRedline('<p>AIモデルを使う</p>', '<p>新しいAIツールを使う</p>');
    assert.equal(r.html, `<p>${ins('新しい')}AI${del('モデル')}${ins('ツール')}を使う</p>`);
    assert.deepEqual([r.inserted, r.deleted], [4, 1]);
  });

  test('Arabic words', () => {
    const r = assertRedline('<p dir="rtl">مرحبا بالعالم الجميل</p>', '<p dir="rtl">مرحبا بالعالم الكبير</p>');
    assert.equal(r.html, `<p dir="rtl">مرحبا بالعالم ${del('الجميل')} ${ins('الكبير')}</p>`);
    assert.deepEqual([r.inserted, r.deleted], [1, 1]);
  });

  test('an emoji with its modifiers and joiners is one token', () => {
    const r = assertRedline('<p>Hi 👍🏽 🇫🇷</p>', '<p>Hi 👨‍👩‍👧 🇫🇷</p>');
    assert.equal(r.html, `<p>Hi ${del('👍🏽')} ${ins('👨‍👩‍👧')} 🇫🇷</p>`);
  });

  test('entities stay escaped', () => {
    const r = assertRedline('<p>1 &lt; 2 &amp;&amp; b</p>', '<p>1 &lt; 3 &amp;&amp; &lt;b&gt;</p>');
    assert.equal(r.html, `<p>1 &lt; ${del('2')} ${ins('3')} &amp;&amp; ${ins('&lt;')}b${ins('&gt;')}</p>`);
    assert.ok(!r.html.includes('<b>'));
  });

  test('an attribute holding `>` stays inside its tag', () => {
    const r = assertRedline('<p title="a > b">x y</p>', '<p title="a > b">x z</p>');
    assert.equal(r.html, `<p title="a > b">x ${del('y')} ${ins('z')}</p>`);
  });

  test('whitespace-only differences are not shown', () => {
    const old = '<ul>\n  <li>One  two</li>\n</ul>';
    const r = assertRedline(old, '<ul><li>One two&nbsp;</li></ul>');
    assert.deepEqual(r, { html: '<ul><li>One two&nbsp;</li></ul>', inserted: 0, deleted: 0 });
  });
});

describe('whole sections', () => {
  test('identical sections are the new html, unchanged', () => {
    const html = '<p data-chunk-id="c1">Some <b>bold</b> text &amp; more</p>';
    assert.deepEqual(redline(html, html), { html, inserted: 0, deleted: 0 });
    assert.deepEqual(redline('', ''), { html: '', inserted: 0, deleted: 0 });
  });

  test('a new section is all inserted', () => {
    const r = assertRedline('', '<h2>New</h2><p>A <i>fresh</i> start.</p>');
    assert.equal(r.html, `<h2>${ins('New')}</h2><p>${ins('A')} <i>${ins('fresh')}</i> ${ins('start.')}</p>`);
    assert.deepEqual([r.inserted, r.deleted], [5, 0]);
  });

  test('a deleted section is all deleted, in its own structure', () => {
    const r = assertRedline('<ul><li>Gone</li><li>too</li></ul>', '');
    assert.equal(r.html, `<ul><li>${del('Gone')}</li><li>${del('too')}</li></ul>`);
    assert.deepEqual([r.inserted, r.deleted], [0, 2]);
  });

  test('a rewritten section is its old text deleted, then its new text inserted', () => {
    const rand = seeded(3);
    const words = (/** @type {number} */ n, /** @type {string} */ prefix) =>
      Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(' ');
    // No word in common: the diff is not even tried.
    const disjoint = assertRedline(`<p>${words(3000, 'old')}</p>`, `<p>${words(3000, 'new')}</p>`);
    assert.ok(disjoint.html === `<p>${del(words(3000, 'old'))}${ins(words(3000, 'new'))}</p>`, 'one run each');
    assert.deepEqual([disjoint.inserted, disjoint.deleted], [3000, 3000]);
    // The same words shuffled: the diff gives up at its longest edit.
    const vocabulary = Array.from({ length: 50 }, (_, i) => `w${i}`);
    const shuffled = () => Array.from({ length: 3000 }, () => vocabulary[Math.floor(rand() * 50)]).join(' ');
    const a = shuffled();
    const b = shuffled();
    const r = assertRedline(`<p>${a}</p>`, `<p>${b}</p>`);
    assert.ok(r.html === `<p>${del(a)}${ins(b)}</p>`, 'one run each');
    assert.deepEqual([r.inserted, r.deleted], [3000, 3000]);
  });
});

describe('generated sections', () => {
  test('every redline is balanced, its own tags, and both texts', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const rand = seeded(seed);
      const wrapped = section(rand, seed % 10 === 0 ? 8000 : 1200);
      // Half the sections without their wrapper, so that a change may start at the first token.
      const old = seed % 2 ? wrapped.replace(/^<div[^>]*>|<\/div>$/g, '') : wrapped;
      for (const rate of [0.05, 0.3, 0.9]) {
        const changed = edit(rand, old, rate);
        assertRedline(old, changed);
        assertRedline(changed, old);
      }
      assertRedline(old, section(rand, 1200));
    }
  });
});
