// @ts-check
// Export: the document as DOCX, PDF, HTML, Markdown or plain text, downloaded at once; or
// rendered in the background and sent as a link by e-mail (the way for a document too large to
// download, which the API answers with 413). While changes await review, a DOCX can show them
// as Word's tracked changes (`track_changes`), to review in Word.
import { useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { ApiError, api, download } from '../lib/api.js';
import { Field, Notice, useAction } from '../lib/ui.js';

export const FORMATS = [
  ['docx', 'Word (DOCX)'],
  ['pdf', 'PDF'],
  ['html', 'Web page (HTML)'],
  ['markdown', 'Markdown'],
  ['txt', 'Plain text'],
];

/** @param {{sessionId: string, hasEmail: boolean, unsaved: boolean, pending: number}} props */
export function ExportPanel({ sessionId, hasEmail, unsaved, pending }) {
  const [format, setFormat] = useState('docx');
  const [tracked, setTracked] = useState(true);
  const withChanges = format === 'docx' && pending > 0 && tracked;
  const [email, setEmail] = useState('');
  const [tooLarge, setTooLarge] = useState(false);
  const [sent, setSent] = useState(/** @type {string | null} */ (null));
  const get = useAction();
  const mail = useAction();

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
