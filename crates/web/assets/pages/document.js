// @ts-check
// One document, read-only (the editor replaces this page).
import { useEffect, useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { api, formatDate } from '../lib/api.js';
import { Link } from '../lib/router.js';
import { Notice, useAction } from '../lib/ui.js';

/** @param {{sessionId: string}} props */
export function DocumentView({ sessionId }) {
  const [doc, setDoc] = useState(/** @type {any} */ (null));
  const load = useAction();
  useEffect(() => {
    load.run(async () => setDoc(await api('GET', `/v1/documents/${encodeURIComponent(sessionId)}`)));
  }, [sessionId]);
  const title = doc && titleOf(doc.html);
  return html`<section>
    <p><${Link} href="/documents">← Documents<//></p>
    <h1>${title || sessionId}</h1>
    <${Notice} message=${load.error} />
    ${doc && html`<p class="meta">${doc.section_count} sections · updated ${formatDate(doc.updated_at)}</p>
      <article class="document" aria-label="Document" dangerouslySetInnerHTML=${{ __html: doc.html }}></article>`}
  </section>`;
}

/** The text of the document's first heading, if any. @param {string} markup */
function titleOf(markup) {
  const parsed = new DOMParser().parseFromString(markup, 'text/html');
  const heading = parsed.querySelector('h1, h2, h3');
  return heading ? (heading.textContent || '').trim() : '';
}
