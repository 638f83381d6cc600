// @ts-check
// What is pasted into a section being edited. A picture file (a screenshot, a copied image)
// is added to the document as one of its own images (`POST /v1/documents/{id}/images`) and
// put in at the caret. Pasted HTML is put in by this code, not the browser's (whose paste
// writes inline styles, which the page's policy refuses): without `style` attributes, its
// pictures that are `data:` URLs added the same way; a picture of another site cannot be
// fetched from here (the browser forbids it), so it is left out and the person is told how to
// bring it in. Nothing becomes placeholder text. Plain text is the browser's to paste.

/** A paste's outcome told to the person, or null when all went in. @typedef {string | null} Told */

/**
 * @param {ClipboardEvent} e
 * @param {(picture: Blob) => Promise<string>} add stores a picture, answers its URL
 * @returns {Promise<Told> | null} null when the paste is plain text (the browser pastes it)
 */
export function paste(e, add) {
  const data = e.clipboardData;
  if (!data) return null;
  const markup = data.getData('text/html');
  const files = Array.from(data.files || []).filter((f) => f.type.startsWith('image/'));
  if (!markup && files.length === 0) return null;
  e.preventDefault();
  return markup ? pasteMarkup(markup, add) : pasteFiles(files, add);
}

/** @param {File[]} files @param {(picture: Blob) => Promise<string>} add */
async function pasteFiles(files, add) {
  const failed = [];
  for (const file of files) {
    try {
      insert(`<img src="${escapeAttr(await add(file))}" alt="">`);
    } catch (err) {
      failed.push(err instanceof Error ? err.message : String(err));
    }
  }
  return failed.length ? `The picture could not be added: ${failed[0]}` : null;
}

/** @param {string} markup @param {(picture: Blob) => Promise<string>} add */
async function pasteMarkup(markup, add) {
  // An inert document: nothing loads, and `style` attributes (which the page's policy refuses)
  // are dropped before the HTML goes in.
  const doc = new DOMParser().parseFromString(markup.replace(/\sstyle\s*=\s*("[^"]*"|'[^']*')/gi, ''), 'text/html');
  let left = 0;
  let failed = null;
  for (const img of Array.from(doc.querySelectorAll('img'))) {
    const src = img.getAttribute('src') || '';
    if (/^data:image\//i.test(src)) {
      try {
        img.setAttribute('src', await add(blobOf(src)));
        continue;
      } catch (err) {
        failed = err instanceof Error ? err.message : String(err);
      }
    }
    left += 1;
    img.remove();
  }
  for (const el of Array.from(doc.querySelectorAll('[style]'))) el.removeAttribute('style');
  insert(doc.body.innerHTML);
  if (failed) return `A picture could not be added: ${failed}`;
  if (left > 0) {
    return `${left === 1 ? 'A picture from another site was' : `${left} pictures from other sites were`} left out: a document shows only its own pictures. Save the picture to your computer, then paste or drop the file here.`;
  }
  return null;
}

/**
 * The bytes of a `data:` URL (decoded here: the page's policy lets it fetch only its own
 * origin). @param {string} url
 */
function blobOf(url) {
  const comma = url.indexOf(',');
  const meta = url.slice(5, comma);
  const body = url.slice(comma + 1);
  const text = meta.endsWith(';base64') ? atob(body) : decodeURIComponent(body);
  const bytes = Uint8Array.from(text, (c) => c.charCodeAt(0));
  return new Blob([bytes], { type: meta.split(';')[0] });
}

/**
 * Puts HTML (without `style` attributes) in at the caret of the section being edited, as
 * nodes: `execCommand('insertHTML')` would write inline styles of its own, which the page's
 * policy refuses.
 * @param {string} html
 */
function insert(html) {
  const selection = document.getSelection();
  if (!selection || selection.rangeCount === 0) return;
  const range = selection.getRangeAt(0);
  const parsed = new DOMParser().parseFromString(`<!doctype html><body>${html}`, 'text/html').body;
  const fragment = document.createDocumentFragment();
  for (const node of Array.from(parsed.childNodes)) fragment.append(document.importNode(node, true));
  const last = fragment.lastChild;
  range.deleteContents();
  range.insertNode(fragment);
  if (last) {
    range.setStartAfter(last);
    range.collapse(true);
    selection.removeAllRanges();
    selection.addRange(range);
  }
}

/** @param {string} s */
function escapeAttr(s) {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}
