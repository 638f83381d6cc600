// @ts-check
// The documents (sessions) of the account the app acts for: the list, a new document (empty,
// from a template, or from a file), and deletion.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { actingFor, api, apiWithHeaders, formatDate, nextLink, upload } from '../lib/api.js';
import { Link, documentPath, navigate } from '../lib/router.js';
import { TitleEditor } from '../lib/title.js';
import { ConfirmButton, Field, Notice, Progress, useAction } from '../lib/ui.js';

const ACCEPT = '.pdf,.docx,.rtf,.md,.html,.htm,.txt';

/** A session id from a title: letters, digits, `_ - .` only, with a random tail. */
export function sessionIdFor(/** @type {string} */ title) {
  const slug = title
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .toLowerCase()
    .slice(0, 60);
  const tail = crypto.getRandomValues(new Uint32Array(1))[0].toString(36);
  return `${slug || 'document'}-${tail}`;
}

/** @param {{orgName: string | null}} props the organization acted for, if any */
export function Documents({ orgName }) {
  const [sessions, setSessions] = useState(/** @type {any[] | null} */ (null));
  const [more, setMore] = useState(/** @type {string | null} */ (null));
  const list = useAction();
  const remove = useAction();

  /** @param {string} path @param {boolean} append */
  const load = (path, append) =>
    list.run(async () => {
      const { body, headers } = await apiWithHeaders('GET', path);
      setSessions((before) => (append && before ? [...before, ...body] : body));
      setMore(nextLink(headers));
    });
  useEffect(() => {
    load('/v1/sessions?limit=50', false);
  }, []);

  /** @param {string} id */
  const del = (id) =>
    remove.run(async () => {
      await api('DELETE', `/v1/sessions/${encodeURIComponent(id)}`);
      setSessions((before) => (before || []).filter((s) => s.session_id !== id));
    });

  return html`<section>
    <h1>Documents</h1>
    <${NewDocument} />
    <h2>${orgName ? `Documents of ${orgName}` : 'Your documents'}</h2>
    <${Notice} message=${list.error || remove.error} />
    ${sessions === null ? html`<p class="loading">Loading the documents…</p>` : sessions.length === 0 ? html`<p>No documents yet: create one above.</p>` : html`
      <table class="list documents">
        <thead><tr><th scope="col">Title</th><th scope="col">Updated</th><th scope="col">Sections</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>${sessions.map((s) => html`<tr key=${s.session_id}>
          <td data-label="Title"><${TitleEditor} sessionId=${s.session_id} title=${s.title}
            onRenamed=${(/** @type {string} */ title) => setSessions((before) => (before || []).map((b) => (b.session_id === s.session_id ? { ...b, title } : b)))}>
            <${Link} href=${documentPath(s.session_id, actingFor())}>${s.title || s.session_id}<//>
          <//></td>
          <td data-label="Updated">${formatDate(s.updated_at)}</td>
          <td data-label="Sections">${s.section_count}</td>
          <td><${ConfirmButton} label=${`Delete ${s.title || s.session_id}`} question="Delete this document, its versions and its chat? This cannot be undone." confirmLabel="Delete for ever" onConfirm=${() => del(s.session_id)} /></td>
        </tr>`)}</tbody>
      </table>
      ${more && html`<button type="button" onClick=${() => load(more, true)} disabled=${list.busy}>${list.busy ? 'Loading…' : 'Show more documents'}</button>`}`}
  </section>`;
}

function NewDocument() {
  const [mode, setMode] = useState(/** @type {'empty' | 'template' | 'file'} */ ('file'));
  return html`<div class="new-document">
    <h2>New document</h2>
    <div class="tabs" role="radiogroup" aria-label="How to start">
      ${[['file', 'From a file'], ['empty', 'Empty'], ['template', 'From a template']].map(([value, label]) => html`
        <label class=${mode === value ? 'tab selected' : 'tab'}>
          <input type="radio" name="new-mode" value=${value} checked=${mode === value} onChange=${() => setMode(/** @type {any} */ (value))} />
          ${label}
        </label>`)}
    </div>
    ${mode === 'file' ? html`<${FromFile} />` : mode === 'empty' ? html`<${Empty} />` : html`<${FromTemplate} />`}
  </div>`;
}

function Empty() {
  const [title, setTitle] = useState('');
  const action = useAction();
  /** @param {Event} e */
  const submit = (e) => {
    e.preventDefault();
    const name = title.trim() || 'Untitled';
    action.run(async () => {
      const id = sessionIdFor(name);
      const h1 = document.createElement('h1');
      h1.textContent = name;
      await api('PUT', `/v1/documents/${encodeURIComponent(id)}`, { html: `${h1.outerHTML}<p></p>`, title: name });
      navigate(documentPath(id, actingFor()));
    });
  };
  return html`<form class="inline" onSubmit=${submit} noValidate>
    <${Notice} message=${action.error} />
    <${Field} label="Title" name="title" value=${title} maxlength=${200} onInput=${setTitle} error=${action.fields.html} />
    <button type="submit" class="primary" disabled=${action.busy}>${action.busy ? 'Creating…' : 'Create document'}</button>
  </form>`;
}

function FromTemplate() {
  const [templates, setTemplates] = useState(/** @type {any[] | null} */ (null));
  const [chosen, setChosen] = useState('');
  const [title, setTitle] = useState('');
  const load = useAction();
  const apply = useAction();
  useEffect(() => {
    load.run(async () => {
      const body = await api('GET', '/v1/templates');
      setTemplates(body.templates);
      if (body.templates.length) setChosen(body.templates[0].template_id);
    });
  }, []);
  /** @param {Event} e */
  const submit = (e) => {
    e.preventDefault();
    const template = (templates || []).find((t) => t.template_id === chosen);
    apply.run(async () => {
      const id = sessionIdFor(title.trim() || (template ? template.name : 'document'));
      await api('POST', `/v1/templates/${encodeURIComponent(chosen)}/apply`, { session_id: id });
      navigate(documentPath(id, actingFor()));
    });
  };
  if (load.error) return html`<${Notice} message=${load.error} />`;
  if (!templates) return html`<p class="loading">Loading the templates…</p>`;
  return html`<form class="inline" onSubmit=${submit} noValidate>
    <${Notice} message=${apply.error} />
    <div class="field">
      <label for="template">Template</label>
      <select id="template" value=${chosen} onChange=${(/** @type {any} */ e) => setChosen(e.currentTarget.value)}>
        ${templates.map((t) => html`<option value=${t.template_id}>${t.name}${t.builtin ? '' : ' (yours)'}</option>`)}
      </select>
    </div>
    <${Field} label="Title (optional)" name="title" value=${title} maxlength=${200} onInput=${setTitle} />
    <button type="submit" class="primary" disabled=${apply.busy || !chosen}>${apply.busy ? 'Creating…' : 'Create from template'}</button>
  </form>`;
}

function FromFile() {
  const [file, setFile] = useState(/** @type {File | null} */ (null));
  const [over, setOver] = useState(false);
  const [progress, setProgress] = useState(/** @type {number | null} */ (null));
  const [tracked, setTracked] = useState('review');
  const input = useRef(/** @type {HTMLInputElement | null} */ (null));
  const action = useAction();

  /** @param {File} f */
  const send = (f) => {
    setFile(f);
    setProgress(0);
    action.run(async () => {
      const form = new FormData();
      form.append('session_id', sessionIdFor(f.name.replace(/\.[^.]*$/, '')));
      form.append('file', f, f.name);
      form.append('track_changes', tracked);
      try {
        const body = await upload('/v1/documents/upload', form, setProgress);
        navigate(documentPath(body.session_id, actingFor()));
      } finally {
        setProgress(null);
      }
    });
  };

  /** @param {DragEvent} e */
  const drop = (e) => {
    e.preventDefault();
    setOver(false);
    const f = e.dataTransfer && e.dataTransfer.files[0];
    if (f) send(f);
  };

  return html`<div class="inline">
    <${Notice} message=${action.error && file ? `${file.name}: ${action.fields.file || action.error}` : action.error} />
    <div
      class=${over ? 'dropzone over' : 'dropzone'}
      onDragOver=${(/** @type {DragEvent} */ e) => { e.preventDefault(); setOver(true); }}
      onDragLeave=${() => setOver(false)}
      onDrop=${drop}
    >
      <p>Drop a PDF, Word (.docx), RTF, Markdown, HTML or text file here, or</p>
      <label class="button" for="upload-file">Choose a file</label>
      <input
        id="upload-file"
        ref=${input}
        class="visually-hidden"
        type="file"
        accept=${ACCEPT}
        onChange=${(/** @type {any} */ e) => { const f = e.currentTarget.files[0]; if (f) send(f); e.currentTarget.value = ''; }}
      />
      <p class="hint">Up to 50 MB. Scanned PDFs become text where the scan is clear.</p>
    </div>
    <div class="field">
      <label for="track-changes">Tracked changes in a Word file</label>
      <select id="track-changes" value=${tracked} onChange=${(/** @type {any} */ e) => setTracked(e.currentTarget.value)}>
        <option value="review">Let me review them: each becomes a proposed change to accept or reject</option>
        <option value="accept">Accept them all</option>
        <option value="reject">Reject them all: the document as it was before them</option>
      </select>
    </div>
    ${progress !== null && html`<${Progress} value=${progress} label=${`Uploading ${file ? file.name : 'the file'}`} />`}
    ${progress !== null && progress >= 1 && html`<p role="status">Converting ${file ? file.name : 'the file'}…</p>`}
  </div>`;
}
