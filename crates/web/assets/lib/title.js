// @ts-check
// A document's title where people see it (the list, the editor's heading), with Rename
// beside it: the name is changed in place (`PATCH /v1/sessions/{id}`), Enter saves, Escape
// puts the name back, and the focus returns to Rename.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';
import { api } from './api.js';
import { useAction, useId } from './ui.js';

/** Most characters a title keeps (docs/api.md). */
export const TITLE_MAX = 200;

/**
 * @param {{sessionId: string, title: string | null, heading?: boolean, children?: any,
 *   onRenamed: (title: string) => void}} props `heading` shows the title as the page's `h1`;
 *   `children` shows it otherwise (a link in the list).
 */
export function TitleEditor({ sessionId, title, heading = false, children, onRenamed }) {
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState(title || '');
  const action = useAction();
  const id = useId('title');
  const input = useRef(/** @type {HTMLInputElement | null} */ (null));
  const button = useRef(/** @type {HTMLButtonElement | null} */ (null));
  const back = useRef(false);
  const shown = title || sessionId;

  useEffect(() => {
    if (editing) input.current?.select();
    else if (back.current) {
      back.current = false;
      button.current?.focus();
    }
  }, [editing]);

  const close = () => {
    back.current = true;
    action.setError(null);
    setEditing(false);
  };
  const save = (/** @type {Event} */ e) => {
    e.preventDefault();
    const name = value.replace(/\s+/g, ' ').trim();
    if (!name) {
      action.setError('A document needs a name: type at least one letter or digit.');
      return;
    }
    if (name === title) {
      close();
      return;
    }
    action.run(async () => {
      const body = await api('PATCH', `/v1/sessions/${encodeURIComponent(sessionId)}`, { title: name });
      onRenamed(body.title);
      close();
    });
  };

  if (editing) {
    const error = action.fields.title || action.error;
    return html`<form class="title-form" onSubmit=${save} onKeyDown=${(/** @type {KeyboardEvent} */ e) => e.key === 'Escape' && close()}>
      <label for=${id} class="visually-hidden">New name of ${shown}</label>
      <input id=${id} ref=${input} value=${value} maxlength=${TITLE_MAX} aria-invalid=${error ? 'true' : undefined}
        aria-describedby=${error ? `${id}-error` : undefined} onInput=${(/** @type {any} */ e) => setValue(e.currentTarget.value)} />
      <button type="submit" class="primary" disabled=${action.busy}>${action.busy ? 'Saving…' : 'Save name'}</button>
      <button type="button" onClick=${close}>Cancel</button>
      ${error && html`<p class="field-error" id=${`${id}-error`} role="alert">${error}</p>`}
    </form>`;
  }
  const open = () => {
    setValue(title || '');
    setEditing(true);
  };
  const rename = html`<button type="button" class="rename" ref=${button} aria-label=${`Rename ${shown}`} onClick=${open}>Rename</button>`;
  return heading
    ? html`<div class="title-row"><h1>${shown}</h1>${rename}</div>`
    : html`<span class="title-row">${children}${rename}</span>`;
}
