// @ts-check
// The editor: one document and the AI beside it. The document column shows the sections (edit
// one in place; a conflicting save is a choice, never a silent overwrite), and the AI's
// proposed changes as redlines to accept or reject. The side panel has the chat, the versions,
// the attachments and the export. docs/web.md, "The editor", says which endpoint feeds what.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { ApiError, api } from '../lib/api.js';
import { Link } from '../lib/router.js';
import { Notice, useAction } from '../lib/ui.js';
import { joinSections, splitSections } from '../lib/sections.js';
import { TitleEditor } from '../lib/title.js';
import { DocumentPane, reviewOrder } from '../editor/document.js';
import { loadDecisions, loadDraft, storeDecisions, storeDraft } from '../editor/drafts.js';
import { ACTIVE, useJob } from '../editor/job.js';
import { ChatPanel, opensTurn } from '../editor/chat.js';
import { ReviewBar, approval, staleIn, useReviewKeys } from '../editor/review.js';
import { VersionsPanel } from '../editor/versions.js';
import { AttachmentsPanel } from '../editor/attachments.js';
import { ExportPanel } from '../editor/export.js';
import { ConflictBox, LinkDialog } from '../editor/dialogs.js';

/**
 * @typedef {import('../lib/sections.js').Section} Section
 * @typedef {import('../editor/drafts.js').Draft} Draft
 * @typedef {import('../editor/document.js').Review} Review
 * @typedef {import('../editor/document.js').Change} Change
 * @typedef {import('../editor/chat.js').Message} Message
 * @typedef {{sections: Section[], versionId: string | null, updatedAt: string | null, title: string | null}} Doc
 * @typedef {{theirs: Doc, ids: string[]}} Conflict
 */

const TABS = [
  ['chat', 'Chat'],
  ['versions', 'Versions'],
  ['attachments', 'Attachments'],
  ['export', 'Export'],
];

/** @param {any} body a document as the API gives it @returns {Doc} */
function docOf(body) {
  return { sections: splitSections(body.html || ''), versionId: body.version_id ?? null, updatedAt: body.updated_at ?? null, title: body.title ?? null };
}

/**
 * The sections with the drafts applied; a drafted section that `sections` no longer has goes
 * back after the nearest section before it in `before` that is still there.
 * @param {Section[]} sections
 * @param {Draft['sections']} drafts
 * @param {Section[]} before
 */
export function withDrafts(sections, drafts, before) {
  const out = sections.map((s) => (drafts[s.id] ? { id: s.id, html: drafts[s.id].html } : s));
  for (const id of Object.keys(drafts)) {
    if (out.some((s) => s.id === id)) continue;
    const at = before.findIndex((s) => s.id === id);
    let insert = 0;
    for (let i = at - 1; i >= 0; i--) {
      const found = out.findIndex((s) => s.id === before[i].id);
      if (found >= 0) {
        insert = found + 1;
        break;
      }
    }
    out.splice(insert, 0, { id, html: drafts[id].html });
  }
  return out;
}

/** The drafted sections that someone else changed since the draft began. @param {Draft['sections']} drafts @param {Section[]} theirs */
function conflicting(drafts, theirs) {
  return Object.keys(drafts).filter((id) => theirs.find((s) => s.id === id)?.html !== drafts[id].original);
}

/** @param {{sessionId: string, me: {email: string | null}, org: string | null}} props */
export function Editor({ sessionId, me, org }) {
  const [doc, setDoc] = useState(/** @type {Doc | null} */ (null));
  const [draft, setDraftState] = useState(/** @type {() => Draft} */ (() => loadDraft(sessionId) || { base: null, sections: {} }));
  const [open, setOpen] = useState(/** @type {() => string[]} */ (() => Object.keys(draft.sections)));
  const [conflict, setConflict] = useState(/** @type {Conflict | null} */ (null));
  const [review, setReview] = useState(/** @type {Review | null} */ (null));
  const [messages, setMessages] = useState(/** @type {Message[] | null} */ (null));
  const [tab, setTab] = useState('chat');
  // On a phone the document and the side panel are tabs of one screen (docs/web.md): which
  // one shows. Wider screens show both, whatever this says.
  const [pane, setPane] = useState(/** @type {'document' | 'side'} */ ('document'));
  // What a turn applied without review, marked in the document while it is the version that
  // turn made (docs/web.md).
  const [marks, setMarks] = useState(/** @type {{versionId: string, changes: Change[]} | null} */ (null));
  const reviewed = useRef(/** @type {Set<string>} */ (new Set()));
  const [link, setLink] = useState(/** @type {string | null} */ (null));
  const [saved, setSaved] = useState(/** @type {string | null} */ (null));
  const [chatError, setChatError] = useState(/** @type {string | null} */ (null));
  const [chatNotice, setChatNotice] = useState(/** @type {string | null} */ (null));
  const [reverting, setReverting] = useState(/** @type {string | null} */ (null));
  const [sending, setSending] = useState(false);
  const load = useAction();
  const save = useAction();
  const decide = useAction();
  const path = `/v1/documents/${encodeURIComponent(sessionId)}`;
  const sections = doc ? doc.sections : [];
  const number = useMemo(() => new Map(sections.map((s, i) => [s.id, i + 1])), [sections]);
  const place = (/** @type {string} */ id) => number.get(id) ?? null;
  const unsaved = Object.keys(draft.sections).length > 0;

  /** @param {Draft} next */
  const setDraft = (next) => {
    setDraftState(next);
    storeDraft(sessionId, next);
  };

  // --- The document ---------------------------------------------------------------------
  /** Reads the document again; drafts whose sections nobody else changed follow it. */
  const reload = async () => {
    const next = docOf(await api('GET', path));
    setDoc(next);
    setDraftState((d) => {
      const ids = Object.keys(d.sections);
      if (ids.length === 0 || d.base === next.versionId) return d.base ? d : { ...d, base: next.versionId };
      const clash = conflicting(d.sections, next.sections);
      if (clash.length > 0) {
        setConflict({ theirs: next, ids: clash });
        return d;
      }
      const rebased = { ...d, base: next.versionId };
      storeDraft(sessionId, rebased);
      return rebased;
    });
    return next;
  };
  useEffect(() => {
    load.run(async () => {
      await reload();
    });
  }, [sessionId]);

  // Leaving with unsaved edits asks first (they are also kept for a reload of this tab).
  useEffect(() => {
    if (!unsaved) return undefined;
    /** @param {BeforeUnloadEvent} e */
    const warn = (e) => {
      e.preventDefault();
      e.returnValue = '';
    };
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [unsaved]);

  /** @param {string} id @param {string} edited */
  const onDraft = (id, edited) => {
    const original = draft.sections[id]?.original ?? sections.find((s) => s.id === id)?.html ?? '';
    const nextSections = { ...draft.sections };
    if (edited === original) delete nextSections[id];
    else nextSections[id] = { original, html: edited };
    setDraft({ base: draft.base ?? doc?.versionId ?? null, sections: nextSections });
    setSaved(null);
  };

  /** @param {string} id */
  const discard = (id) => {
    const nextSections = { ...draft.sections };
    delete nextSections[id];
    setDraft({ ...draft, sections: nextSections });
    setOpen(open.filter((o) => o !== id));
    focusWhenReady(`edit-${id}`);
  };

  /**
   * Saves the drafts over `onto` (the document as last read) with its version as the base. A 409
   * reads theirs: drafts of sections nobody else touched are saved over it at once; otherwise
   * the person chooses.
   * @param {Doc} onto
   * @param {Draft['sections']} drafts
   * @returns {Promise<boolean>} whether everything was saved
   */
  const put = async (onto, drafts) => {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const body = await api('PUT', path, { html: joinSections(withDrafts(onto.sections, drafts, sections)), base_version_id: onto.versionId });
        const next = docOf(body);
        setDoc(next);
        setDraft({ base: next.versionId, sections: {} });
        // The keyboard (and the screen) stay at the section just saved, not the page's top.
        if (open.length > 0) focusWhenReady(`edit-${open[0]}`);
        setOpen([]);
        setConflict(null);
        setSaved('Saved.');
        return true;
      } catch (e) {
        if (!(e instanceof ApiError) || e.status !== 409) throw e;
        const theirs = docOf(await api('GET', path));
        const clash = conflicting(drafts, theirs.sections);
        if (clash.length > 0) {
          setDoc(theirs);
          setConflict({ theirs, ids: clash });
          return false;
        }
        onto = theirs;
      }
    }
    throw new ApiError(409, 'The document kept changing while it was being saved. Try again in a moment.');
  };

  const saveAll = () =>
    save.run(async () => {
      if (!doc) return;
      if (!unsaved) {
        if (open.length > 0) focusWhenReady(`edit-${open[0]}`);
        setOpen([]);
        return;
      }
      const base = draft.base && draft.base !== doc.versionId ? { ...doc, versionId: draft.base } : doc;
      await put(base, draft.sections);
    });

  /** @param {'mine' | 'theirs'} choice */
  const resolve = (choice) =>
    save.run(async () => {
      if (!conflict) return;
      const { theirs, ids } = conflict;
      if (choice === 'mine') {
        await put(theirs, draft.sections);
        return;
      }
      const kept = { ...draft.sections };
      for (const id of ids) delete kept[id];
      setDoc(theirs);
      setDraft({ base: theirs.versionId, sections: kept });
      setOpen(open.filter((id) => !ids.includes(id)));
      setConflict(null);
    });

  // --- The AI ----------------------------------------------------------------------------
  const loadHistory = async () => {
    /** @type {Message[]} */
    let all = [];
    let cursor = null;
    for (let page = 0; page < 20; page++) {
      const q = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const body = await api('GET', `/v1/sessions/${encodeURIComponent(sessionId)}/history?limit=500${q}`);
      all = [...all, ...body.messages];
      cursor = body.next_cursor;
      if (!cursor) break;
    }
    setMessages(all);
  };

  /** @param {string} jobId @param {any[]} changes */
  const startReview = (jobId, changes) => {
    reviewed.current.add(jobId);
    // Decisions made before a reload come back.
    const kept = loadDecisions(sessionId, jobId, changes.map((/** @type {any} */ c) => c.change_id));
    const open = reviewOrder(doc ? doc.sections : [], changes).filter((c) => !kept.decisions[c.change_id]);
    const first = open[0] || reviewOrder(doc ? doc.sections : [], changes)[0];
    setReview({ jobId, changes, ...kept, stale: [], current: first ? first.change_id : null });
    // The changes are marked in the document: on a phone, that is where the review happens.
    setPane('document');
    decide.setError(null);
  };


  const job = useJob({
    place,
    onApproval: startReview,
    onFinal: async (final) => {
      setReview(null);
      storeDecisions(sessionId, null);
      const applied = final.status === 'completed' ? final.result?.document_changes : null;
      const changes = (applied?.changes || []).filter((/** @type {Change} */ c) => c.operation !== 'delete');
      if (applied && applied.version_id && changes.length > 0 && !reviewed.current.has(final.job_id)) {
        setMarks({ versionId: applied.version_id, changes });
      }
      if (final.status === 'failed') setChatError(final.error || 'The AI could not finish. Nothing was changed.');
      if (final.status === 'cancelled') setChatNotice(final.error || 'The AI’s work was cancelled.');
      try {
        await Promise.all([reload(), loadHistory()]);
      } catch (e) {
        setChatError(e instanceof Error ? e.message : String(e));
      }
      job.forget();
    },
    onError: (message) => setChatError(message),
    onResumed: () => setChatNotice('The connection dropped and came back: the AI’s progress picked up where it left off.'),
  });

  /** A reviewed file came back (docs/api.md, "The Word round trip"): the review it settled
   * ends, the document and the history are read again, and what the file still changes is
   * the review now. @param {any} body the upload's answer */
  const returned = async (body) => {
    if (body.settled_job_id) {
      job.forget();
      setReview(null);
      storeDecisions(sessionId, null);
    }
    await reload();
    await loadHistory();
    if (body.review_job_id) {
      const full = await api('GET', `/v1/jobs/${encodeURIComponent(body.review_job_id)}`);
      job.follow(full);
      startReview(full.job_id, full.metadata?.pending_changes || []);
    }
  };

  // What ran when the page opened: the history, and a job still running or waiting for review.
  useEffect(() => {
    (async () => {
      try {
        await loadHistory();
        const listing = await api('GET', `/v1/sessions/${encodeURIComponent(sessionId)}/jobs?limit=10&compact=true`);
        const running = listing.jobs.find((/** @type {any} */ j) => j.job_type === 'chat' && ACTIVE.includes(j.status));
        if (running) {
          const full = await api('GET', `/v1/jobs/${encodeURIComponent(running.job_id)}`);
          job.follow(full);
          if (full.status === 'awaiting_approval') startReview(full.job_id, full.metadata?.pending_changes || []);
        }
      } catch (e) {
        setChatError(e instanceof Error ? e.message : String(e));
      }
    })();
  }, [sessionId]);

  /** @param {string} message @param {boolean} requireApproval */
  const onSend = async (message, requireApproval) => {
    setChatError(null);
    setChatNotice(null);
    setSending(true);
    try {
      if (unsaved && doc) {
        const base = draft.base && draft.base !== doc.versionId ? { ...doc, versionId: draft.base } : doc;
        if (!(await put(base, draft.sections))) {
          setChatError('Your edits conflict with a change made meanwhile: choose which to keep (above the document), then send again.');
          return false;
        }
      }
      const body = await api('POST', '/v1/chat/async', { session_id: sessionId, message, require_approval: requireApproval });
      job.follow(body);
      return true;
    } catch (e) {
      setChatError(e instanceof Error ? e.message : String(e));
      return false;
    } finally {
      setSending(false);
    }
  };

  const cancel = async () => {
    if (!job.job) return;
    try {
      await api('POST', `/v1/jobs/${encodeURIComponent(job.job.jobId)}/cancel`);
    } catch (e) {
      setChatError(e instanceof Error ? e.message : String(e));
    }
  };

  /** A picture pasted into a section, stored as the document's own: its URL. @param {Blob} picture */
  const addPicture = async (picture) => {
    const body = await api('POST', `/v1/documents/${encodeURIComponent(sessionId)}/images`, picture);
    return String(body.url);
  };

  /** @param {Message} m */
  const revert = async (m) => {
    setReverting(m.message_id);
    setChatError(null);
    try {
      const body = await api('POST', `/v1/sessions/${encodeURIComponent(sessionId)}/revert`, { message_id: m.message_id });
      // The revert's answer has no title: the one shown stays.
      setDoc((d) => ({ ...docOf(body), title: d ? d.title : null }));
      setChatNotice('The turn was undone: the document is back to how it was before it.');
      await loadHistory();
    } catch (e) {
      setChatError(revertProblem(e));
      if (e instanceof ApiError && e.status === 404) await loadHistory().catch(() => undefined);
    } finally {
      setReverting(null);
    }
  };

  // --- The review ------------------------------------------------------------------------
  const order = useMemo(() => (review ? reviewOrder(sections, review.changes) : []), [review && review.changes, sections]);
  const nextOpen = (/** @type {Review} */ r, /** @type {string} */ from) => {
    const at = order.findIndex((c) => c.change_id === from);
    for (let i = 1; i <= order.length; i++) {
      const c = order[(at + i) % order.length];
      if (!r.decisions[c.change_id]) return c.change_id;
    }
    return from;
  };
  /** @param {string} id @param {'accept' | 'reject' | null} decision @param {string} [note] @param {string} [correction] */
  const onDecide = (id, decision, note, correction) => {
    setReview((r) => {
      if (!r) return r;
      const decisions = { ...r.decisions };
      const notes = { ...r.notes };
      const corrections = { ...r.corrections };
      if (decision) decisions[id] = decision;
      else delete decisions[id];
      if (note) notes[id] = note;
      else delete notes[id];
      // A correction goes with its accept: any other decision drops it.
      if (correction && decision === 'accept') corrections[id] = correction;
      else delete corrections[id];
      const next = { ...r, decisions, notes, corrections };
      // Kept in the tab at once, until the review is sent: a reload right after still has it.
      storeDecisions(sessionId, next);
      return { ...next, current: decision ? nextOpen(next, id) : id };
    });
  };
  /** @param {Record<string, unknown>} body */
  const submit = (body) =>
    decide.run(async () => {
      if (!review) return;
      try {
        const answer = await api('POST', `/v1/chat/${encodeURIComponent(sessionId)}/approve`, body);
        // Only the review just sent ends here: with feedback, the AI's next proposal may have
        // arrived (and opened a new review) before this answer did.
        setReview((r) => (r === review ? null : r));
        const again = answer.status === 'pending' || answer.status === 'in_progress';
        if (again) job.resumed();
        // The keyboard goes where the answer is: the chat, to the AI's summary and the message
        // box (or, while the AI tries again with the notes, its status).
        setTab('chat');
        setPane('side');
        focusWhenReady(again ? 'job-status' : 'chat-message');
        await reload();
      } catch (e) {
        if (e instanceof ApiError && e.status === 409) {
          const stale = staleIn(e.message, review.changes);
          if (stale.length > 0) {
            setReview({ ...review, stale, current: stale[0] });
            throw new ApiError(409, `${stale.length === 1 ? 'One change no longer fits its section' : `${stale.length} changes no longer fit their sections`}: someone changed them after the AI proposed them (marked below). Reject ${stale.length === 1 ? 'it' : 'them'}, then finish again.`);
          }
        }
        throw e;
      }
    });
  /** Accept all or Reject all marks every change, as a person would one by one; Finish sends. */
  const all = (/** @type {'accept' | 'reject'} */ d) => {
    setReview((r) => {
      if (!r) return r;
      const decisions = Object.fromEntries(r.changes.map((c) => [c.change_id, d]));
      const next = { ...r, decisions, corrections: d === 'accept' ? r.corrections : {} };
      storeDecisions(sessionId, next);
      return next;
    });
    focusWhenReady('review-finish');
  };
  useReviewKeys(Boolean(review) && !decide.busy, {
    next: () => review && order.length && setReview({ ...review, current: order[(order.findIndex((c) => c.change_id === review.current) + 1) % order.length].change_id }),
    previous: () => review && order.length && setReview({ ...review, current: order[(order.findIndex((c) => c.change_id === review.current) - 1 + order.length) % order.length].change_id }),
    accept: () => review?.current && onDecide(review.current, 'accept'),
    reject: () => review?.current && onDecide(review.current, 'reject'),
  });

  const turns = useMemo(() => {
    /** @type {Map<string, string>} */
    const map = new Map();
    // Only a turn that made a version names it: a question after it ends on the same version.
    const all = messages || [];
    all.forEach((m, i) => {
      if (m.role === 'user' && opensTurn(all, i) && m.version_after && m.version_after !== m.version_before) map.set(m.version_after, m.content);
    });
    return map;
  }, [messages]);

  const shownMarks = useMemo(
    () => (marks && doc && doc.versionId === marks.versionId && !review ? new Map(marks.changes.map((c) => [c.chunk_id, c])) : null),
    [marks, doc && doc.versionId, review],
  );

  if (load.error && !doc) {
    return html`<section><p><${Link} href="/documents">← Documents<//></p><h1>Document</h1><${Notice} message=${load.error} /></section>`;
  }
  /** The chat's message box, past a long document: the Chat tab opens and it takes the focus. */
  const toChat = (/** @type {Event} */ e) => {
    e.preventDefault();
    setTab('chat');
    setPane('side');
    requestAnimationFrame(() => document.getElementById('chat-message')?.focus());
  };
  return html`<section class="editor" key=${org || 'me'}>
    <a class="skip" href="#chat-message" onClick=${toChat}>Skip to the chat</a>
    <div class="editor-head">
      <p><${Link} href="/documents">← Documents<//></p>
      <${TitleEditor} heading sessionId=${sessionId} title=${doc ? doc.title : null} onRenamed=${(/** @type {string} */ title) => setDoc((d) => d && { ...d, title })} />
      ${doc && html`<p class="meta">${doc.sections.length} sections${unsaved ? ' · unsaved edits (kept in this tab until you save)' : ''}</p>`}
      <${Notice} message=${save.error} />
      <${Notice} message=${saved} kind="success" />
    </div>
    <div class="phone-tabs tabs" role="tablist" aria-label="Show">
      <button type="button" role="tab" aria-selected=${pane === 'document' ? 'true' : 'false'} class=${`tab${pane === 'document' ? ' selected' : ''}`}
        onClick=${() => setPane('document')}>Document${review ? ` (${order.length} to review)` : ''}</button>
      ${TABS.map(([id, label]) => html`<button type="button" role="tab" aria-selected=${pane === 'side' && tab === id ? 'true' : 'false'}
        class=${`tab${pane === 'side' && tab === id ? ' selected' : ''}`} onClick=${() => { setTab(id); setPane('side'); }}>${label}${id === 'chat' && job.job && ACTIVE.includes(job.job.status) ? ' •' : ''}</button>`)}
    </div>
    <div class=${`editor-body pane-${pane}`}>
      <div class="editor-main">
        ${conflict && html`<${ConflictBox} conflict=${conflict} drafts=${draft.sections} place=${place} busy=${save.busy} onChoose=${resolve} />`}
        ${review && html`<${ReviewBar} review=${review} order=${order} busy=${decide.busy} error=${decide.error}
          onMove=${(/** @type {string} */ id) => setReview({ ...review, current: id })} onAll=${all} onFinish=${() => submit(approval(review, place))} />`}
        ${shownMarks && html`<p class="applied-banner notice notice-success" role="status">
          <span>The AI changed ${shownMarks.size} ${shownMarks.size === 1 ? 'section' : 'sections'} without review: marked below in green.</span>
          <button type="button" class="link" onClick=${() => setMarks(null)}>Hide the marks</button></p>`}
        ${doc === null ? html`<p class="loading">Loading the document…</p>` : html`<${DocumentPane} sections=${sections} drafts=${draft.sections} open=${open} review=${review} marks=${shownMarks} busy=${save.busy || decide.busy}
          onOpen=${(/** @type {string} */ id) => setOpen([...open, id])} onDraft=${onDraft} onSave=${saveAll} onDiscard=${discard} onDecide=${onDecide} onLink=${setLink}
          onPicture=${addPicture} />`}
      </div>
      <aside class="editor-side" aria-label="AI, versions, attachments and export">
        <div class="tabs" role="tablist">
          ${TABS.map(([id, label]) => html`<button type="button" role="tab" id=${`tab-${id}`} aria-controls=${`panel-${id}`} aria-selected=${tab === id ? 'true' : 'false'} class=${`tab${tab === id ? ' selected' : ''}`} onClick=${() => setTab(id)}>${label}${id === 'chat' && job.job && ACTIVE.includes(job.job.status) ? ' •' : ''}</button>`)}
        </div>
        <div role="tabpanel" id=${`panel-${tab}`} aria-labelledby=${`tab-${tab}`}>
          ${tab === 'chat' && html`<${ChatPanel} messages=${messages} job=${job.job} error=${chatError} notice=${chatNotice} busy=${sending} onSend=${onSend} onCancel=${cancel} onRevert=${revert} reverting=${reverting} />`}
          ${tab === 'versions' && html`<${VersionsPanel} sessionId=${sessionId} versionId=${doc ? doc.versionId : null} turns=${turns}
            onRestored=${(/** @type {any} */ body) => setDoc(docOf(body))} />`}
          ${tab === 'attachments' && html`<${AttachmentsPanel} sessionId=${sessionId} />`}
          ${tab === 'export' && html`<${ExportPanel} sessionId=${sessionId} hasEmail=${Boolean(me.email) && !org} unsaved=${unsaved} pending=${review ? review.changes.length : 0} onReturned=${returned} />`}
        </div>
      </aside>
    </div>
    ${link !== null && html`<${LinkDialog} href=${link} onClose=${() => setLink(null)} />`}
  </section>`;
}

/**
 * Focuses the element with this id once it is shown and enabled (the chat's box is disabled
 * until the job's end has arrived; on a phone it is shown once its tab is), trying for up to
 * ten seconds.
 * @param {string} id
 */
function focusWhenReady(id, until = Date.now() + 10_000) {
  const el = /** @type {HTMLElement & {disabled?: boolean} | null} */ (document.getElementById(id));
  if (el && !el.disabled && el.getClientRects().length > 0) {
    el.focus();
    if (document.activeElement === el) return;
  }
  if (Date.now() < until) requestAnimationFrame(() => focusWhenReady(id, until));
}

/** The undo's refusals, in words. @param {unknown} e */
function revertProblem(e) {
  if (!(e instanceof ApiError)) return 'Something went wrong in this page. Reload it, then try again.';
  switch (e.status) {
    case 409:
      return 'The AI is working on this document. Wait for it to finish (or cancel it), then undo.';
    case 404:
      return 'That turn is no longer in the history: it was undone already. The conversation now shows what is left.';
    case 422:
      return 'That turn was made before undo existed, so it cannot be undone.';
    default:
      return e.message;
  }
}
