//! The editing loop of one chat turn, run by a worker: the model gets the outline and works
//! through the tools; every model call, tool call and change is an intermediate event. The
//! document is written once, at the end, in one transaction (or the changes wait for
//! approval): see `commit.rs`.

use std::sync::Mutex;
use std::time::Duration;

use redline_domain::document::{ChunkId, Document};
use redline_domain::job::JobStatus;
use redline_ports::documents::{CommitOutcome, NewVersion};
use redline_ports::jobs::{JobRecord, JobUpdate, Signal};
use redline_ports::llm::{CompletionRequest, DeltaSink, LlmError, Message};
use serde_json::{json, Value};
use tokio::sync::watch;

use super::commit::summary;
use super::protocol::{self, EditProtocol};
use super::record::{Continuation, Turn};
use super::tools::{self, ToolRequest, Workspace};
use super::{blocks, focus, prompt, rewrite, textcalls, Chat, ChatError, ChatResult};
use crate::documents::new_version_id;

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
    pub(super) async fn emit(&self, job_id: &str, kind: &str, content: Value) {
        let now = self.now();
        match self.ports.jobs.append_event(job_id, kind, &content, now).await {
            Ok(_) => self.ports.bus.publish(Signal::Events(job_id.to_owned())).await,
            Err(e) => tracing::warn!(job_id, error = %e, "could not record a job event"),
        }
    }
    /// Records several events in one write.
    pub(super) async fn emit_all(&self, job_id: &str, events: Vec<(String, Value)>) {
        if events.is_empty() {
            return;
        }
        let now = self.now();
        match self.ports.jobs.append_events(job_id, &events, now).await {
            Ok(_) => self.ports.bus.publish(Signal::Events(job_id.to_owned())).await,
            Err(e) => tracing::warn!(job_id, error = %e, "could not record job events"),
        }
    }
    pub(super) async fn progress(&self, job_id: &str, progress: i32) {
        let update = JobUpdate { progress: Some(progress), ..Default::default() };
        let _ = self.ports.jobs.update_job(job_id, &[JobStatus::InProgress], &update, self.now()).await;
    }
    /// Runs a claimed chat job to its end.
    pub async fn run_job(&self, job: JobRecord) {
        let (mut cancel, watcher) = crate::worker::keep_lease(
            (&self.ports.jobs, &self.ports.bus, &self.ports.clock),
            &job.job_id,
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
        watcher.end();
    }
    /// Ends a job whose stored request or state cannot be read (a bug, or a row written by a
    /// newer build): failed, with the cause in the log. Its held operation stays held: the
    /// cycle it was held in is part of what could not be read.
    pub(super) async fn fail_unreadable(&self, job: &JobRecord, e: &redline_ports::StoreError) {
        tracing::error!(job_id = %job.job_id, error = %e, "a chat job could not be read");
        let update = JobUpdate {
            status: Some(JobStatus::Failed),
            error: Some("The chat turn failed: the job could not be read.".to_owned()),
            ..Default::default()
        };
        let _ = self.ports.jobs.update_job(&job.job_id, &[JobStatus::InProgress], &update, self.now()).await;
        self.ports.bus.publish(Signal::Job(job.job_id.clone())).await;
    }
    pub(super) async fn run_turn(&self, turn: &Turn, cancel: &mut watch::Receiver<bool>) -> ChatResult<()> {
        let job = &turn.job;
        let message = turn.request.message.clone();
        let require_approval = turn.request.require_approval;
        let owner = job.owner;
        let session = &job.session_id;
        // `attempt` counts the runs cut off by a stopped server, plus this one.
        let mut start = json!({"message": super::takeover::RUN_START, "attempt": job.attempts + 1});
        if let Some(superseded) = self.superseded_by_this_run(&job.job_id).await {
            start["supersedes"] = superseded.to_json();
        }
        self.emit(&job.job_id, "status", start).await;
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
        let protocol = self.config.protocol;
        // A question is never checked for claims of edits; a text protocol answers it with
        // instructions for answering, not editing.
        let asked = protocol::is_question(&message);
        let question = !protocol.uses_tools() && asked;
        // The sections a text protocol shows (indices into `doc`), by their ids: the diff of a
        // `rewrite` answer is against what the model saw.
        let view: Vec<usize> = if protocol.uses_tools() { Vec::new() } else { focus::view(&doc, &message) };
        let view_ids: Vec<ChunkId> = view.iter().map(|&i| doc.sections()[i].id.clone()).collect();
        let system = if protocol.uses_tools() {
            prompt::system(&doc, &attachments)
        } else {
            let passages = match (&self.ports.attachments, attachments.is_empty()) {
                (Some(a), false) => a.search_passages(owner, session, &message, 3).await.unwrap_or_default(),
                _ => Vec::new(),
            };
            protocol::text_system(protocol, question, &doc, &view, &passages)
        };
        let mut messages = vec![Message::system(system)];
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
        let tool_specs = if protocol.uses_tools() { tools::specs() } else { Vec::new() };
        // Answers sent back to the model: edits that could not be applied, and claims of an
        // edit that did not happen.
        let mut fixes_left = MAX_FIXES;
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
            let called = std::time::Instant::now();
            let completion = tokio::select! {
                c = call => c,
                _ = cancelled(cancel) => { ending = Ending::Cancelled; break; }
                _ = tokio::time::sleep(Duration::from_millis(u64::try_from(remaining).unwrap_or(0))) => {
                    ending = Ending::OutOfTime;
                    break;
                }
            };
            let (prompt_tokens, completion_tokens) =
                completion.as_ref().map_or((0, 0), |c| (c.usage.prompt_tokens, c.usage.completion_tokens));
            self.telemetry.model_call(called.elapsed(), completion.is_ok(), prompt_tokens, completion_tokens);
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
            let mut content = completion.content.clone().unwrap_or_default();
            let mut calls = completion.tool_calls.clone();
            if protocol.uses_tools() && calls.is_empty() {
                // Tool calls written as text are run like real ones.
                let (found, rest) = textcalls::extract(&content, &tools::NAMES);
                if !found.is_empty() {
                    calls = found;
                    content = rest;
                }
            }
            messages.push(Message::assistant((!content.is_empty()).then(|| content.clone()), calls.clone()));
            if calls.is_empty() {
                let (requests, text) = match protocol {
                    EditProtocol::Tools => (Vec::new(), content),
                    _ if question => match rewrite::extract_html(&content) {
                        None => (Vec::new(), content),
                        Some((_, text)) if fixes_left > 0 && text.is_empty() => {
                            fixes_left -= 1;
                            messages
                                .push(Message::user("Answer the question in plain words, without HTML.".to_owned()));
                            continue;
                        }
                        Some((_, text)) => (Vec::new(), text),
                    },
                    EditProtocol::Blocks => blocks::parse(&content),
                    EditProtocol::Rewrite => match self.rewrite_requests(&ws, &view_ids, &message, &content).await {
                        Ok(parsed) => parsed,
                        Err(refused) if fixes_left > 0 => {
                            fixes_left -= 1;
                            messages.push(Message::user(refused.why));
                            continue;
                        }
                        Err(refused) => (Vec::new(), refused.text),
                    },
                };
                if !requests.is_empty() {
                    let mut events = Vec::new();
                    let mut failed = Vec::new();
                    for request in requests {
                        let answer = self.run_request(job, &mut ws, request, require_approval, &mut events).await;
                        if let Some(e) = answer.get("error").and_then(Value::as_str) {
                            failed.push(e.to_owned());
                        }
                    }
                    self.emit_all(&job.job_id, events).await;
                    if !failed.is_empty() && fixes_left > 0 {
                        fixes_left -= 1;
                        messages.push(Message::user(format!(
                            "These edits could not be applied: {}. The others were applied. Answer again with only the corrected edits.",
                            failed.join("; ")
                        )));
                        continue;
                    }
                }
                if protocol::echoes_instructions(&text) && fixes_left > 0 {
                    fixes_left -= 1;
                    messages.push(Message::user(format!(
                        "Your answer repeated the instructions instead of following them. {} If the request is a question or cannot be done, answer it in plain words.",
                        protocol.how_to_edit()
                    )));
                    continue;
                }
                let proposed = protocol != EditProtocol::Rewrite && protocol::proposes_html(&text);
                if !asked && ws.changes().is_empty() && proposed && fixes_left > 0 {
                    fixes_left -= 1;
                    messages.push(Message::user(format!(
                        "Your answer shows revised HTML, but showing it changes nothing in the document. {} If no change is needed, answer in plain words.",
                        protocol.how_to_edit()
                    )));
                    continue;
                }
                if !asked && ws.changes().is_empty() && protocol::claims_an_edit(&text) && fixes_left > 0 {
                    fixes_left -= 1;
                    messages.push(Message::user(format!(
                        "No change was made to the document, but your answer says there was. {} If no change is needed, answer again without claiming one.",
                        protocol.how_to_edit()
                    )));
                    continue;
                }
                ending = Ending::Answer(text);
                break;
            }
            // The round's events are written together (one transaction, one signal).
            let mut events = Vec::new();
            for call in &calls {
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
                let proposed = protocol != EditProtocol::Rewrite && protocol::proposes_html(&text);
                let text = honest_answer(text, ws.changes(), asked, proposed);
                self.finish(turn, record, base_version, ws, text, require_approval).await
            }
        }
    }
}

/// Answers sent back to the model in one turn: its edits that could not be applied, an html
/// block that could not be read, and a claim of an edit that did not happen.
const MAX_FIXES: usize = 2;

/// The answer the person reads: never a raw tool call or a repetition of Redline's
/// instructions, never a claim of an edit when nothing changed (unless the request was a
/// question: `asked`), and a summary of the changes when the model said nothing.
fn honest_answer(text: String, changes: &[redline_domain::job::Change], asked: bool, proposed: bool) -> String {
    if protocol::looks_like_a_tool_call(&text) || protocol::echoes_instructions(&text) || text.trim().is_empty() {
        return if changes.is_empty() { NO_CHANGE.to_owned() } else { summary(changes) };
    }
    if !asked && changes.is_empty() && proposed {
        return format!(
            "{NO_CHANGE} The AI proposed this change without making it; ask again to have it applied.\n\n{text}"
        );
    }
    if !asked && changes.is_empty() && protocol::claims_an_edit(&text) {
        return format!(
            "{NO_CHANGE} The AI described a change, but it did not make it; try asking again in other words."
        );
    }
    text
}

const NO_CHANGE: &str = "No change was made to the document.";

/// A `rewrite` answer that is sent back: what the model is told, and the text for the person
/// if no answer is left to send it back with.
struct Refused {
    why: String,
    text: String,
}

impl Chat {
    /// The edits of a `rewrite` answer: the difference between the sections in view (as they
    /// are now in the working copy) and the revised HTML; with the text for the person. An
    /// answer without html is a plain answer. Sections the answer leaves out are kept unless
    /// the request asks for something to go (a small model often answers with only the
    /// sections it changed). `Err` tells the model what to fix.
    async fn rewrite_requests(
        &self,
        ws: &Workspace,
        view_ids: &[ChunkId],
        message: &str,
        answer: &str,
    ) -> Result<(Vec<ToolRequest>, String), Refused> {
        let Some((html, text)) = rewrite::extract_html(answer) else {
            return Ok((Vec::new(), answer.to_owned()));
        };
        let refuse = |why: String| Refused { why, text: text.clone() };
        let revised =
            self.documents.sectionize(html).await.map_err(|e| {
                refuse(format!("Your html block could not be read ({e}). Answer again with valid HTML."))
            })?;
        let old: Vec<_> = view_ids.iter().filter_map(|id| ws.working.get(id)).cloned().collect();
        let sections = ws.working.sections();
        let before = old
            .first()
            .and_then(|first| sections.iter().position(|s| s.id == first.id))
            .and_then(|i| i.checked_sub(1))
            .map(|i| sections[i].id.clone());
        let mut requests = rewrite::diff(&old, &revised, before.as_ref());
        if asks_to_delete(message) {
            let deleted = requests.iter().filter(|r| matches!(r, ToolRequest::Delete { .. })).count();
            if old.len() >= 3 && deleted * 2 > old.len() {
                return Err(refuse(format!(
                    "Your html block leaves out {deleted} of the {} sections, which would delete them. Answer again with ALL the sections, changed or not, in one ```html block.",
                    old.len()
                )));
            }
        } else {
            requests.retain(|r| !matches!(r, ToolRequest::Delete { .. }));
        }
        if requests.is_empty() {
            return Err(refuse(format!(
                "Your html block changes nothing. Apply the request to the sections and answer again with the revised HTML in one ```html block; if the request cannot be done to this document, say so in plain text without HTML. The request: {message}"
            )));
        }
        Ok((requests, text))
    }
}

/// Whether a request asks for something to go (then a rewrite may drop sections).
fn asks_to_delete(message: &str) -> bool {
    let m = message.to_lowercase();
    [
        "delete",
        "remove",
        "drop",
        "cut",
        "erase",
        "shorten",
        "keep only",
        "only keep",
        "summar",
        "merge",
        "combine",
        "join",
        "move",
        "replace the",
        "get rid",
    ]
    .iter()
    .any(|w| m.contains(w))
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
}
