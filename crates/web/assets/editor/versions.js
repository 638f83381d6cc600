// @ts-check
// The document's versions, newest first, each with its time, what made it (an upload, a save
// in the editor, a turn of the AI — named by the message that asked for it — an undo or a
// restore), a read-only preview, and restoring one as a new version.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { api, apiWithHeaders, formatDate, nextLink } from '../lib/api.js';
import { mount } from '../lib/sections.js';
import { Notice, useAction } from '../lib/ui.js';

/** @typedef {{version_id: string, created_at: string, section_count: number, source: string}} Version */

/**
 * What made a version, in words.
 * @param {Version} v
 * @param {Map<string, string>} turns version_after -> the message that asked for it
 */
export function madeBy(v, turns) {
  const turn = turns.get(v.version_id);
  switch (v.source) {
    case 'chat':
      return turn ? `The AI, asked “${short(turn)}”` : 'The AI';
    case 'editor':
      return 'Your edits, sent with a message';
    case 'save':
      return 'Saved in the editor';
    case 'upload':
      return 'Uploaded file';
    case 'append':
      return 'File added at the end';
    case 'template':
      return 'Created from a template';
    case 'revert':
      return 'An undo';
    case 'restore':
      return 'An earlier version, restored';
    default:
      return v.source;
  }
}

/** @param {string} text */
function short(text) {
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

/**
 * @param {{sessionId: string, versionId: string | null, turns: Map<string, string>, onRestored: (doc: any) => void}} props
 */
export function VersionsPanel({ sessionId, versionId, turns, onRestored }) {
  const [versions, setVersions] = useState(/** @type {Version[] | null} */ (null));
  const [more, setMore] = useState(/** @type {string | null} */ (null));
  const [preview, setPreview] = useState(/** @type {{version: Version, html: string} | null} */ (null));
  const list = useAction();
  const open = useAction();
  const restoring = useAction();
  const [restored, setRestored] = useState(/** @type {string | null} */ (null));
  const base = `/v1/documents/${encodeURIComponent(sessionId)}/versions`;

  /** @param {string} path @param {boolean} append */
  const load = (path, append) =>
    list.run(async () => {
      const { body, headers } = await apiWithHeaders('GET', path);
      setVersions((before) => (append && before ? [...before, ...body.versions] : body.versions));
      setMore(nextLink(headers));
    });
  useEffect(() => {
    load(`${base}?limit=50`, false);
  }, [sessionId, versionId]);

  /** @param {Version} v */
  const show = (v) =>
    open.run(async () => {
      const body = await api('GET', `${base}/${encodeURIComponent(v.version_id)}`);
      setPreview({ version: v, html: body.html });
    });

  /** @param {Version} v */
  const restore = (v) =>
    restoring.run(async () => {
      // Only over the document as this page shows it: a change made meanwhile is not undone unseen.
      const body = await api('POST', `${base}/${encodeURIComponent(v.version_id)}/restore`, { base_version_id: versionId });
      setPreview(null);
      setRestored(`The version of ${formatDate(v.created_at)} is the document again, as a new version. Every version stays in this list.`);
      onRestored(body);
    });

  return html`<section class="versions" aria-label="Versions">
    <${Notice} message=${list.error || open.error || restoring.error} />
    <${Notice} message=${restored} kind="success" />
    ${versions === null ? html`<p class="loading">Loading the versions…</p>` : html`<ol class="version-list">
      ${versions.map((v) => html`<li key=${v.version_id} class=${v.version_id === versionId ? 'current' : ''}>
        <div><strong>${formatDate(v.created_at)}</strong>${v.version_id === versionId && html` <span class="badge">Current</span>`}</div>
        <div>${madeBy(v, turns)}</div>
        <div class="meta">${v.section_count} ${v.section_count === 1 ? 'section' : 'sections'}</div>
        <button type="button" class="link" onClick=${() => show(v)} aria-label=${`Preview the version of ${formatDate(v.created_at)}`}>Preview</button>
      </li>`)}
    </ol>`}
    ${more && html`<button type="button" disabled=${list.busy} onClick=${() => load(more, true)}>Show older versions</button>`}
    ${preview && html`<${Preview} preview=${preview} current=${preview.version.version_id === versionId} busy=${restoring.busy}
      onRestore=${() => restore(preview.version)} onClose=${() => setPreview(null)} />`}
    <p class="meta">To go back to an earlier state, preview its version and restore it; the versions after it stay in the list.</p>
  </section>`;
}

/** @param {{preview: {version: Version, html: string}, current: boolean, busy: boolean, onRestore: () => void, onClose: () => void}} props */
function Preview({ preview, current, busy, onRestore, onClose }) {
  const dialog = useRef(/** @type {HTMLDialogElement | null} */ (null));
  const box = useRef(/** @type {HTMLElement | null} */ (null));
  useLayoutEffect(() => {
    if (box.current) mount(box.current, preview.html);
    if (dialog.current && !dialog.current.open) dialog.current.showModal();
  }, [preview]);
  return html`<dialog ref=${dialog} class="preview" aria-label=${`Version of ${formatDate(preview.version.created_at)}`} onClose=${onClose}>
    <div class="dialog-head">
      <h2>Version of ${formatDate(preview.version.created_at)}</h2>
      <button type="button" onClick=${() => dialog.current?.close()} autofocus>Close</button>
    </div>
    <p class="meta">Read-only: ${preview.version.section_count} sections.
      ${!current && html` <button type="button" class="primary" disabled=${busy} onClick=${onRestore}>${busy ? 'Restoring…' : 'Restore this version'}</button>`}</p>
    <article class="document" ref=${box} onClick=${(/** @type {MouseEvent} */ e) => { if (/** @type {Element} */ (e.target).closest('a')) e.preventDefault(); }}></article>
  </dialog>`;
}
