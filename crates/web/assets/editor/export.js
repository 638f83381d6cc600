// @ts-check
// Export: the document as DOCX, PDF, HTML, Markdown or plain text, downloaded at once; or
// rendered in the background and sent as a link by e-mail (the way for a document too large to
// download, which the API answers with 413). While changes await review, a DOCX can show them
// as Word's tracked changes (`track_changes`), to review in Word; the file reviewed there comes
// back here and settles the review (docs/api.md, "The Word round trip").
import { useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { ApiError, api, download, upload } from '../lib/api.js';
import { Field, Notice, useAction } from '../lib/ui.js';

export const FORMATS = [
  ['docx', 'Word (DOCX)'],
  ['pdf', 'PDF'],
  ['html', 'Web page (HTML)'],
  ['markdown', 'Markdown'],
  ['txt', 'Plain text'],
];

/** @param {{sessionId: string, hasEmail: boolean, unsaved: boolean, pending: number, onReturned: (body: any) => Promise<void>}} props */
export function ExportPanel({ sessionId, hasEmail, unsaved, pending, onReturned }) {
  const [format, setFormat] = useState('docx');
  const [tracked, setTracked] = useState(true);
  const withChanges = format === 'docx' && pending > 0 && tracked;
  const [email, setEmail] = useState('');
  const [tooLarge, setTooLarge] = useState(false);
  const [sent, setSent] = useState(/** @type {string | null} */ (null));
  const get = useAction();
  const mail = useAction();
  const back = useAction();
  const [settled, setSettled] = useState(/** @type {string | null} */ (null));

  /** The reviewed file, uploaded back into this document. @param {any} e */
  const sendBack = (e) => {
    const file = e.currentTarget.files[0];
    e.currentTarget.value = '';
    if (!file) return;
    back.run(async () => {
      setSettled(null);
      const form = new FormData();
      form.append('session_id', sessionId);
      form.append('file', file, file.name);
      form.append('track_changes', 'review');
      const body = await upload('/v1/documents/upload', form, () => {});
      await onReturned(body);
      const said = (body.warnings || []).find((/** @type {string} */ w) => w.startsWith('This file is the tracked export'));
      setSettled(body.settled_job_id
        ? `${file.name}: the review is settled as decided in the file. ${said ? said.replace(/^This file is the tracked export of job \S+, which it settled: /, 'Changes: ') : ''}`
        : `${file.name} replaced the document: it is not the file exported for this review.`);
    });
  };

  const fetchFile = () =>
    get.run(async () => {
      setTooLarge(false);
      setSent(null);
      try {
        /** @type {Record<string, unknown>} */
        const body = { session_id: sessionId, format };
        if (withChanges) body.track_changes = true;
        const { blob, filename } = await download('POST', '/v1/documents/export', body);
        const url = URL.createObjectURL(blob);
        const a = document.createElement('a');
        a.href = url;
        a.download = filename;
        document.body.append(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(url), 60_000);
      } catch (e) {
        if (e instanceof ApiError && e.status === 413) setTooLarge(true);
        throw e;
      }
    });

  /** @param {Event} e */
  const sendLink = (e) => {
    e.preventDefault();
    mail.run(async () => {
      setSent(null);
      /** @type {Record<string, string>} */
      const body = { session_id: sessionId, format };
      if (email.trim()) body.email = email.trim();
      await api('POST', '/v1/documents/export/email-request', body);
      setSent(`The ${FORMATS.find(([f]) => f === format)?.[1]} file is being made; a link to download it goes to ${email.trim() || 'your e-mail address'} in a few minutes. It works for 7 days.`);
    });
  };

  return html`<section class="export" aria-label="Export">
    ${unsaved && html`<p class="warning">Your unsaved edits are not in the export: save them first.</p>`}
    <fieldset class="formats">
      <legend>Format</legend>
      ${FORMATS.map(([value, label]) => html`<label class="tab ${format === value ? 'selected' : ''}"><input type="radio" name="format" value=${value} checked=${format === value} onChange=${() => setFormat(value)} />${label}</label>`)}
    </fieldset>
    ${format === 'docx' && pending > 0 && html`<label class="switch"><input type="checkbox" name="track_changes" checked=${tracked} onChange=${(/** @type {any} */ e) => setTracked(e.currentTarget.checked)} />
      Show the ${pending} proposed ${pending === 1 ? 'change' : 'changes'} as tracked changes, to accept or reject in Word (each with the AI's explanation as a comment)</label>`}
    ${format === 'docx' && pending > 0 && !tracked && html`<p class="meta">The file has the document as it is now, without the proposed changes.</p>`}
    <button type="button" class="primary" disabled=${get.busy} onClick=${fetchFile}>${get.busy ? 'Preparing the file…' : 'Download'}</button>
    <${Notice} message=${get.error} />
    ${pending > 0 && html`<div class="inline">
      <h3>Reviewed it in Word?</h3>
      <p class="meta">Upload the file you downloaded with the tracked changes: what you accepted there is applied, what you rejected is not, and changes still tracked in it come back to review here.</p>
      <label class="button" for="reviewed-file">${back.busy ? 'Reading the file…' : 'Upload the reviewed file'}</label>
      <input id="reviewed-file" class="visually-hidden" type="file" accept=".docx" disabled=${back.busy} onChange=${sendBack} />
    </div>`}
    <${Notice} message=${back.error} />
    <${Notice} message=${settled} kind="success" />
    ${tooLarge && html`<p class="warning">This document is too large to download here: have a link e-mailed instead (below).</p>`}
    <form class="inline" onSubmit=${sendLink}>
      <h3>Email me a link</h3>
      <p class="meta">The file is made in the background and a download link is e-mailed to you.</p>
      <${Field} label=${hasEmail ? 'Send to (leave empty for your own address)' : 'Send to'} name="email" type="email" value=${email} onInput=${setEmail}
        required=${!hasEmail} error=${mail.fields.email} autocomplete="email" />
      <button type="submit" disabled=${mail.busy}>Email me a link</button>
      <${Notice} message=${mail.error} />
      <${Notice} message=${sent} kind="success" />
    </form>
  </section>`;
}
