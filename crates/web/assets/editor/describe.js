// @ts-check
// A job's events as plain words for a person ("Reading section 3", "Searching the attachments
// for “harvest”", "Editing 2 sections"), sections named by their place in the document.

/**
 * @typedef {(chunkId: string) => number | null} Numbering a section's 1-based place, if known
 */

/** "3", "3 and 4", "3, 4 and 7" @param {string[]} items */
export function listing(items) {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** @param {string | null | undefined} id @param {Numbering} place */
export function sectionName(id, place) {
  if (!id) return 'the start';
  const n = place(id);
  return n ? `section ${n}` : 'a new section';
}

/** @param {unknown} text */
function quoted(text) {
  const s = String(text ?? '').trim();
  return `“${s.length > 60 ? `${s.slice(0, 57)}…` : s}”`;
}

/**
 * The words for one event, or null when it says nothing a person needs.
 * @param {{type: string, content: any}} event
 * @param {Numbering} place
 */
export function describe(event, place) {
  const c = event.content || {};
  switch (event.type) {
    case 'status':
      return statusWords(c);
    case 'tool_call':
      return toolWords(c.name, typeof c.arguments === 'object' && c.arguments ? c.arguments : {}, place);
    case 'tool_result':
      return c.ok === false ? `The AI's step failed (${String(c.error || 'no reason given').replace(/\.$/, '')}); it may try another way.` : null;
    case 'change': {
      const what = c.operation === 'create' ? `Adding a section after ${sectionName(c.after_chunk_id, place)}` : c.operation === 'delete' ? `Deleting ${sectionName(c.chunk_id, place)}` : `Editing ${sectionName(c.chunk_id, place)}`;
      return c.proposed ? `${what} (proposed for your review)` : what;
    }
    default:
      return null;
  }
}

/** @param {any} c */
function statusWords(c) {
  const message = String(c.message || '');
  if (/^Asking the model/i.test(message)) return c.round > 1 ? `Thinking (step ${c.round})` : 'Thinking';
  if (/trying again/i.test(message)) {
    const wait = Number(c.wait_ms);
    return wait > 0 ? `The AI model failed; trying again in ${Math.ceil(wait / 1000)} s` : 'The AI model failed; trying again';
  }
  if (/^Waiting for approval/i.test(message)) return 'Waiting for your review';
  // A run that starts again after its server stopped (docs/api.md, "Chat and jobs").
  if (c.supersedes && typeof c.supersedes === 'object') {
    return 'The server working on this request restarted, so the AI is starting it again; the steps above no longer count';
  }
  return message || null;
}

/**
 * @param {string} name
 * @param {any} args
 * @param {Numbering} place
 */
function toolWords(name, args, place) {
  switch (name) {
    case 'read_sections': {
      const ids = Array.isArray(args.chunk_ids) ? args.chunk_ids.map(String) : [];
      const numbers = ids.map((id) => place(id)).filter((n) => n !== null).map(String);
      if (numbers.length === 0) return 'Reading the document';
      return numbers.length === 1 ? `Reading section ${numbers[0]}` : `Reading sections ${listing(numbers)}`;
    }
    case 'search_document':
      return `Searching the document for ${quoted(args.query)}`;
    case 'search_attachments':
      return `Searching the attachments for ${quoted(args.query)}`;
    case 'edit_section':
      return `Editing ${sectionName(args.chunk_id, place)}`;
    case 'create_section':
      return `Writing a new section after ${sectionName(args.after_chunk_id, place)}`;
    case 'delete_section':
      return `Deleting ${sectionName(args.chunk_id, place)}`;
    default:
      return name ? `Using ${name.replace(/_/g, ' ')}` : null;
  }
}

/**
 * A one-line summary of the edits a turn made so far: "Editing 2 sections".
 * @param {{type: string, content: any}[]} events
 */
export function editSummary(events) {
  const ids = new Set();
  for (const e of events) if (e.type === 'change' && e.content) ids.add(e.content.chunk_id);
  if (ids.size === 0) return null;
  return ids.size === 1 ? 'Editing 1 section' : `Editing ${ids.size} sections`;
}
