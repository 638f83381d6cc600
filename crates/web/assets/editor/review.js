// @ts-check
// The review of a job's proposed changes: the bar above the document (counts, previous/next,
// accept all, reject all, finish), the keys (J/K or N/P to move, A to accept, R to reject),
// and what the approval sends: accepted ids, the reviewer's corrections of accepted changes,
// rejected ids, and the reviewer's notes as one feedback text for the AI's next try.
import { useEffect } from 'preact/hooks';
import { html } from '../lib/html.js';
import { Notice } from '../lib/ui.js';

/** @typedef {import('./document.js').Review} Review @typedef {import('./document.js').Change} Change */

/**
 * The body of `POST /v1/chat/{session_id}/approve` for the review as decided: what is not
 * accepted is rejected; notes become the feedback.
 * @param {Review} review
 * @param {(chunkId: string) => number | null} place
 */
export function approval(review, place) {
  const approve = review.changes.filter((c) => review.decisions[c.change_id] === 'accept').map((c) => c.change_id);
  const reject = review.changes.filter((c) => review.decisions[c.change_id] !== 'accept').map((c) => c.change_id);
  const notes = review.changes
    .filter((c) => review.decisions[c.change_id] === 'reject' && review.notes[c.change_id])
    .map((c) => `${where(c, place)}: ${review.notes[c.change_id]}`);
  /** @type {{job_id: string, approve: string[], reject: string[], edits?: Record<string, string>, feedback?: string}} */
  const body = { job_id: review.jobId, approve, reject };
  /** @type {Record<string, string>} */
  const edits = {};
  for (const id of approve) if (review.corrections[id]) edits[id] = review.corrections[id];
  if (Object.keys(edits).length > 0) body.edits = edits;
  if (notes.length > 0) body.feedback = notes.join('\n');
  return body;
}

/** @param {Change} c @param {(chunkId: string) => number | null} place */
function where(c, place) {
  if (c.operation === 'create') {
    const n = c.after_chunk_id ? place(c.after_chunk_id) : null;
    return n ? `On the new section after section ${n}` : 'On the new section';
  }
  const n = place(c.chunk_id);
  const what = c.operation === 'delete' ? 'deletion of' : 'change to';
  return n ? `On the ${what} section ${n}` : `On the ${what} section ${c.chunk_id}`;
}

/**
 * The change ids a 409 of the approval names as stale (its detail lists them).
 * @param {string} detail
 * @param {Change[]} changes
 */
export function staleIn(detail, changes) {
  return changes.map((c) => c.change_id).filter((id) => detail.includes(id));
}

/**
 * @param {{review: Review, order: Change[], busy: boolean, error: string | null,
 *   onMove: (id: string) => void, onAll: (decision: 'accept' | 'reject') => void, onFinish: () => void}} props
 */
export function ReviewBar({ review, order, busy, error, onMove, onAll, onFinish }) {
  const accepted = order.filter((c) => review.decisions[c.change_id] === 'accept').length;
  const rejected = order.filter((c) => review.decisions[c.change_id] === 'reject').length;
  const open = order.length - accepted - rejected;
  const at = order.findIndex((c) => c.change_id === review.current);
  const move = (/** @type {number} */ step) => {
    if (order.length === 0) return;
    const next = order[(Math.max(at, 0) + step + order.length) % order.length];
    onMove(next.change_id);
  };
  const notes = order.some((c) => review.decisions[c.change_id] === 'reject' && review.notes[c.change_id]);
  const finish = notes ? 'Send my decisions and notes' : open > 0 ? `Finish: apply ${accepted}, reject ${rejected + open}` : `Finish: apply ${accepted}, reject ${rejected}`;
  return html`<div class="review-bar" role="region" aria-label="Review of the AI's changes">
    <p class="review-summary" role="status"><strong>The AI proposes ${order.length} ${order.length === 1 ? 'change' : 'changes'}.</strong>
      ${' '}${accepted} accepted · ${rejected} rejected · ${open} to decide${open > 0 && accepted + rejected > 0 ? ' (finishing rejects them)' : ''}</p>
    <div class="review-actions">
      <button type="button" onClick=${() => move(-1)} aria-keyshortcuts="K" title="Previous change (K)">Previous</button>
      <button type="button" onClick=${() => move(1)} aria-keyshortcuts="J" title="Next change (J)">Next</button>
      <button type="button" class="accept" disabled=${busy} onClick=${() => onAll('accept')}>Accept all</button>
      <button type="button" class="reject" disabled=${busy} onClick=${() => onAll('reject')}>Reject all</button>
      <button type="button" class="primary" id="review-finish" disabled=${busy || accepted + rejected === 0} onClick=${onFinish}>${busy ? 'Sending…' : finish}</button>
    </div>
    <p class="meta keys">Keys: J / K next and previous, A accept, R reject.</p>
    <${Notice} message=${error} />
  </div>`;
}

/**
 * J/N next, K/P previous, A accept, R reject — when the focus is not in a field.
 * @param {boolean} active
 * @param {{next: () => void, previous: () => void, accept: () => void, reject: () => void}} act
 */
export function useReviewKeys(active, act) {
  useEffect(() => {
    if (!active) return undefined;
    /** @param {KeyboardEvent} e */
    const onKey = (e) => {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const t = /** @type {HTMLElement | null} */ (e.target);
      if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
      const key = e.key.toLowerCase();
      const run = key === 'j' || key === 'n' ? act.next : key === 'k' || key === 'p' ? act.previous : key === 'a' ? act.accept : key === 'r' ? act.reject : null;
      if (run) {
        e.preventDefault();
        run();
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [active, act]);
}
