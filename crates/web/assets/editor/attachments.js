// @ts-check
// Files attached to the document for the AI to search: upload (with a progress bar), their
// processing as it happens (the list is read again every second while one is processed), and
// removal. The AI's answers name the file they quote.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { api, apiWithHeaders, nextLink, upload } from '../lib/api.js';
import { ConfirmButton, Notice, Progress, useAction } from '../lib/ui.js';

const ACCEPT = '.pdf,.docx,.rtf,.md,.html,.htm,.txt';
const WORKING = ['pending', 'in_progress', 'awaiting_upload'];

const STATUS = /** @type {Record<string, string>} */ ({
  pending: 'Waiting to be read',
  in_progress: 'Being read',
  awaiting_upload: 'Waiting for the file',
  completed: 'Ready',
  failed: 'Could not be read',
  cancelled: 'Stopped',
});

/** @param {number} bytes */
export function size(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** @param {{sessionId: string}} props */
export function AttachmentsPanel({ sessionId }) {
  const [items, setItems] = useState(/** @type {any[] | null} */ (null));
  const [more, setMore] = useState(/** @type {string | null} */ (null));
  const [sent, setSent] = useState(/** @type {number | null} */ (null));
  const [over, setOver] = useState(false);
  const input = useRef(/** @type {HTMLInputElement | null} */ (null));
  const list = useAction();
  const send = useAction();
  const remove = useAction();
  const first = `/v1/attachments?session_id=${encodeURIComponent(sessionId)}&limit=100`;

  const refresh = () =>
    list.run(async () => {
      const { body, headers } = await apiWithHeaders('GET', first);
      setItems(body.attachments);
      setMore(nextLink(headers));
    });
  useEffect(() => {
    refresh();
  }, [sessionId]);
  // While a file is being read, its status is read again every second.
  const working = (items || []).some((a) => WORKING.includes(a.status));
  useEffect(() => {
    if (!working) return undefined;
    const timer = setInterval(async () => {
      try {
        const { body } = await apiWithHeaders('GET', first);
        setItems(body.attachments);
      } catch {
        // The next tick tries again.
      }
    }, 1000);
    return () => clearInterval(timer);
  }, [working]);

  /** @param {File} file */
  const start = (file) =>
    send.run(async () => {
      const form = new FormData();
      form.append('session_id', sessionId);
      form.append('file', file);
      setSent(0);
      try {
        await upload('/v1/attachments/upload', form, setSent);
      } finally {
        setSent(null);
        if (input.current) input.current.value = '';
      }
      await refresh();
    });

  /** @param {string} id */
  const del = (id) =>
    remove.run(async () => {
      await api('DELETE', `/v1/attachments/${encodeURIComponent(id)}`);
      setItems((before) => (before || []).filter((a) => a.attachment_id !== id));
    });

  const loadMore = (/** @type {string} */ path) =>
    list.run(async () => {
      const { body, headers } = await apiWithHeaders('GET', path);
      setItems((before) => [...(before || []), ...body.attachments]);
      setMore(nextLink(headers));
    });

  return html`<section class="attachments" aria-label="Attachments">
    <p class="meta">Files the AI can search and quote while it works on this document (PDF, DOCX, RTF, Markdown, HTML or text, up to 50 MB).</p>
    <div class=${over ? 'dropzone compact over' : 'dropzone compact'}
      onDragOver=${(/** @type {DragEvent} */ e) => { e.preventDefault(); setOver(true); }}
      onDragLeave=${() => setOver(false)}
      onDrop=${(/** @type {DragEvent} */ e) => { e.preventDefault(); setOver(false); const f = e.dataTransfer?.files[0]; if (f) start(f); }}>
      <label class=${`button${send.busy ? ' disabled' : ''}`} for="attachment-file">Attach a file</label>
      <input id="attachment-file" class="visually-hidden" ref=${input} type="file" accept=${ACCEPT} disabled=${send.busy}
        onChange=${(/** @type {any} */ e) => e.currentTarget.files?.[0] && start(e.currentTarget.files[0])} />
      <span class="meta"> or drop it here</span>
    </div>
    ${sent !== null && html`<${Progress} value=${sent} label="Upload progress" />`}
    <${Notice} message=${send.error || list.error || remove.error} />
    ${items === null ? html`<p class="loading">Loading the attachments…</p>` : items.length === 0 ? html`<p>No attachments yet.</p>` : html`<ul class="attachment-list">
      ${items.map((a) => html`<li key=${a.attachment_id}>
        <div><strong>${a.filename}</strong> <span class="meta">${size(a.file_size)}</span></div>
        <div class=${`status status-${a.status}`} role="status">${a.status === 'completed' ? 'Ready: the AI can search and quote it' : STATUS[a.status] || a.status}</div>
        ${WORKING.includes(a.status) && html`<${Progress} value=${(a.progress || 0) / 100} label=${`Reading ${a.filename}`} />`}
        ${a.error && html`<p class="field-error">${a.error}</p>`}
        <${ConfirmButton} label=${`Remove ${a.filename}`} question="Remove this file? The AI will no longer find it." confirmLabel="Remove" busy=${remove.busy} onConfirm=${() => del(a.attachment_id)} />
      </li>`)}
    </ul>`}
    ${more && html`<button type="button" onClick=${() => loadMore(more)}>Show more attachments</button>`}
  </section>`;
}
