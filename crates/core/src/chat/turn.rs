//! The editing loop of one chat turn, run by a worker: the model gets the outline and works
//! through the tools; every model call, tool call and change is an intermediate event. The
//! document is written once, at the end, in one transaction (or the changes wait for
//! approval).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use redline_domain::document::{ChunkId, Document, Section, MAX_SECTIONS};
use redline_domain::job::{sections_edited, Change, ChangeOp, JobStatus};
use redline_ports::documents::{CommitOutcome, DocumentRecord, NewVersion};
use redline_ports::jobs::{HistoryMessage, JobRecord, JobUpdate, Signal};
use redline_ports::llm::{CompletionRequest, DeltaSink, LlmError, Message};
use redline_ports::{EventBus, JobStore};
use serde_json::{json, Value};
use tokio::sync::watch;

use super::record::{
    Continuation, DocumentChanges, Failure, PublicChange, ResponseMode, StoredChange, Turn, TurnMetadata, TurnResult,
    TurnState, UsageRecord, FORMAT,
};
use super::tools::{self, ToolRequest, Workspace};
use super::{prompt, short_id, Chat, ChatError, ChatResult};
use crate::documents::{new_chunk_id, new_version_id};

/// Times a turn re-applies its changes onto a document that other writers changed first.
const REBASE_ATTEMPTS: usize = 20;

/// A human-readable summary of changes.
fn summary(changes: &[Change]) -> String {
    if changes.is_empty() {
        return "No changes to the document.".to_owned();
    }
    let count = |op| changes.iter().filter(|c| c.op == op).count();
    let mut parts = Vec::new();
    for (op, word) in [(ChangeOp::Edit, "edited"), (ChangeOp::Create, "created"), (ChangeOp::Delete, "deleted")] {
        let n = count(op);
        if n > 0 {
            parts.push(format!("{n} section{} {word}", if n == 1 { "" } else { "s" }));
        }
    }
    format!("{}.", parts.join(", "))
}

/// Collects streamed text (it is stored as one `text_delta` event per model call) and passes
/// on the attempts tried again, as `status` events, while the call goes on.
struct Collect {
    text: Mutex<String>,
    retries: tokio::sync::mpsc::UnboundedSender<Value>,
}

impl DeltaSink for Collect {
    fn text(&self, delta: &str) {
        if let Ok(mut s) = self.text.lock() {
            s.push_str(delta);
        }
    }

    fn retrying(&self, next: u32, wait: Duration, error: &LlmError) {
        let _ = self.retries.send(json!({
            "message": "The AI model failed; trying again",
            "reason": public_reason(error),
            "attempt": next,
            "wait_ms": u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
        }));
    }
}

/// What committing a turn's document did.
enum Commit {
    Done(DocumentRecord),
    /// The document moved on since the turn read it; nothing written.
    Stale,
    /// The job is no longer in progress (cancelled); nothing written.
    JobNotRunning,
}

/// What the loop ended with.
enum Ending {
    /// The model answered; apply or propose the changes.
    Answer(String),
    /// The wall-clock cap was reached: finish with what was done and a friendly note.
    OutOfTime,
    /// The job was cancelled (or taken away): stop, write nothing.
    Cancelled,
    /// The turn failed: write nothing, charge nothing.
    Failed(String),
}

/// Watches a running job: renews its lease and reports when it is no longer in progress
/// (cancelled, or taken by recovery).
fn watch_job(
    jobs: Arc<dyn JobStore>,
    bus: Arc<dyn EventBus>,
    clock: Arc<dyn redline_ports::Clock>,
    job_id: String,
    lease: Duration,
) -> (watch::Receiver<bool>, tokio::task::JoinHandle<()>) {
    let (tx, rx) = watch::channel(false);
    let handle = tokio::spawn(async move {
        let mut signals = bus.subscribe();
        let renew_every = (lease / 3).max(Duration::from_millis(100));
        let mut renew = tokio::time::interval(renew_every);
        renew.tick().await;
        loop {
            tokio::select! {
                _ = renew.tick() => {
                    let now = clock.now_ms();
                    let until = now + i64::try_from(lease.as_millis()).unwrap_or(i64::MAX / 2);
                    let update = JobUpdate { lease_until: Some(Some(until)), ..Default::default() };
                    if let Ok(None) = jobs.update_job(&job_id, &[JobStatus::InProgress], &update, now).await {
                        let _ = tx.send(true);
                        return;
                    }
                }
                s = signals.recv() => {
                    let mine = match s {
                        Ok(Signal::Job(id)) => id == job_id,
                        Ok(Signal::Events(_) | Signal::Queued) => false,
                        Err(_) => true,
                    };
                    if mine {
                        if let Ok(Some(status)) = jobs.job_status(&job_id).await {
                            if status != JobStatus::InProgress {
                                let _ = tx.send(true);
                                return;
                            }
                        }
                    }
                }
            }
        }
    });
    (rx, handle)
}

async fn cancelled(rx: &mut watch::Receiver<bool>) {
    loop {
        if *rx.borrow() {
            return;
        }
        if rx.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

impl Chat {
    async fn emit(&self, job_id: &str, kind: &str, content: Value) {
        let now = self.now();
        match self.ports.jobs.append_event(job_id, kind, &content, now).await {
            Ok(_) => self.ports.bus.publish(Signal::Events(job_id.to_owned())).await,
            Err(e) => tracing::warn!(job_id, error = %e, "could not record a job event"),
        }
    }

    /// Records several events in one write.
    async fn emit_all(&self, job_id: &str, events: Vec<(String, Value)>) {
        if events.is_empty() {
            return;
        }
        let now = self.now();
        match self.ports.jobs.append_events(job_id, &events, now).await {
            Ok(_) => self.ports.bus.publish(Signal::Events(job_id.to_owned())).await,
            Err(e) => tracing::warn!(job_id, error = %e, "could not record job events"),
        }
    }

    async fn progress(&self, job_id: &str, progress: i32) {
        let update = JobUpdate { progress: Some(progress), ..Default::default() };
        let _ = self.ports.jobs.update_job(job_id, &[JobStatus::InProgress], &update, self.now()).await;
    }

    /// Ends a turn as failed (nothing written, nothing charged).
    async fn fail(&self, turn: &Turn, error: String) {
        self.fail_with(turn, error, None).await;
    }

    /// Ends a turn as failed because other writers changed the sections it edited: its state
    /// says [`Failure::Conflict`], which `POST /v1/chat` answers with 409, not as a failure
    /// of the AI model (502).
    async fn fail_conflict(&self, turn: &Turn, error: String) {
        self.fail_with(turn, error, Some(Failure::Conflict)).await;
    }

    async fn fail_with(&self, turn: &Turn, error: String, failure: Option<Failure>) {
        let job = &turn.job;
        tracing::warn!(job_id = %job.job_id, %error, "chat job failed");
        // What this round did not write, the rounds approved before it did.
        let error = match turn.state.applied.len() {
            0 => error,
            n => format!(
                "{} The {n} change{} approved earlier in this turn stay{} in the document.",
                error
                    .replace("; nothing was changed.", ".")
                    .replace(" Nothing was changed.", "")
                    .replace("; nothing was applied.", "; nothing more was applied."),
                if n == 1 { "" } else { "s" },
                if n == 1 { "s" } else { "" },
            ),
        };
        let state = failure.map(|failure| TurnState { failure: Some(failure), ..turn.state.clone() }.to_value());
        let update = JobUpdate { status: Some(JobStatus::Failed), error: Some(error), state, ..Default::default() };
        if let Ok(Some(failed)) =
            self.ports.jobs.update_job(&job.job_id, &[JobStatus::InProgress], &update, self.now()).await
        {
            let _ = self.usage.release(&turn.admission()).await;
            self.record_interrupted_turn(&failed).await;
        }
        self.ports.bus.publish(Signal::Job(job.job_id.clone())).await;
    }

    /// Runs a claimed chat job to its end.
    pub async fn run_job(&self, job: JobRecord) {
        let (mut cancel, watcher) = watch_job(
            self.ports.jobs.clone(),
            self.ports.bus.clone(),
            self.ports.clock.clone(),
            job.job_id.clone(),
            self.config.lease,
        );
        match Turn::read(&job) {
            Ok(turn) => {
                if let Err(e) = self.run_turn(&turn, &mut cancel).await {
                    self.fail(&turn, format!("The chat turn failed: {e}")).await;
                }
            }
            Err(e) => self.fail_unreadable(&job, &e).await,
        }
        watcher.abort();
    }

    /// Ends a job whose stored request or state cannot be read (a bug, or a row written by a
    /// newer build): failed, with the cause in the log. Its held operation stays held: the
    /// cycle it was held in is part of what could not be read.
    async fn fail_unreadable(&self, job: &JobRecord, e: &redline_ports::StoreError) {
        tracing::error!(job_id = %job.job_id, error = %e, "a chat job could not be read");
        let update = JobUpdate {
            status: Some(JobStatus::Failed),
            error: Some("The chat turn failed: the job could not be read.".to_owned()),
            ..Default::default()
        };
        let _ = self.ports.jobs.update_job(&job.job_id, &[JobStatus::InProgress], &update, self.now()).await;
        self.ports.bus.publish(Signal::Job(job.job_id.clone())).await;
    }

    async fn run_turn(&self, turn: &Turn, cancel: &mut watch::Receiver<bool>) -> ChatResult<()> {
        let job = &turn.job;
        let message = turn.request.message.clone();
        let require_approval = turn.request.require_approval;
        let owner = job.owner;
        let session = &job.session_id;
        self.emit(&job.job_id, "status", json!({"message": "Reading the document", "attempt": job.attempts})).await;
        self.progress(&job.job_id, 5).await;

        // The document as the turn starts (the editor's copy first, when one was sent).
        let (mut record, mut doc) = self.documents.current(owner, session).await?;
        if let Some(html) = &turn.request.document_html {
            let sections = self.documents.sectionize(html.clone()).await?;
            let editor = Document::new(sections).map_err(|e| ChatError::Conflict(e.to_string()))?;
            let stored = record.as_ref().map(|r| r.html.as_str()).unwrap_or_default();
            if editor.to_html() != stored && (editor.has_content() || !doc.has_content()) {
                let version = NewVersion {
                    version_id: new_version_id(),
                    html: editor.to_html(),
                    section_count: editor.len() as i64,
                    source: "editor".to_owned(),
                    title: None,
                    now: self.now(),
                };
                let expected = Some(record.as_ref().and_then(|r| r.version_id.clone()));
                if let CommitOutcome::Committed(r) =
                    self.ports.store.commit_version(owner, session, expected, &version).await?
                {
                    record = Some(r);
                    doc = editor;
                }
            }
        }
        let base_version = record.as_ref().and_then(|r| r.version_id.clone());

        let attachments = match &self.ports.attachments {
            Some(a) => a.session_attachments(owner, session).await.unwrap_or_default(),
            None => Vec::new(),
        };
        let mut messages = vec![Message::system(prompt::system(&doc, &attachments))];
        let history = self.ports.history.recent_history(owner, session, self.config.history_messages).await?;
        for m in history {
            let content = earlier_message(m.content);
            messages.push(if m.role == "user" {
                Message::user(content)
            } else {
                Message::assistant(Some(content), vec![])
            });
        }
        messages.push(Message::user(message.clone()));
        if let Some(c) = &turn.state.continuation {
            messages.extend(reviewer_answer(c));
        }

        let mut ws = Workspace::new(doc);
        let deadline_ms = job.created_at + i64::try_from(self.config.chat_timeout.as_millis()).unwrap_or(i64::MAX / 2);
        let tool_specs = tools::specs();
        let mut ending = Ending::Failed(format!(
            "The AI did not finish within {} steps; nothing was changed.",
            self.config.max_rounds
        ));
        for round in 0..self.config.max_rounds {
            if *cancel.borrow() {
                ending = Ending::Cancelled;
                break;
            }
            let remaining = deadline_ms - self.now();
            if remaining <= 0 {
                ending = Ending::OutOfTime;
                break;
            }
            self.progress(&job.job_id, (10 + 15 * round as i32).min(90)).await;
            self.emit(
                &job.job_id,
                "status",
                json!({"message": "Asking the model", "model": self.ports.llm.name(), "round": round + 1}),
            )
            .await;
            let request = CompletionRequest { messages: messages.clone(), tools: tool_specs.clone() };
            let (retries, mut retried) = tokio::sync::mpsc::unbounded_channel();
            let sink = Collect { text: Mutex::default(), retries };
            let call = async {
                let call = self.ports.llm.complete(&request, &sink);
                tokio::pin!(call);
                loop {
                    tokio::select! {
                        c = &mut call => break c,
                        Some(note) = retried.recv() => self.emit(&job.job_id, "status", note).await,
                    }
                }
            };
            let completion = tokio::select! {
                c = call => c,
                _ = cancelled(cancel) => { ending = Ending::Cancelled; break; }
                _ = tokio::time::sleep(Duration::from_millis(u64::try_from(remaining).unwrap_or(0))) => {
                    ending = Ending::OutOfTime;
                    break;
                }
            };
            let completion = match completion {
                Ok(c) => c,
                Err(e) => {
                    // The caller sees the kind of failure; what the service said (its body may
                    // name keys, hosts or internals, and is not ours to show) goes to the log.
                    tracing::warn!(job_id = %job.job_id, error = %e, "the AI model failed");
                    let why = public_reason(&e);
                    ending = Ending::Failed(format!("The AI model failed: {why}. Nothing was changed."));
                    break;
                }
            };
            if let Some(text) = completion.content.as_deref().filter(|t| !t.is_empty()) {
                self.emit(&job.job_id, "text_delta", json!({"text": text})).await;
            }
            messages.push(Message::assistant(completion.content.clone(), completion.tool_calls.clone()));
            if completion.tool_calls.is_empty() {
                ending = Ending::Answer(completion.content.unwrap_or_default());
                break;
            }
            // The round's events are written together (one transaction, one signal).
            let mut events = Vec::new();
            for call in &completion.tool_calls {
                let shown_args: Value =
                    serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.clone()));
                events
                    .push(("tool_call".to_owned(), json!({"id": call.id, "name": call.name, "arguments": shown_args})));
                let answer = self.tool(job, &mut ws, &call.name, &call.arguments, require_approval, &mut events).await;
                let ok = answer.get("error").is_none();
                events.push((
                    "tool_result".to_owned(),
                    json!({"id": call.id, "name": call.name, "ok": ok, "error": answer.get("error")}),
                ));
                messages.push(Message::tool(call.id.clone(), answer.to_string()));
            }
            self.emit_all(&job.job_id, events).await;
        }
        match ending {
            Ending::Cancelled => Ok(()),
            Ending::Failed(why) => {
                self.fail(turn, why).await;
                Ok(())
            }
            Ending::OutOfTime => {
                let n = ws.changes().len();
                let text = format!(
                    "This request reached the time limit of {} before I could finish. {}",
                    human_duration(self.config.chat_timeout),
                    if n == 0 {
                        "The document was not changed; try a smaller request.".to_owned()
                    } else if require_approval {
                        format!("The {n} change(s) I had prepared are ready for your review.")
                    } else {
                        format!("The {n} change(s) I had made are kept; ask again to continue.")
                    }
                );
                self.finish(turn, record, base_version, ws, text, require_approval).await
            }
            Ending::Answer(text) => {
                let text = if text.trim().is_empty() { summary(ws.changes()) } else { text };
                self.finish(turn, record, base_version, ws, text, require_approval).await
            }
        }
    }

    /// Runs one tool call against the working copy; the answer goes back to the model.
    async fn tool(
        &self,
        job: &JobRecord,
        ws: &mut Workspace,
        name: &str,
        arguments: &str,
        proposing: bool,
        events: &mut Vec<(String, Value)>,
    ) -> Value {
        let request = match tools::parse(name, arguments) {
            Ok(r) => r,
            Err(e) => return json!({"error": e}),
        };
        let chunk = |id: &str, ws: &Workspace| -> Result<ChunkId, Value> {
            ChunkId::parse(id)
                .filter(|c| ws.working.get(c).is_some())
                .ok_or_else(|| json!({"error": format!("unknown chunk_id {id:?}; use ids from the outline or from search_document")}))
        };
        match request {
            ToolRequest::Read { chunk_ids } => tools::read(&ws.working, &chunk_ids),
            ToolRequest::SearchDocument { query, limit, offset } => tools::search(&ws.working, &query, limit, offset),
            ToolRequest::SearchAttachments { query, limit } => match &self.ports.attachments {
                Some(a) => match a.search_passages(job.owner, &job.session_id, &query, limit).await {
                    Ok(p) => tools::passages_json(&p),
                    Err(e) => json!({"error": format!("attachment search failed: {e}")}),
                },
                None => json!({"passages": []}),
            },
            ToolRequest::Edit { chunk_id, new_html, explanation } => {
                let id = match chunk(&chunk_id, ws) {
                    Ok(id) => id,
                    Err(e) => return e,
                };
                let sections = match self.new_sections(ws, &new_html, Some(&id)).await {
                    Ok(s) => s,
                    Err(e) => return e,
                };
                if let Err(e) = ws.working.replace(&id, sections.clone()) {
                    return json!({"error": e.to_string()});
                }
                let at = ws.record_edit(&id, sections, explanation.clone(), short_id("chg_"));
                let change_id = Self::change_event(ws, at, proposing, events);
                json!({"ok": true, "change_id": change_id, "chunk_id": id.as_str()})
            }
            ToolRequest::Create { after, new_html, explanation } => {
                let after = match after.as_deref().filter(|a| !a.is_empty()) {
                    None => None,
                    Some(a) => match chunk(a, ws) {
                        Ok(id) => Some(id),
                        Err(e) => return e,
                    },
                };
                let sections = match self.new_sections(ws, &new_html, None).await {
                    Ok(s) => s,
                    Err(e) => return e,
                };
                if let Err(e) = ws.working.insert_after(after.as_ref(), sections.clone()) {
                    return json!({"error": e.to_string()});
                }
                let ids: Vec<String> = sections.iter().map(|s| s.id.as_str().to_owned()).collect();
                let at = ws.record_create(after, sections, explanation, short_id("chg_"));
                let change_id = Self::change_event(ws, at, proposing, events);
                json!({"ok": true, "change_id": change_id, "chunk_ids": ids})
            }
            ToolRequest::Delete { chunk_id, explanation } => {
                let id = match chunk(&chunk_id, ws) {
                    Ok(id) => id,
                    Err(e) => return e,
                };
                if let Err(e) = ws.working.delete(&id) {
                    return json!({"error": e.to_string()});
                }
                let (change_id, at) = ws.record_delete(&id, explanation, short_id("chg_"));
                if let Some(at) = at {
                    Self::change_event(ws, at, proposing, events);
                }
                json!({"ok": true, "change_id": change_id, "deleted": id.as_str()})
            }
        }
    }

    async fn new_sections(&self, ws: &Workspace, html: &str, keep: Option<&ChunkId>) -> Result<Vec<Section>, Value> {
        let sections = self
            .documents
            .sectionize(html.to_owned())
            .await
            .map_err(|e| json!({"error": format!("new_html was refused: {e}")}))?;
        if sections.is_empty() {
            return Err(json!({"error": "new_html has no content; to remove a section use delete_section"}));
        }
        // Past the limit only by growing (a document stored before it keeps being editable).
        let after = ws.working.len().saturating_sub(usize::from(keep.is_some())).saturating_add(sections.len());
        if after > MAX_SECTIONS && after > ws.working.len() {
            return Err(json!({"error": format!(
                "new_html was refused: the document would have more than {MAX_SECTIONS} sections"
            )}));
        }
        let mut sections = sections;
        ws.working.settle_ids(&mut sections, keep, &mut new_chunk_id);
        Ok(sections)
    }

    /// The `change` event of the change at `at`; its id.
    fn change_event(ws: &Workspace, at: usize, proposing: bool, events: &mut Vec<(String, Value)>) -> String {
        let c = &ws.changes()[at];
        let mut v = serde_json::to_value(PublicChange::from(c)).unwrap_or_default();
        v["proposed"] = json!(proposing);
        events.push(("change".to_owned(), v));
        c.change_id.clone()
    }

    /// The end of a turn: propose the changes, or apply them, charge and complete.
    async fn finish(
        &self,
        turn: &Turn,
        record: Option<DocumentRecord>,
        base_version: Option<String>,
        ws: Workspace,
        response: String,
        require_approval: bool,
    ) -> ChatResult<()> {
        let job = &turn.job;
        if require_approval && !ws.changes().is_empty() {
            let metadata =
                TurnMetadata { pending_changes: Some(PublicChange::list(ws.changes())), ..turn.metadata.clone() };
            let state = TurnState {
                pending: Some(StoredChange::list(ws.changes())),
                base_version,
                response: Some(response),
                applied: turn.state.applied.clone(),
                applied_sections: turn.state.applied_sections,
                turn_version_before: turn.state.turn_version_before.clone(),
                turn_version_after: turn.state.turn_version_after.clone(),
                ..TurnState::new()
            };
            let update = JobUpdate {
                status: Some(JobStatus::AwaitingApproval),
                progress: Some(90),
                metadata: Some(metadata.to_value()),
                state: Some(state.to_value()),
                lease_until: Some(None),
                ..Default::default()
            };
            self.ports.jobs.update_job(&job.job_id, &[JobStatus::InProgress], &update, self.now()).await?;
            self.emit(&job.job_id, "status", json!({"message": "Waiting for approval", "pending": ws.changes().len()}))
                .await;
            self.ports.bus.publish(Signal::Job(job.job_id.clone())).await;
            return Ok(());
        }
        if self.job_status(&job.job_id).await? != JobStatus::InProgress {
            return Ok(());
        }
        let owner = job.owner;
        // `version_before`: the version the turn's edits were written onto (a revert to the
        // turn undoes them and keeps what other writers committed before them).
        let (doc_record, applied, version_before) = if ws.changes().is_empty() {
            (record, Vec::new(), base_version)
        } else {
            match self.commit(job, base_version.clone(), &ws.working, "chat").await? {
                Commit::Done(r) => (Some(r), ws.changes().to_vec(), base_version),
                // Cancelled meanwhile: the cancel won, nothing is written.
                Commit::JobNotRunning => return Ok(()),
                Commit::Stale => {
                    // The document moved during the turn: apply the changes onto it if each
                    // section is as the AI saw it (retrying while other writers commit first),
                    // else give up without writing.
                    let mut committed = None;
                    for _ in 0..REBASE_ATTEMPTS {
                        let (now_record, now_doc) = self.documents.current(owner, &job.session_id).await?;
                        let refs: Vec<&Change> = ws.changes().iter().collect();
                        let Ok(rebased) = redline_domain::job::apply_approved(&now_doc, &refs) else {
                            self.fail_conflict(turn, "The document was changed by someone else while the AI edited the same sections; nothing was applied. Try again.".to_owned()).await;
                            return Ok(());
                        };
                        let expected = now_record.as_ref().and_then(|r| r.version_id.clone());
                        match self.commit(job, expected.clone(), &rebased, "chat").await? {
                            Commit::Done(r) => {
                                committed = Some((r, expected));
                                break;
                            }
                            Commit::JobNotRunning => return Ok(()),
                            Commit::Stale => {}
                        }
                    }
                    match committed {
                        Some((r, onto)) => (Some(r), ws.changes().to_vec(), onto),
                        None => {
                            self.fail_conflict(
                                turn,
                                "The document kept changing while the AI edited it; nothing was applied. Try again."
                                    .to_owned(),
                            )
                            .await;
                            return Ok(());
                        }
                    }
                }
            }
        };
        self.complete(turn, doc_record, version_before, &applied, response).await
    }

    async fn job_status(&self, job_id: &str) -> ChatResult<JobStatus> {
        let job = self.ports.jobs.job(job_id).await?.ok_or(ChatError::JobNotFound)?;
        Ok(job.status)
    }

    /// Commits `doc` over `expected` for the job; from then on the job cannot be cancelled.
    async fn commit(
        &self,
        job: &JobRecord,
        expected: Option<String>,
        doc: &Document,
        source: &str,
    ) -> ChatResult<Commit> {
        let version = NewVersion {
            version_id: new_version_id(),
            html: doc.to_html(),
            section_count: doc.len() as i64,
            source: source.to_owned(),
            title: None,
            now: self.now(),
        };
        let store = &self.ports.store;
        Ok(match store.commit_job_version(&job.job_id, job.owner, &job.session_id, Some(expected), &version).await? {
            Some(CommitOutcome::Committed(r)) => Commit::Done(r),
            Some(CommitOutcome::Stale { .. }) => Commit::Stale,
            None => Commit::JobNotRunning,
        })
    }

    /// Charges the turn, records it in the history and completes the job with its result.
    async fn complete(
        &self,
        turn: &Turn,
        doc_record: Option<DocumentRecord>,
        version_before: Option<String>,
        applied: &[Change],
        response: String,
    ) -> ChatResult<()> {
        let job = &turn.job;
        // `applied`, this round's changes, were committed with `doc_record`.
        let committed = !applied.is_empty();
        let sections = sections_edited(applied) + turn.state.applied_sections;
        // A turn in rounds is undone whole: its history starts at the version before its first
        // approved round.
        let version_before = turn.state.turn_version_before.clone().or(version_before);
        // The result describes what the whole turn applied: the rounds approved before the
        // reviewer's feedback, then this one.
        let mut all = turn.state.prior_changes()?;
        all.extend_from_slice(applied);
        let applied = all.as_slice();
        let usage = match self.usage.charge(&turn.admission(), sections).await {
            Ok(u) => u,
            Err(e) => {
                tracing::warn!(job_id = %job.job_id, error = %e, "could not charge a completed turn");
                let mut u = self.usage.current(job.owner).await?;
                u.was_billable = true;
                u
            }
        };
        let version_after = doc_record.as_ref().and_then(|r| r.version_id.clone());
        // The history follows the order of commits: a turn that committed is recorded at its
        // commit's time (another turn committing after it may finish first); one that changed
        // nothing, after the document's last change.
        let last_change = doc_record.as_ref().map_or(0, |r| r.updated_at);
        let now = if committed { last_change } else { self.now().max(last_change) };
        let message = turn.request.message.clone();
        self.ports
            .history
            .add_messages(
                job.owner,
                &job.session_id,
                &[
                    HistoryMessage {
                        message_id: short_id("msg_"),
                        role: "user".to_owned(),
                        content: message,
                        job_id: Some(job.job_id.clone()),
                        version_before: version_before.clone(),
                        version_after: version_after.clone(),
                        created_at: now,
                    },
                    HistoryMessage {
                        message_id: short_id("msg_"),
                        role: "assistant".to_owned(),
                        content: response.clone(),
                        job_id: Some(job.job_id.clone()),
                        version_before,
                        version_after: version_after.clone(),
                        created_at: now,
                    },
                ],
            )
            .await?;
        let compact = turn.request.response_mode == ResponseMode::Compact;
        let html = doc_record.as_ref().map(|r| r.html.clone()).unwrap_or_default();
        let changes = PublicChange::list(applied);
        let result = TurnResult {
            format: FORMAT,
            response,
            session_id: job.session_id.as_str().to_owned(),
            document_changes: DocumentChanges {
                updated_html: (!compact).then_some(html),
                version_id: version_after,
                changes_summary: summary(applied),
                requires_approval: false,
                pending_changes: None,
                chunk_diffs: compact.then(|| changes.clone()),
                changes,
            },
            usage: UsageRecord::from(&usage),
        };
        let update = JobUpdate {
            status: Some(JobStatus::Completed),
            progress: Some(100),
            result: Some(result.to_value()),
            ..Default::default()
        };
        let from = [JobStatus::InProgress];
        if self.ports.jobs.update_job(&job.job_id, &from, &update, self.now()).await?.is_none() {
            tracing::warn!(job_id = %job.job_id, "the job was cancelled while its turn was being completed");
        }
        self.ports.bus.publish(Signal::Job(job.job_id.clone())).await;
        Ok(())
    }

    /// Applies the approved changes of a job awaiting approval and completes it.
    /// `pending`: the changes proposed, of which `approved` are approved.
    pub(super) async fn finish_approval(
        &self,
        turn: Turn,
        approved: Vec<Change>,
        pending: &[Change],
        feedback: Option<String>,
    ) -> ChatResult<JobRecord> {
        let now = self.now();
        let take = JobUpdate { status: Some(JobStatus::InProgress), ..Default::default() };
        let Some(job) =
            self.ports.jobs.update_job(&turn.job.job_id, &[JobStatus::AwaitingApproval], &take, now).await?
        else {
            return Err(ChatError::Conflict(format!("Job {} is no longer awaiting approval.", turn.job.job_id)));
        };
        // Taking the job changed its status alone.
        let turn = Turn { job, ..turn };
        let job = &turn.job;
        let proposed = pending.len();
        let back = JobUpdate { status: Some(JobStatus::AwaitingApproval), ..Default::default() };
        let (record, doc) = self.documents.current(job.owner, &job.session_id).await?;
        let refs: Vec<&Change> = approved.iter().collect();
        let next = match redline_domain::job::apply_approved(&doc, &refs) {
            Ok(next) => next,
            Err(e) => {
                self.ports.jobs.update_job(&job.job_id, &[JobStatus::InProgress], &back, self.now()).await?;
                let ids = match &e {
                    redline_domain::job::ApprovalError::Stale(ids) => ids.clone(),
                    _ => Vec::new(),
                };
                return Err(ChatError::StaleChanges {
                    detail: format!(
                        "These changes were proposed against sections that have changed since: {}. Nothing was applied; reject them or ask again.",
                        ids.join(", ")
                    ),
                    change_ids: ids,
                });
            }
        };
        let version_before = record.as_ref().and_then(|r| r.version_id.clone());
        let doc_record = if approved.is_empty() {
            record
        } else {
            match self.commit(job, version_before.clone(), &next, "chat").await? {
                Commit::Done(r) => Some(r),
                Commit::JobNotRunning => {
                    return Err(ChatError::Conflict(format!("Job {} was cancelled during the approval.", job.job_id)))
                }
                Commit::Stale => {
                    self.ports.jobs.update_job(&job.job_id, &[JobStatus::InProgress], &back, self.now()).await?;
                    return Err(ChatError::Conflict("The document changed during the approval; try again.".to_owned()));
                }
            }
        };
        let mut response = turn.state.response.clone().unwrap_or_default();
        response.push_str(&format!(
            "\n\n{} of {proposed} proposed change{} applied after review.",
            approved.len(),
            if proposed == 1 { "" } else { "s" }
        ));
        let rejected: Vec<PublicChange> = pending
            .iter()
            .filter(|c| !approved.iter().any(|a| a.change_id == c.change_id))
            .map(PublicChange::from)
            .collect();
        if let Some(f) = feedback.filter(|f| !f.trim().is_empty()) {
            if !rejected.is_empty() {
                // The reviewer's feedback goes back to the AI, which may propose again in this
                // job: the job is queued again with what happened so far.
                let mut applied = turn.state.applied.clone();
                applied.extend(StoredChange::list(&approved));
                // The versions the turn's approved rounds span, for its history entry however
                // it ends (completed, or cancelled and failed after this round: `Chat::record_interrupted_turn`).
                let (first_before, last_after) = if approved.is_empty() {
                    (turn.state.turn_version_before.clone(), turn.state.turn_version_after.clone())
                } else {
                    (
                        turn.state.turn_version_before.clone().or_else(|| version_before.clone()),
                        doc_record.as_ref().and_then(|r| r.version_id.clone()),
                    )
                };
                let state = TurnState {
                    turn_version_before: first_before,
                    turn_version_after: last_after,
                    continuation: Some(Continuation {
                        feedback: f.clone(),
                        previous_response: turn.state.response.clone(),
                        approved: approved.iter().map(|c| c.change_id.clone()).collect(),
                        rejected,
                    }),
                    applied_sections: turn.state.applied_sections + sections_edited(&approved),
                    applied,
                    ..TurnState::new()
                };
                let metadata = TurnMetadata { pending_changes: None, ..turn.metadata.clone() };
                let requeue = JobUpdate {
                    status: Some(JobStatus::Pending),
                    progress: Some(50),
                    metadata: Some(metadata.to_value()),
                    state: Some(state.to_value()),
                    lease_until: Some(None),
                    ..Default::default()
                };
                self.ports.jobs.update_job(&job.job_id, &[JobStatus::InProgress], &requeue, self.now()).await?;
                self.emit(&job.job_id, "status", json!({"message": "Reviewer feedback sent to the AI", "feedback": f}))
                    .await;
                self.ports.bus.publish(Signal::Job(job.job_id.clone())).await;
                self.ports.bus.publish(Signal::Queued).await;
                return self.ports.jobs.job(&job.job_id).await?.ok_or(ChatError::JobNotFound);
            }
        }
        self.complete(&turn, doc_record, version_before, &approved, response).await?;
        self.ports.jobs.job(&job.job_id).await?.ok_or(ChatError::JobNotFound)
    }
}

/// What the model is told of the reviewer's answer to its proposal: its proposal's answer
/// with the changes approved and rejected (as JSON), then the feedback.
fn reviewer_answer(c: &Continuation) -> [Message; 2] {
    let previous = c.previous_response.as_deref().unwrap_or_default();
    let approved = serde_json::to_value(&c.approved).unwrap_or_default();
    let rejected = serde_json::to_value(&c.rejected).unwrap_or_default();
    [
        Message::assistant(
            Some(format!("{previous}\n\nThe reviewer approved changes {approved} and rejected these: {rejected}")),
            vec![],
        ),
        Message::user(format!("Reviewer feedback on the rejected changes: {}", c.feedback)),
    ]
}

/// The most of one earlier message given back to the model: an 800 KB answer (or request)
/// was sent whole with every later turn of the session, for a prompt that grew past what
/// models take. The stored history keeps it whole.
const EARLIER_MESSAGE_CHARS: usize = 8_000;

/// An earlier message as the model gets it: cut at [`EARLIER_MESSAGE_CHARS`], saying so.
fn earlier_message(content: String) -> String {
    match content.char_indices().nth(EARLIER_MESSAGE_CHARS) {
        None => content,
        Some((at, _)) => {
            let left = content[at..].chars().count();
            format!("{}\n[… {left} more characters of this earlier message are left out]", &content[..at])
        }
    }
}

/// What a caller is told of a model failure: its kind and the service's status, never the
/// service's own words or address (`LlmError`'s text, which has them, is logged).
fn public_reason(e: &LlmError) -> String {
    match e {
        LlmError::Timeout => "the AI model did not answer in time".to_owned(),
        LlmError::Upstream { status: 429, .. } => {
            "the language model service answered 429 (too many requests) and kept refusing".to_owned()
        }
        LlmError::Upstream { status, .. } => format!("the language model service answered {status}"),
        LlmError::Unreachable(_) => "the language model service could not be reached".to_owned(),
        LlmError::InvalidResponse(_) => "the language model sent an answer that could not be read".to_owned(),
    }
}

fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 120 && s.is_multiple_of(60) {
        format!("{} minutes", s / 60)
    } else {
        format!("{s} seconds")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earlier_messages_are_cut_for_the_model() {
        assert_eq!(super::earlier_message("short".to_owned()), "short");
        let exact = "é".repeat(super::EARLIER_MESSAGE_CHARS);
        assert_eq!(super::earlier_message(exact.clone()), exact);
        let long = format!("{exact}abc");
        let cut = super::earlier_message(long);
        assert!(
            cut.starts_with(&exact) && cut.ends_with("[… 3 more characters of this earlier message are left out]"),
            "{cut}"
        );
    }

    #[test]
    fn model_failures_are_told_without_the_services_words() {
        let secret = "Incorrect API key provided: sk-upstream-SECRET at 10.2.3.4\u{1b}[31m";
        for (e, told) in [
            (LlmError::Upstream { status: 401, message: secret.to_owned() }, "the language model service answered 401"),
            (
                LlmError::Unreachable(format!("http://10.2.3.4/v1?api-key=Q: {secret}")),
                "the language model service could not be reached",
            ),
            (LlmError::InvalidResponse(secret.to_owned()), "the language model sent an answer that could not be read"),
            (LlmError::Timeout, "the AI model did not answer in time"),
        ] {
            assert_eq!(super::public_reason(&e), told);
        }
    }

    #[test]
    fn changes_survive_the_job_state() {
        let s = Section {
            id: ChunkId::parse("c1").unwrap(),
            tag: "p".into(),
            html: "<p data-chunk-id=\"c1\">x</p>".into(),
            text: "x".into(),
        };
        let changes = vec![
            Change {
                change_id: "chg_1".into(),
                op: ChangeOp::Create,
                chunk_id: s.id.clone(),
                after: None,
                old_html: None,
                new_sections: vec![s.clone()],
                explanation: Some("why".into()),
            },
            Change {
                change_id: "chg_2".into(),
                op: ChangeOp::Delete,
                chunk_id: ChunkId::parse("c2").unwrap(),
                after: None,
                old_html: Some("<p data-chunk-id=\"c2\">y</p>".into()),
                new_sections: vec![],
                explanation: None,
            },
        ];
        let state = TurnState { pending: Some(StoredChange::list(&changes)), ..TurnState::new() };
        assert_eq!(TurnState::read(&state.to_value()).unwrap().pending_changes().unwrap(), changes);
        assert!(TurnState::read(&json!({"pending": {"nope": 1}})).is_err());
        assert_eq!(summary(&changes), "1 section created, 1 section deleted.");
    }
}
