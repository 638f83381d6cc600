// @ts-check
// The document column of the editor: every section in order, each shown as it is, being edited
// in place, or replaced by the AI's proposed change to it as a redline; proposed new sections
// in the place they would go. Sections are mounted a screenful first, the rest in the frames
// after, and the browser lays out only those on screen (`content-visibility: auto`).
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { editable, mount, serialize } from '../lib/sections.js';
import { redline } from '../lib/redline.js';
import { paste } from './pictures.js';

/**
 * @typedef {import('../lib/sections.js').Section} Section
 * @typedef {import('./drafts.js').SectionDraft} SectionDraft
 * @typedef {{change_id: string, operation: string, chunk_id: string, old_html: string | null,
 *   new_html: string | null, ai_explanation: string | null, after_chunk_id: string | null}} Change
 * @typedef {{jobId: string, changes: Change[], decisions: Record<string, 'accept' | 'reject'>,
 *   notes: Record<string, string>, corrections: Record<string, string>, stale: string[], current: string | null}} Review
 * @typedef {{
 *   sections: Section[],
 *   drafts: Record<string, SectionDraft>,
 *   open: string[],
 *   review: Review | null,
 *   marks?: Map<string, Change> | null,
 *   busy: boolean,
 *   onOpen: (id: string) => void,
 *   onDraft: (id: string, html: string) => void,
 *   onSave: () => void,
 *   onDiscard: (id: string) => void,
 *   onPicture: (picture: Blob) => Promise<string>,
 *   onDecide: (id: string, decision: 'accept' | 'reject' | null, note?: string) => void,
 *   onLink: (href: string) => void,
 * }} PaneProps
 */

/** Sections mounted in the first frame; the rest follow in steps of STEP per frame. */
const FIRST = 60;
const STEP = 250;

/** The changes of a review in document order: `[change, place]` where it is shown. @param {Section[]} sections @param {Change[]} changes */
export function reviewOrder(sections, changes) {
  const at = new Map(sections.map((s, i) => [s.id, i]));
  /** @param {Change} c */
  const position = (c) => {
    if (c.operation === 'create') return c.after_chunk_id == null ? -0.5 : (at.get(c.after_chunk_id) ?? sections.length) + 0.5;
    return at.get(c.chunk_id) ?? sections.length + 1;
  };
  return changes.map((c, i) => ({ c, p: position(c), i })).sort((a, b) => a.p - b.p || a.i - b.i).map((x) => x.c);
}

/** @param {PaneProps} props */
export function DocumentPane(props) {
  const { sections, review } = props;
  const [shown, setShown] = useState(FIRST);
  useEffect(() => {
    if (shown >= sections.length) return undefined;
    const frame = requestAnimationFrame(() => setShown((n) => n + STEP));
    return () => cancelAnimationFrame(frame);
  }, [shown, sections.length]);

  // User Timing marks for the benchmarks (crates/web/bench/editor.mjs): the first sections on
  // screen, and the redlines of a review on screen (effects run after the browser paints).
  const shownOnce = useRef(false);
  useEffect(() => {
    if (!shownOnce.current && sections.length > 0) {
      shownOnce.current = true;
      performance.mark('redline:document-shown');
    }
  }, [sections]);
  useEffect(() => {
    if (review) performance.mark('redline:redlines-shown');
  }, [review && review.changes]);

  const number = useMemo(() => new Map(sections.map((s, i) => [s.id, i + 1])), [sections]);
  const byChunk = useMemo(() => {
    /** @type {Map<string, Change>} */
    const edits = new Map();
    /** @type {Map<string | null, Change[]>} */
    const creates = new Map();
    /** @type {Change[]} */
    const elsewhere = [];
    for (const c of review ? review.changes : []) {
      if (c.operation === 'create') {
        const anchor = c.after_chunk_id ?? null;
        if (anchor !== null && !number.has(anchor) && !review?.changes.some((o) => o.operation === 'create' && o.chunk_id === anchor)) elsewhere.push(c);
        else creates.set(anchor, [...(creates.get(anchor) || []), c]);
      } else if (number.has(c.chunk_id)) edits.set(c.chunk_id, c);
      else elsewhere.push(c);
    }
    return { edits, creates, elsewhere };
  }, [review && review.changes, number]);

  /** @param {MouseEvent} e */
  const onClick = (e) => {
    const target = /** @type {Element | null} */ (e.target);
    const link = target && target.closest ? target.closest('a[href]') : null;
    if (!link) return;
    e.preventDefault();
    // A link in a section being edited only places the caret.
    if (link.closest('[contenteditable="true"]')) return;
    props.onLink(link.getAttribute('href') || '');
  };

  /** @param {string | null} anchor */
  const createsAfter = (anchor) =>
    (byChunk.creates.get(anchor) || []).flatMap((c) => [
      html`<${ChangeView} key=${c.change_id} change=${c} label=${anchor === null ? 'Proposed new section at the start' : `Proposed new section after section ${number.get(anchor) ?? ''}`.trim()} ...${changeProps(props, c)} />`,
      ...createsAfter(c.chunk_id),
    ]);

  return html`<article class="document editor-document" aria-label="Document" onClick=${onClick}>
    ${sections.length === 0 && !review && html`<p class="empty-document">This document is empty. Ask the AI to write something, or upload a file from the Documents page.</p>`}
    ${createsAfter(null)}
    ${sections.slice(0, shown).map((s) => {
      const n = number.get(s.id) || 0;
      const change = byChunk.edits.get(s.id);
      const mark = !change && props.marks ? props.marks.get(s.id) : undefined;
      return html`${change
        ? html`<${ChangeView} key=${change.change_id} change=${change} label=${`${change.operation === 'delete' ? 'Proposed deletion of' : 'Proposed edit to'} section ${n}`} ...${changeProps(props, change)} />`
        : mark && !props.open.includes(s.id)
        ? html`<${AppliedView} key=${`applied-${mark.change_id}`} change=${mark} number=${n} onOpen=${props.onOpen} />`
        : html`<${SectionView} key=${s.id} section=${s} number=${n} editing=${props.open.includes(s.id)} draft=${props.drafts[s.id]} busy=${props.busy}
            onOpen=${props.onOpen} onDraft=${props.onDraft} onSave=${props.onSave} onDiscard=${props.onDiscard} onPicture=${props.onPicture} />`}
        ${createsAfter(s.id)}`;
    })}
    ${shown < sections.length && html`<p class="loading">Loading sections ${shown + 1}–${sections.length}…</p>`}
    ${byChunk.elsewhere.map((c) => html`<${ChangeView} key=${c.change_id} change=${c} label="Proposed change to a section not in this view" ...${changeProps(props, c)} />`)}
  </article>`;
}

/** @param {PaneProps} props @param {Change} c */
function changeProps(props, c) {
  const review = /** @type {Review} */ (props.review);
  return {
    decision: review.decisions[c.change_id] || null,
    note: review.notes[c.change_id] || '',
    correction: review.corrections[c.change_id] || null,
    stale: review.stale.includes(c.change_id),
    current: review.current === c.change_id,
    busy: props.busy,
    onDecide: props.onDecide,
  };
}

/**
 * @param {{section: Section, number: number, editing: boolean, draft?: SectionDraft, busy: boolean,
 *   onOpen: (id: string) => void, onDraft: (id: string, html: string) => void, onSave: () => void,
 *   onDiscard: (id: string) => void, onPicture: (picture: Blob) => Promise<string>}} props
 */
function SectionView({ section, number, editing, draft, busy, onOpen, onDraft, onSave, onDiscard, onPicture }) {
  const box = useRef(/** @type {HTMLDivElement | null} */ (null));
  const [told, setTold] = useState(/** @type {string | null} */ (null));
  // Mounted again only when the section's stored HTML changes or editing starts or stops: while
  // editing, the DOM is the truth and the draft follows it.
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    mount(el, editing && draft ? draft.html : section.html);
    const target = /** @type {HTMLElement | null} */ (el.firstElementChild);
    if (editing && target) {
      target.setAttribute('contenteditable', 'true');
      target.setAttribute('role', 'textbox');
      target.setAttribute('aria-multiline', 'true');
      target.setAttribute('aria-label', `Section ${number}`);
      target.focus();
    }
  }, [section.html, editing]);

  if (!editing) {
    // The number review cards and the AI name a section by, in the margin. The keys pair the
    // body with the body of the editing view below: unkeyed, Preact reuses the body's element
    // (and the text `mount` put in it) for the toolbar when Edit opens the section.
    return html`<div class="section" data-section=${section.id}>
      <span key="number" class="section-number" aria-hidden="true" title=${`Section ${number}`}>${number}</span>
      <div key="body" class="section-body" ref=${box}></div>
      ${editable(section.id) && html`<button key="edit" type="button" class="section-edit" id=${`edit-${section.id}`} aria-label=${`Edit section ${number}`} title="Edit this section" onClick=${() => onOpen(section.id)}>Edit</button>`}
    </div>`;
  }

  const onInput = () => {
    const target = box.current && box.current.firstElementChild;
    if (target) onDraft(section.id, serialize(target));
  };
  /** @param {KeyboardEvent} e */
  const onKeyDown = (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 's') {
      e.preventDefault();
      onSave();
      return;
    }
    // A paragraph or heading stays one section: Enter breaks the line inside it.
    const target = box.current && box.current.firstElementChild;
    if (e.key === 'Enter' && !e.shiftKey && target && /^(P|H[1-6]|BLOCKQUOTE|PRE)$/.test(target.tagName)) {
      e.preventDefault();
      document.execCommand('insertLineBreak');
    }
  };
  /** @param {string} command */
  const format = (command) => {
    document.execCommand(command);
    onInput();
  };
  const keep = (/** @type {MouseEvent} */ e) => e.preventDefault();
  /** @param {ClipboardEvent} e */
  const onPaste = (e) => {
    const pasting = paste(e, onPicture);
    if (!pasting) return;
    setTold(null);
    pasting.then((message) => {
      setTold(message);
      onInput();
    });
  };
  return html`<div class="section editing" data-section=${section.id}>
    <div key="toolbar" class="section-toolbar" role="toolbar" aria-label=${`Formatting of section ${number}`}>
      <button type="button" onMouseDown=${keep} onClick=${() => format('bold')} title="Bold (Ctrl+B)"><b>B</b><span class="visually-hidden"> Bold</span></button>
      <button type="button" onMouseDown=${keep} onClick=${() => format('italic')} title="Italic (Ctrl+I)"><i>I</i><span class="visually-hidden"> Italic</span></button>
      <button type="button" onMouseDown=${keep} onClick=${() => format('underline')} title="Underline (Ctrl+U)"><u>U</u><span class="visually-hidden"> Underline</span></button>
      <span class="grow"></span>
      ${draft && html`<span class="unsaved" role="status">Unsaved</span>`}
      <button type="button" class="primary" disabled=${busy} onClick=${onSave} title="Save (Ctrl+S)">Save</button>
      <button type="button" onClick=${() => onDiscard(section.id)}>${draft ? 'Discard my edit' : 'Close'}</button>
    </div>
    ${told && html`<p key="told" class="notice notice-info" role="status">${told}</p>`}
    <div key="body" class="section-body" ref=${box} onInput=${onInput} onKeyDown=${onKeyDown} onPaste=${onPaste}></div>
  </div>`;
}

/**
 * @param {{change: Change, label: string, decision: 'accept' | 'reject' | null, note: string, correction: string | null,
 *   stale: boolean, current: boolean, busy: boolean,
 *   onDecide: (id: string, d: 'accept' | 'reject' | null, note?: string, correction?: string) => void}} props
 */
function ChangeView({ change, label, decision, note, correction, stale, current, busy, onDecide }) {
  const box = useRef(/** @type {HTMLDivElement | null} */ (null));
  const root = useRef(/** @type {HTMLDivElement | null} */ (null));
  const [writing, setWriting] = useState(false);
  const [correcting, setCorrecting] = useState(false);
  const [text, setText] = useState(note);
  // The redline shows what accepting applies: the reviewer's corrected text when there is one.
  const marked = useMemo(() => {
    const before = change.operation === 'create' ? '' : change.old_html || '';
    const after = change.operation === 'delete' ? '' : correction || change.new_html || '';
    return redline(before, after);
  }, [change.change_id, correction]);
  useLayoutEffect(() => {
    if (box.current) mount(box.current, marked.html);
  }, [marked]);
  const back = () => requestAnimationFrame(() => root.current?.focus({ preventScroll: true }));
  useEffect(() => {
    if (current && root.current && !root.current.contains(document.activeElement)) {
      root.current.focus({ preventScroll: true });
      root.current.scrollIntoView({ block: 'center' });
    }
  }, [current]);

  const kind = change.operation === 'create' ? 'create' : change.operation === 'delete' ? 'delete' : 'edit';
  const counts = kind === 'edit' ? `${marked.inserted} ${marked.inserted === 1 ? 'word' : 'words'} in, ${marked.deleted} out` : kind === 'create' ? 'a new section' : 'the whole section goes';
  const state = decision === 'accept' ? (correction ? 'Accepted with your corrections' : 'Accepted') : decision === 'reject' ? (note ? 'Rejected with a note' : 'Rejected') : null;
  return html`<div ref=${root} id=${`change-${change.change_id}`} class=${`change change-${kind}${decision ? ` decided-${decision}` : ''}${current ? ' current' : ''}${stale ? ' stale' : ''}`}
      tabindex="-1" role="group" aria-label=${label} data-change=${change.change_id}>
    <div class="change-head">
      <strong>${label}</strong>
      <span class="meta">${counts}</span>
      ${state && html`<span class=${`badge badge-${decision}`}>${state}</span>`}
    </div>
    ${stale && html`<p class="warning">This change no longer fits: the section changed after the AI proposed it. Reject it, or reject it with a note so the AI tries again.</p>`}
    <div class="redline" ref=${box}></div>
    ${change.ai_explanation && html`<p class="explanation"><span class="meta">The AI’s reason: </span>${change.ai_explanation}</p>`}
    ${decision === 'reject' && note && !writing && html`<p class="explanation"><span class="meta">Your note: </span>${note}</p>`}
    ${correcting
      ? html`<${Correction} change=${change} start=${correction || change.new_html || ''}
          onAccept=${(/** @type {string} */ corrected) => {
            setCorrecting(false);
            // Unchanged text is a plain accept.
            onDecide(change.change_id, 'accept', undefined, corrected === change.new_html ? undefined : corrected);
            back();
          }}
          onCancel=${() => {
            setCorrecting(false);
            back();
          }} />`
      : writing
      ? html`<form class="note-form" onSubmit=${(/** @type {Event} */ e) => {
          e.preventDefault();
          onDecide(change.change_id, 'reject', text.trim());
          setWriting(false);
          // The keyboard stays on this change (A, R and the arrows go on from here).
          back();
        }}>
          <label for=${`note-${change.change_id}`}>What should the AI do instead?</label>
          <textarea id=${`note-${change.change_id}`} rows="2" required value=${text} onInput=${(/** @type {any} */ e) => setText(e.currentTarget.value)} onKeyDown=${sendOnCtrlEnter} autofocus></textarea>
          <div><button type="submit" class="primary">Reject with this note</button><button type="button" onClick=${() => setWriting(false)}>Cancel</button></div>
        </form>`
      : html`<div class="change-actions">
          <button type="button" class="accept" aria-pressed=${decision === 'accept'} disabled=${busy} onClick=${() => onDecide(change.change_id, decision === 'accept' ? null : 'accept')}>Accept</button>
          <button type="button" class="reject" aria-pressed=${decision === 'reject' && !note} disabled=${busy} onClick=${() => onDecide(change.change_id, decision === 'reject' && !note ? null : 'reject')}>Reject</button>
          ${kind !== 'delete' && html`<button type="button" disabled=${busy} onClick=${() => setCorrecting(true)}>Edit, then accept…</button>`}
          <button type="button" disabled=${busy} onClick=${() => setWriting(true)}>Reject with a note…</button>
        </div>`}
  </div>`;
}

/**
 * The AI's proposed text, editable: the reviewer corrects it and accepts their version
 * (the approval's `edits`). Ctrl+Enter accepts, Escape cancels.
 * @param {{change: Change, start: string, onAccept: (html: string) => void, onCancel: () => void}} props
 */
function Correction({ change, start, onAccept, onCancel }) {
  const box = useRef(/** @type {HTMLDivElement | null} */ (null));
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    mount(el, start);
    // One block is edited in place (Enter breaks the line, as in a section); several
    // (a new passage of the AI) are edited together.
    const target = el.children.length === 1 ? /** @type {HTMLElement} */ (el.firstElementChild) : el;
    target.setAttribute('contenteditable', 'true');
    target.setAttribute('role', 'textbox');
    target.setAttribute('aria-multiline', 'true');
    target.setAttribute('aria-label', 'Your version of the change');
    target.focus();
  }, [change.change_id]);
  const read = () => {
    const el = box.current;
    if (!el) return '';
    return el.children.length > 0 ? Array.from(el.children).map(serialize).join('') : el.textContent || '';
  };
  const accept = () => {
    const corrected = read();
    if (corrected.replace(/<[^>]*>/g, '').trim() === '') return;
    onAccept(corrected);
  };
  /** @param {KeyboardEvent} e */
  const onKeyDown = (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      accept();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      onCancel();
    } else if (e.key === 'Enter' && !e.shiftKey && box.current?.children.length === 1) {
      e.preventDefault();
      document.execCommand('insertLineBreak');
    }
  };
  return html`<div class="correction">
    <p class="meta" id=${`correct-${change.change_id}`}>Correct the AI’s text, then accept your version. Ctrl+Enter accepts, Escape cancels.</p>
    <div class="section-body correction-box" ref=${box} onKeyDown=${onKeyDown} aria-describedby=${`correct-${change.change_id}`}></div>
    <div><button type="button" class="primary" onClick=${accept}>Accept my version</button><button type="button" onClick=${onCancel}>Cancel</button></div>
  </div>`;
}

/**
 * A section the AI changed in a turn applied without review: what it did, as a redline, until
 * the marks are hidden or the document changes again.
 * @param {{change: Change, number: number, onOpen: (id: string) => void}} props
 */
function AppliedView({ change, number, onOpen }) {
  const box = useRef(/** @type {HTMLDivElement | null} */ (null));
  const marked = useMemo(() => redline(change.operation === 'create' ? '' : change.old_html || '', change.new_html || ''), [change.change_id]);
  useLayoutEffect(() => {
    if (box.current) mount(box.current, marked.html);
  }, [marked]);
  const label = `${change.operation === 'create' ? 'Written' : 'Changed'} by the AI: section ${number}`;
  return html`<div class="change applied" role="group" aria-label=${label} data-section=${change.chunk_id}>
    <div class="change-head">
      <strong>${label}</strong>
      <span class="meta">${change.operation === 'create' ? 'a new section' : `${marked.inserted} ${marked.inserted === 1 ? 'word' : 'words'} in, ${marked.deleted} out`}</span>
      <button type="button" class="link" aria-label=${`Edit section ${number}`} onClick=${() => onOpen(change.chunk_id)}>Edit</button>
    </div>
    <div class="redline" ref=${box}></div>
    ${change.ai_explanation && html`<p class="explanation"><span class="meta">The AI’s reason: </span>${change.ai_explanation}</p>`}
  </div>`;
}

/**
 * Ctrl+Enter (⌘+Enter) in a note sends its form, as in the chat's message box.
 * @param {KeyboardEvent} e
 */
function sendOnCtrlEnter(e) {
  if (e.key !== 'Enter' || !(e.ctrlKey || e.metaKey)) return;
  e.preventDefault();
  const area = /** @type {HTMLTextAreaElement} */ (e.currentTarget);
  area.form?.requestSubmit();
}
