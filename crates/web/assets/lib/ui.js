// @ts-check
// Small accessible building blocks: labelled fields with their error next to them, a form-level
// alert, a busy button, and an inline confirmation.
import { useState } from 'preact/hooks';
import { html } from './html.js';
import { ApiError } from './api.js';

let counter = 0;
/** A stable id for a label's `for`. */
export function useId(prefix = 'f') {
  const [id] = useState(() => `${prefix}-${++counter}`);
  return id;
}

/**
 * A labelled input; `error` is shown under it and announced.
 * @param {{label: string, name: string, type?: string, value: string, onInput: (v: string) => void,
 *   error?: string, hint?: string, required?: boolean, autocomplete?: string, inputmode?: string,
 *   pattern?: string, maxlength?: number, autofocus?: boolean}} props
 */
export function Field(props) {
  const id = useId(props.name);
  const described = [props.hint ? `${id}-hint` : '', props.error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<div class="field">
    <label for=${id}>${props.label}</label>
    ${props.hint && html`<p class="hint" id=${`${id}-hint`}>${props.hint}</p>`}
    <input
      id=${id}
      name=${props.name}
      type=${props.type || 'text'}
      value=${props.value}
      required=${props.required}
      autocomplete=${props.autocomplete}
      inputmode=${props.inputmode}
      pattern=${props.pattern}
      maxlength=${props.maxlength}
      autofocus=${props.autofocus}
      aria-invalid=${props.error ? 'true' : undefined}
      aria-describedby=${described || undefined}
      onInput=${(/** @type {any} */ e) => props.onInput(e.currentTarget.value)}
    />
    ${props.error && html`<p class="field-error" id=${`${id}-error`}>${props.error}</p>`}
  </div>`;
}

/** @param {{message?: string | null, kind?: 'error' | 'success' | 'info'}} props */
export function Notice({ message, kind = 'error' }) {
  if (!message) return null;
  return html`<p class=${`notice notice-${kind}`} role=${kind === 'error' ? 'alert' : 'status'}>${message}</p>`;
}

/**
 * State of a form that calls the API: busy while it runs, its error (a sentence and the
 * problems by field) after.
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [fields, setFields] = useState(/** @type {Record<string, string>} */ ({}));
  /** @param {() => Promise<void>} work */
  const run = async (work) => {
    setBusy(true);
    setError(null);
    setFields({});
    try {
      await work();
    } catch (e) {
      if (e instanceof ApiError) {
        setError(e.message);
        setFields(e.fields);
      } else {
        setError('Something went wrong in this page. Reload it, then try again.');
        console.error(e);
      }
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, fields, run, setError };
}

/**
 * A button that asks once more before doing something that cannot be undone.
 * @param {{label: string, question: string, confirmLabel: string, onConfirm: () => void, busy?: boolean}} props
 */
export function ConfirmButton(props) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return html`<button type="button" class="danger" onClick=${() => setAsking(true)}>${props.label}</button>`;
  }
  return html`<span class="confirm" role="group" aria-label=${props.question}>
    <span>${props.question}</span>
    <button type="button" class="danger" disabled=${props.busy} onClick=${() => { setAsking(false); props.onConfirm(); }}>${props.confirmLabel}</button>
    <button type="button" onClick=${() => setAsking(false)} autofocus>Cancel</button>
  </span>`;
}

/** @param {{value: number, label: string}} props a fraction from 0 to 1 */
export function Progress({ value, label }) {
  const percent = Math.round(Math.max(0, Math.min(1, value)) * 100);
  return html`<div class="progress">
    <progress max="100" value=${percent} aria-label=${label}>${percent}%</progress>
    <span aria-hidden="true">${percent}%</span>
  </div>`;
}
