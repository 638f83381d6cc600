// @ts-check
// Edits not saved yet, and review decisions not sent yet, kept in the tab's sessionStorage
// until they are saved, sent or discarded: they survive a reload of the page (and a crash of
// the tab that the browser restores), and go when the tab closes. Never localStorage: a
// document's words are not left on a shared computer.
import { actingFor } from '../lib/api.js';

const PREFIX = 'redline.draft.';
const REVIEW_PREFIX = 'redline.review.';

/**
 * One section's unsaved edit: the HTML it had when the edit began (to tell whether someone else
 * changed it meanwhile) and the edited HTML.
 * @typedef {{original: string, html: string}} SectionDraft
 * @typedef {{base: string | null, sections: Record<string, SectionDraft>}} Draft
 */

/** @param {string} sessionId @param {string} [prefix] */
function key(sessionId, prefix = PREFIX) {
  return `${prefix}${actingFor() || 'me'}.${sessionId}`;
}

/** @param {string} sessionId @returns {Draft | null} */
export function loadDraft(sessionId) {
  try {
    const raw = sessionStorage.getItem(key(sessionId));
    if (!raw) return null;
    const draft = JSON.parse(raw);
    if (!draft || typeof draft.sections !== 'object' || Object.keys(draft.sections).length === 0) return null;
    return draft;
  } catch {
    return null;
  }
}

/** @param {string} sessionId @param {Draft | null} draft */
export function storeDraft(sessionId, draft) {
  try {
    if (!draft || Object.keys(draft.sections).length === 0) sessionStorage.removeItem(key(sessionId));
    else sessionStorage.setItem(key(sessionId), JSON.stringify(draft));
  } catch {
    // A full storage keeps the edit in the page only; the leave warning still guards it.
  }
}

/**
 * A review's decisions, notes and corrections not sent yet, for its job.
 * @typedef {{jobId: string, decisions: Record<string, 'accept' | 'reject'>, notes: Record<string, string>,
 *   corrections: Record<string, string>}} ReviewDraft
 */

/**
 * The decisions kept for this job's review, only of the changes it proposes now (a new round
 * after notes proposes other changes).
 * @param {string} sessionId @param {string} jobId @param {string[]} changeIds
 * @returns {{decisions: Record<string, 'accept' | 'reject'>, notes: Record<string, string>, corrections: Record<string, string>}}
 */
export function loadDecisions(sessionId, jobId, changeIds) {
  /** @type {{decisions: Record<string, 'accept' | 'reject'>, notes: Record<string, string>, corrections: Record<string, string>}} */
  const kept = { decisions: {}, notes: {}, corrections: {} };
  try {
    const raw = sessionStorage.getItem(key(sessionId, REVIEW_PREFIX));
    const draft = raw ? JSON.parse(raw) : null;
    if (!draft || draft.jobId !== jobId) return kept;
    for (const id of changeIds) {
      if (draft.decisions?.[id] === 'accept' || draft.decisions?.[id] === 'reject') kept.decisions[id] = draft.decisions[id];
      if (typeof draft.notes?.[id] === 'string') kept.notes[id] = draft.notes[id];
      if (typeof draft.corrections?.[id] === 'string') kept.corrections[id] = draft.corrections[id];
    }
  } catch {
    // Unreadable: the review starts undecided.
  }
  return kept;
}

/** @param {string} sessionId @param {ReviewDraft | null} review */
export function storeDecisions(sessionId, review) {
  try {
    if (!review || Object.keys(review.decisions).length === 0) sessionStorage.removeItem(key(sessionId, REVIEW_PREFIX));
    else sessionStorage.setItem(key(sessionId, REVIEW_PREFIX), JSON.stringify({ jobId: review.jobId, decisions: review.decisions, notes: review.notes, corrections: review.corrections }));
  } catch {
    // A full storage keeps the decisions in the page only.
  }
}

/** Forgets every draft and review of this tab (at sign-out). */
export function clearAllDrafts() {
  for (let i = sessionStorage.length - 1; i >= 0; i--) {
    const k = sessionStorage.key(i);
    if (k && (k.startsWith(PREFIX) || k.startsWith(REVIEW_PREFIX))) sessionStorage.removeItem(k);
  }
}
