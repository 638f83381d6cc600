// @ts-check
// The chat beside the document: the session's history (each turn can be undone), the job that
// runs now (its steps in words, its progress bar, cancel), and the message box with the switch
// between "propose changes for my review" (the default) and "apply changes directly".
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { formatDate } from '../lib/api.js';
import { Notice, Progress } from '../lib/ui.js';
import { FINISHED } from './job.js';

/**
 * @typedef {{message_id: string, role: string, content: string, created_at: string, job_id: string | null,
 *   version_before: string | null, version_after: string | null}} Message
 * @typedef {import('./job.js').RunningJob} RunningJob
 */

const STATUS_WORDS = /** @type {Record<string, string>} */ ({
  pending: 'Waiting to start',
  in_progress: 'Working',
  awaiting_approval: 'Waiting for your review',
  completed: 'Done',
  failed: 'Failed',
  cancelled: 'Cancelled',
});

/**
 * @param {{
 *   messages: Message[] | null, job: RunningJob | null, error: string | null, notice: string | null,
 *   busy: boolean, onSend: (message: string, requireApproval: boolean) => Promise<boolean>,
 *   onCancel: () => void, onRevert: (message: Message) => void, reverting: string | null,
 * }} props
 */
export function ChatPanel({ messages, job, error, notice, busy, onSend, onCancel, onRevert, reverting }) {
  const [text, setText] = useState('');
  const [review, setReview] = useState(true);
  const [confirming, setConfirming] = useState(/** @type {string | null} */ (null));
  const list = useRef(/** @type {HTMLOListElement | null} */ (null));
  useEffect(() => {
    if (list.current) list.current.scrollTop = list.current.scrollHeight;
  }, [messages && messages.length, job && job.steps.length, job && job.status]);

  const running = job && !FINISHED.includes(job.status);
  // Proposed changes wait for the person: nothing is working, so no progress is shown.
  const waiting = job && job.status === 'awaiting_approval';
  /** @param {Event} e */
  const submit = async (e) => {
    e.preventDefault();
    if (!text.trim()) return;
    if (await onSend(text.trim(), review)) setText('');
  };
  /** @param {KeyboardEvent} e */
  const onKeyDown = (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) submit(e);
  };

  return html`<section class="chat" aria-label="Chat with the AI">
    <ol class="messages" ref=${list} aria-live="polite" aria-label="Conversation">
      ${messages === null && html`<li class="loading">Loading the conversation…</li>`}
      ${messages && messages.length === 0 && !job && html`<li class="meta">Ask the AI to change this document: “replace "draft" with "final"”, “shorten section 2”, “what does the contract say about payment?”</li>`}
      ${(messages || []).map((m, i) => html`<li key=${m.message_id} class=${`message ${m.role}${m.role === 'user' && !opensTurn(messages || [], i) ? ' notes' : ''}`}>
        <span class="who">${m.role === 'user' ? (opensTurn(messages || [], i) ? 'You' : 'Your review') : 'AI'}</span>
        <span class="when meta">${formatDate(m.created_at)}</span>
        <p>${m.content}</p>
        ${m.role === 'user' && opensTurn(messages || [], i) && !answeredOnly(m) && html`<div class="turn-actions">${confirming === m.message_id
          ? html`<span class="confirm" role="group" aria-label="Undo this turn?">
              <span>Undo this turn and everything after it? The document goes back to how it was before it.</span>
              <button type="button" class="danger" disabled=${reverting !== null} onClick=${() => { setConfirming(null); onRevert(m); }}>Undo</button>
              <button type="button" onClick=${() => setConfirming(null)}>Keep</button>
            </span>`
          : html`<button type="button" class="link" disabled=${reverting !== null || Boolean(running)} onClick=${() => setConfirming(m.message_id)}>Undo this turn</button>`}</div>`}
      </li>`)}
      ${job && html`<li class="message user pending-turn"><span class="who">You</span><p>${job.message}</p></li>`}
      ${job && html`<li class="message ai job" aria-busy=${running ? 'true' : 'false'}>
        <span class="who">AI</span>
        <span class="meta job-status" id="job-status" tabindex="-1" role="status">${STATUS_WORDS[job.status] || job.status}${job.edits ? ` · ${job.edits}` : ''}</span>
        ${running && !waiting && html`<${Progress} value=${job.progress / 100} label="Progress of the AI's work" />`}
        ${job.connection === 'reconnecting' && html`<p class="notice notice-info connection" role="status">The connection to Redline was lost. Reconnecting…</p>`}
        ${job.connection === 'resumed' && html`<p class="notice notice-success connection" role="status">Reconnected: picking up where it left off.</p>`}
        <ol class="steps">${job.steps.slice(-12).map((s, i) => html`<li key=${i}>${s}</li>`)}</ol>
        ${running && !waiting && job.text && html`<p class="draft-answer">${job.text}</p>`}
        ${waiting && html`<p class="draft-answer">The AI proposes the changes marked in the document. Nothing is applied until you accept it.</p>`}
        ${running && html`<button type="button" onClick=${onCancel}>Cancel</button>`}
      </li>`}
    </ol>
    <${Notice} message=${error} />
    <${Notice} message=${notice} kind="info" />
    <form class="composer" onSubmit=${submit}>
      <label for="chat-message">Message to the AI</label>
      <textarea id="chat-message" rows="3" value=${text} onInput=${(/** @type {any} */ e) => setText(e.currentTarget.value)} onKeyDown=${onKeyDown}
        placeholder="What should change? (Ctrl+Enter sends)" disabled=${Boolean(running)}></textarea>
      <label class="switch"><input type="checkbox" checked=${review} onChange=${(/** @type {any} */ e) => setReview(e.currentTarget.checked)} /> Let me review each change before it is applied</label>
      <div><button type="submit" class="primary" disabled=${busy || Boolean(running) || !text.trim()}>Send</button>
      ${running && html`<span class="meta"> ${waiting
        ? 'The AI is waiting for your review: decide on each proposed change, then Finish.'
        : 'The AI is working on this document.'}</span>`}</div>
    </form>
  </section>`;
}

/**
 * Whether the message at `i` opens a turn: the request, not the reviewer's notes on a round
 * the turn's AI tried again (those share its job).
 * @param {Message[]} messages
 * @param {number} i
 */
export function opensTurn(messages, i) {
  const m = messages[i];
  return m.job_id === null || !messages.slice(0, i).some((e) => e.job_id === m.job_id);
}

/**
 * Whether a finished turn changed nothing (a question, or a request that made no edit): there
 * is nothing of its own to undo.
 * @param {Message} m
 */
function answeredOnly(m) {
  return m.version_after !== null && m.version_after === m.version_before;
}
