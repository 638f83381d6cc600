// @ts-check
// The document's versions, newest first, each with its time, what made it (an upload, a save
// in the editor, a turn of the AI — named by the message that asked for it, and whether the
// reviewer corrected it — an undo or a restore), a read-only preview, its comparison with the
// current version as a word-level redline, and restoring one as a new version.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { api, apiWithHeaders, formatDate, nextLink } from '../lib/api.js';
import { mount, splitSections } from '../lib/sections.js';
import { redline } from '../lib/redline.js';
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
    case 'review':
      return turn ? `The AI, asked “${short(turn)}”, corrected in review` : 'The AI, corrected in review';
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
  const [preview, setPreview] = useState(/** @type {{version: Version, html: string, currentHtml?: string} | null} */ (null));
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
      const [body, current] = await Promise.all([
        api('GET', `${base}/${encodeURIComponent(v.version_id)}`),
        versionId && versionId !== v.version_id ? api('GET', `${base}/${encodeURIComponent(versionId)}`) : null,
      ]);
      setPreview({ version: v, html: body.html, currentHtml: current ? current.html : undefined });
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

/**
 * What changed from `older` to `newer`, as one redline: each section of the newer version
 * marked against the same section (by its id) of the older, and the sections the newer one no
 * longer has struck through where they stood; two versions without a section id in common are
 * marked as one text.
 * @param {string} older @param {string} newer
 * @returns {{html: string, inserted: number, deleted: number}}
 */
export function compareVersions(older, newer) {
  const before = splitSections(older);
  const after = splitSections(newer);
  // A document saved whole from outside the editor gets new section ids: with none in common,
  // the two are compared as one text.
  if (!after.some((s) => before.some((b) => b.id === s.id))) return redline(older, newer);
  const kept = new Set(after.map((s) => s.id));
  const byId = new Map(before.map((s) => [s.id, s.html]));
  const parts = [];
  let inserted = 0;
  let deleted = 0;
  /** @param {string} oldHtml @param {string} newHtml */
  const add = (oldHtml, newHtml) => {
    const marked = redline(oldHtml, newHtml);
    parts.push(marked.html);
    inserted += marked.inserted;
    deleted += marked.deleted;
  };
  let i = 0;
  for (const section of after) {
    if (byId.has(section.id)) {
      // The older sections gone from the newer one, up to this one, were deleted here.
      for (; i < before.length && before[i].id !== section.id; i++) if (!kept.has(before[i].id)) add(before[i].html, '');
      i++;
    }
    add(byId.get(section.id) || '', section.html);
  }
  for (; i < before.length; i++) if (!kept.has(before[i].id)) add(before[i].html, '');
  return { html: parts.join('\n'), inserted, deleted };
}

/** @param {number} n @param {string} one */
function count(n, one) {
  return `${n} ${n === 1 ? one : `${one}s`}`;
}

/** @param {{preview: {version: Version, html: string, currentHtml?: string}, current: boolean, busy: boolean, onRestore: () => void, onClose: () => void}} props */
function Preview({ preview, current, busy, onRestore, onClose }) {
  const dialog = useRef(/** @type {HTMLDialogElement | null} */ (null));
  const box = useRef(/** @type {HTMLElement | null} */ (null));
  const [comparing, setComparing] = useState(false);
  const compared = useMemo(
    () => (comparing && preview.currentHtml !== undefined ? compareVersions(preview.html, preview.currentHtml) : null),
    [comparing, preview],
  );
  useLayoutEffect(() => {
    if (box.current) mount(box.current, compared ? compared.html : preview.html);
    if (dialog.current && !dialog.current.open) dialog.current.showModal();
  }, [preview, compared]);
  return html`<dialog ref=${dialog} class="preview" aria-label=${`Version of ${formatDate(preview.version.created_at)}`} onClose=${onClose}>
    <div class="dialog-head">
      <h2>Version of ${formatDate(preview.version.created_at)}</h2>
      <button type="button" onClick=${() => dialog.current?.close()} autofocus>Close</button>
    </div>
    <p class="meta">Read-only: ${preview.version.section_count} sections.
      ${preview.currentHtml !== undefined && html` <button type="button" aria-pressed=${comparing} onClick=${() => setComparing(!comparing)}>Compare with the current version</button>`}
      ${!current && html` <button type="button" class="primary" disabled=${busy} onClick=${onRestore}>${busy ? 'Restoring…' : 'Restore this version'}</button>`}</p>
    ${compared && html`<p role="status">From this version to the current one: ${compared.inserted === 0 && compared.deleted === 0
      ? 'no change in words.'
      : `${count(compared.inserted, 'word')} in, ${count(compared.deleted, 'word')} out, marked below.`}</p>`}
    <article class="document" ref=${box} onClick=${(/** @type {MouseEvent} */ e) => { if (/** @type {Element} */ (e.target).closest('a')) e.preventDefault(); }}></article>
  </dialog>`;
}
