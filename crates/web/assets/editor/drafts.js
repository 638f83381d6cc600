// @ts-check
// Edits not saved yet, kept in the tab's sessionStorage until they are saved or discarded: they
// survive a reload of the page (and a crash of the tab that the browser restores), and go when
// the tab closes. Never localStorage: a document's words are not left on a shared computer.
import { actingFor } from '../lib/api.js';

const PREFIX = 'redline.draft.';

/**
 * One section's unsaved edit: the HTML it had when the edit began (to tell whether someone else
 * changed it meanwhile) and the edited HTML.
 * @typedef {{original: string, html: string}} SectionDraft
 * @typedef {{base: string | null, sections: Record<string, SectionDraft>}} Draft
 */

/** @param {string} sessionId */
function key(sessionId) {
  return `${PREFIX}${actingFor() || 'me'}.${sessionId}`;
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

/** Forgets every draft of this tab (at sign-out). */
export function clearAllDrafts() {
  for (let i = sessionStorage.length - 1; i >= 0; i--) {
    const k = sessionStorage.key(i);
    if (k && k.startsWith(PREFIX)) sessionStorage.removeItem(k);
  }
}
