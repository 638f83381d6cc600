// @ts-check
// The editor's two questions: a save that met someone else's change to the same section (keep
// mine over theirs, or take theirs), shown with both versions so nothing is lost unseen; and a
// link in the document, which opens only after the person has seen where it goes.
import { useLayoutEffect, useRef } from 'preact/hooks';
import { html } from '../lib/html.js';
import { mount } from '../lib/sections.js';

/**
 * @param {{conflict: {theirs: {sections: {id: string, html: string}[]}, ids: string[]},
 *   drafts: Record<string, {original: string, html: string}>, place: (id: string) => number | null,
 *   busy: boolean, onChoose: (choice: 'mine' | 'theirs') => void}} props
 */
export function ConflictBox({ conflict, drafts, place, busy, onChoose }) {
  const names = conflict.ids.map((id) => (place(id) ? `section ${place(id)}` : 'a section they deleted'));
  return html`<div class="conflict" role="alertdialog" aria-labelledby="conflict-title" aria-describedby="conflict-text">
    <h2 id="conflict-title">Someone else changed ${names.length === 1 ? names[0] : `${names.length} sections`} while you were editing</h2>
    <p id="conflict-text">The document was saved meanwhile (by another person, another window, or the AI). Your edit is still here, unsaved. Choose which version to keep:</p>
    ${conflict.ids.map((id) => html`<div class="conflict-pair" key=${id}>
      <${Fragment} label="Theirs (saved)" markup=${conflict.theirs.sections.find((s) => s.id === id)?.html || '<p><em>They deleted this section.</em></p>'} />
      <${Fragment} label="Yours (unsaved)" markup=${drafts[id]?.html || ''} />
    </div>`)}
    <div>
      <button type="button" class="primary" disabled=${busy} onClick=${() => onChoose('mine')}>Keep mine over theirs</button>
      <button type="button" disabled=${busy} onClick=${() => onChoose('theirs')}>Use theirs, drop my edit</button>
    </div>
  </div>`;
}

/** @param {{label: string, markup: string}} props */
function Fragment({ label, markup }) {
  const box = useRef(/** @type {HTMLDivElement | null} */ (null));
  useLayoutEffect(() => {
    if (box.current) mount(box.current, markup);
  }, [markup]);
  return html`<figure><figcaption>${label}</figcaption><div class="document conflict-version" ref=${box}></div></figure>`;
}

/**
 * Where a link of the document goes, as a person should read it.
 * @param {string} href
 * @returns {{url: string, host: string, safe: boolean}}
 */
export function linkTarget(href) {
  try {
    const url = new URL(href, location.href);
    const safe = ['http:', 'https:', 'mailto:'].includes(url.protocol);
    return { url: url.href, host: url.protocol === 'mailto:' ? url.pathname : url.host, safe };
  } catch {
    return { url: href, host: '', safe: false };
  }
}

/** @param {{href: string, onClose: () => void}} props */
export function LinkDialog({ href, onClose }) {
  const dialog = useRef(/** @type {HTMLDialogElement | null} */ (null));
  useLayoutEffect(() => {
    if (dialog.current && !dialog.current.open) dialog.current.showModal();
  }, []);
  const target = linkTarget(href);
  const go = () => {
    window.open(target.url, '_blank', 'noopener,noreferrer');
    dialog.current?.close();
  };
  return html`<dialog ref=${dialog} class="link-dialog" aria-labelledby="link-title" onClose=${onClose}>
    <h2 id="link-title">${target.safe ? `Open a link to ${target.host || 'another page'}?` : 'This link cannot be opened'}</h2>
    <p>The document links to:</p>
    <p class="secret link-address">${target.url}</p>
    ${target.safe
      ? html`<p class="meta">It opens in a new tab. Links in documents come from whoever wrote them: open it only if you expected to go there.</p>`
      : html`<p class="meta">Only web and e-mail links are opened from a document.</p>`}
    <div>
      ${target.safe && html`<button type="button" class="primary" onClick=${go}>Open the link</button>`}
      <button type="button" onClick=${() => dialog.current?.close()} autofocus>Stay here</button>
    </div>
  </dialog>`;
}
