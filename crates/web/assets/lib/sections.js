// @ts-check
// A document as the editor holds it: its sections (the top-level elements that carry a
// `data-chunk-id`), each as its own HTML, in order. And the one way a section's HTML enters the
// page (`mount`): parsed in an inert document, its sanitized `style` attributes applied through
// the CSSOM, so that the page's Content-Security-Policy can keep refusing inline styles.
// Chromium checks the policy even when it parses into an inert document, so before any parse a
// `style` attribute is renamed `data-redline-style` (`park`), and named back where HTML leaves
// (`unpark`).

/** @typedef {{id: string, html: string}} Section */

/**
 * The sections of a document's HTML, in order. A top-level node without an id (text between
 * sections, say) becomes a section of its own with a made-up id that starts with `~`, shown but
 * not editable.
 * @param {string} markup
 * @returns {Section[]}
 */
export function splitSections(markup) {
  const body = parse(markup);
  /** @type {Section[]} */
  const sections = [];
  let loose = 0;
  for (const node of Array.from(body.childNodes)) {
    if (node.nodeType === Node.ELEMENT_NODE) {
      const el = /** @type {Element} */ (node);
      const id = el.getAttribute('data-chunk-id');
      sections.push({ id: id || `~${++loose}`, html: unpark(el.outerHTML) });
    } else if (node.nodeType === Node.TEXT_NODE && (node.textContent || '').trim()) {
      sections.push({ id: `~${++loose}`, html: escapeText(node.textContent || '') });
    }
  }
  return sections;
}

/** The document's HTML from its sections. @param {Section[]} sections */
export function joinSections(sections) {
  return sections.map((s) => s.html).join('\n');
}

/** Whether a section is one of the document's own (not a made-up one). @param {string} id */
export function editable(id) {
  return !id.startsWith('~');
}

/**
 * Puts a section's (or any document fragment's) HTML into `container`, its `style` attributes
 * applied through the CSSOM (never as attributes, which the policy refuses).
 * @param {Element} container
 * @param {string} markup
 */
export function mount(container, markup) {
  const body = parse(markup);
  /** @type {[HTMLElement, string][]} */
  const styled = [];
  for (const el of Array.from(body.querySelectorAll(`[${PARKED}]`))) {
    styled.push([/** @type {HTMLElement} */ (el), el.getAttribute(PARKED) || '']);
    el.removeAttribute(PARKED);
  }
  container.replaceChildren(...Array.from(body.childNodes));
  for (const [el, css] of styled) el.style.cssText = css;
}

/**
 * The text of a fragment, whitespace folded: for comparing what a person sees.
 * @param {string} markup
 */
export function textOf(markup) {
  return (parse(markup).textContent || '').replace(/\s+/g, ' ').trim();
}

/**
 * An element's HTML as it should be saved: the editing attributes taken off.
 * @param {Element} el
 */
export function serialize(el) {
  const copy = /** @type {Element} */ (el.cloneNode(true));
  copy.removeAttribute('contenteditable');
  copy.removeAttribute('spellcheck');
  copy.removeAttribute('aria-label');
  copy.removeAttribute('role');
  copy.removeAttribute('aria-multiline');
  copy.removeAttribute('tabindex');
  return copy.outerHTML;
}

/** @param {string} markup */
function parse(markup) {
  return new DOMParser().parseFromString(`<!doctype html><body>${park(markup)}`, 'text/html').body;
}

const PARKED = 'data-redline-style';
/** A start tag of serialized HTML (attribute values quoted or not, `>` inside quotes). */
const START_TAG = /<[A-Za-z][^\s/>]*(?:\s+[^\s=>/]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"']+))?)*\s*\/?>/g;
/** One attribute of a start tag, its value consumed so nothing inside it matches. */
const ATTRIBUTE = /(\s)([^\s=>/]+)(\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"']+))?/g;

/** Renames attribute `from` to `to` in every start tag. @param {string} markup @param {string} from @param {string} to */
function rename(markup, from, to) {
  if (!markup.toLowerCase().includes(from)) return markup;
  return markup.replace(START_TAG, (tag) =>
    tag.replace(ATTRIBUTE, (whole, space, name, value) => (name.toLowerCase() === from ? `${space}${to}${value || ''}` : whole)),
  );
}

/** `style` attributes renamed so that no parse meets one. @param {string} markup */
export function park(markup) {
  return rename(markup, 'style', PARKED);
}

/** @param {string} markup */
export function unpark(markup) {
  return rename(markup, PARKED, 'style');
}

/** @param {string} text */
function escapeText(text) {
  return `<p>${text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</p>`;
}
