//! `AttachmentStore` and `AttachmentSearch`: attachment rows that go with their session, the
//! passages indexed once (delete-then-insert in one transaction), a search confined to one
//! owner's session that takes any text, pre-signed uploads that start once, and deletes
//! that leave nothing in the full-text index.

use std::sync::Arc;

use redline_domain::job::{JobStatus, JobType};
use redline_domain::page::PageRequest;
use redline_domain::SessionId;
use redline_ports::attachments::{AttachmentRecord, AttachmentSource, AttachmentState, ExtractedText, Replaced};
use redline_ports::documents::{CommitOutcome, NewVersion};
use redline_ports::jobs::{JobRecord, JobUpdate};
use redline_ports::{AttachmentSearch, AttachmentStore, DocumentStore, JobStore};
use serde_json::json;

use super::*;

fn sid(s: &str) -> SessionId {
    SessionId::parse(s).expect("session id")
}

async fn owner(db: &Db, address: &str) -> Owner {
    Owner::User(new_user(db, web_user(address, T0)).await.id)
}

/// Creates the session (a first version).
async fn session(db: &Db, owner: Owner, session: &str) {
    let version = NewVersion {
        version_id: format!("v-{}", uuid::Uuid::new_v4().simple()),
        html: "<p data-chunk-id=\"c000000000001\">x</p>".to_owned(),
        section_count: 1,
        source: "save".to_owned(),
        title: None,
        now: T0,
    };
    let outcome = db.commit_version(owner, &sid(session), None, &version).await.unwrap();
    assert!(matches!(outcome, CommitOutcome::Committed(_)));
}

fn attachment(id: &str, owner: Owner, session: &str, created_at: Millis) -> AttachmentRecord {
    AttachmentRecord {
        attachment_id: id.to_owned(),
        owner,
        session_id: sid(session),
        filename: format!("{id}.txt"),
        content_type: "text/plain".to_owned(),
        size_bytes: 1234,
        state: AttachmentState::Processing,
        source: AttachmentSource::Upload,
        job_id: Some(format!("job-{id}")),
        error: None,
        preview: String::new(),
        text_chars: 0,
        passage_count: 0,
        created_at,
        updated_at: created_at,
        upload_expires_at: None,
        progress: 0,
    }
}

fn awaiting(id: &str, owner: Owner, session: &str, expires_at: Millis) -> AttachmentRecord {
    AttachmentRecord {
        state: AttachmentState::AwaitingUpload,
        source: AttachmentSource::Presigned,
        job_id: None,
        upload_expires_at: Some(expires_at),
        ..attachment(id, owner, session, T0)
    }
}

fn job(owner: Owner, id: &str, session: &str) -> JobRecord {
    JobRecord {
        job_id: id.to_owned(),
        owner,
        session_id: sid(session),
        job_type: JobType::AttachmentProcessing,
        status: JobStatus::Pending,
        progress: 0,
        attempts: 0,
        request: json!({"attachment_id": id}),
        result: None,
        error: None,
        metadata: json!({"filename": "a.txt", "file_size": 1, "content_type": "text/plain"}),
        state: json!({}),
        created_at: T0,
        updated_at: T0,
        finished_at: None,
        lease_until: None,
    }
}

fn text(passages: &[&str]) -> ExtractedText {
    ExtractedText {
        passages: passages.iter().map(|p| (*p).to_owned()).collect(),
        preview: passages.first().map(|p| (*p).to_owned()).unwrap_or_default(),
        text_chars: passages.iter().map(|p| p.chars().count() as i64).sum(),
    }
}

fn ids(passages: &[redline_ports::attachments::Passage]) -> Vec<(String, i64)> {
    passages.iter().map(|p| (p.attachment_id.clone(), p.chunk_index)).collect()
}

/// Every row of the FTS5 index still matches its content table (SQLite only).
async fn check_index(db: &Db) {
    if db.backend_name() == "sqlite" {
        let mut raw = RawConn::open(db).await;
        raw.execute("INSERT INTO attachment_fts (attachment_fts) VALUES ('integrity-check')").await;
    }
}

/// When the sweeper deletes a finished processing job, an attachment whose job failed or was
/// cancelled keeps the job's end: its state, error and progress. A completed job's attachment
/// (ready) and other owners' rows are left as they are.
pub async fn an_ended_job_leaves_its_end_on_the_attachment(db: &Db) {
    use redline_ports::jobs::SweepRules;
    let ann = owner(db, "ann-ends@example.com").await;
    session(db, ann, "s1").await;
    for id in ["cancelled", "failed", "marked", "ready", "running"] {
        let att = attachment(&format!("att_{id}"), ann, "s1", T0);
        db.insert_attachment(&att, Some(&job(ann, &format!("job-att_{id}"), "s1"))).await.unwrap();
    }
    let start =
        JobUpdate { status: Some(JobStatus::InProgress), lease_until: Some(Some(T0 + 60_000)), ..Default::default() };
    for id in ["cancelled", "failed", "marked", "ready", "running"] {
        let job_id = format!("job-att_{id}");
        db.update_job(&job_id, &[JobStatus::Pending], &start, T0 + 1).await.unwrap().unwrap();
        let step = JobUpdate { progress: Some(40), ..Default::default() };
        db.update_job(&job_id, &[JobStatus::InProgress], &step, T0 + 2).await.unwrap().unwrap();
    }
    let end = |status, error: &str| JobUpdate {
        status: Some(status),
        error: Some(error.to_owned()),
        lease_until: Some(None),
        ..Default::default()
    };
    db.update_job(
        "job-att_cancelled",
        &[JobStatus::InProgress],
        &end(JobStatus::Cancelled, "The job was cancelled."),
        T0 + 10,
    )
    .await
    .unwrap()
    .unwrap();
    db.update_job("job-att_failed", &[JobStatus::InProgress], &end(JobStatus::Failed, "interrupted 3 times"), T0 + 11)
        .await
        .unwrap()
        .unwrap();
    // A failure the worker wrote onto the attachment itself.
    assert!(db.mark_failed("att_marked", "the file is corrupt", T0 + 12).await.unwrap());
    db.update_job("job-att_marked", &[JobStatus::InProgress], &end(JobStatus::Failed, "the file is corrupt"), T0 + 12)
        .await
        .unwrap()
        .unwrap();
    let done = JobUpdate { status: Some(JobStatus::Completed), progress: Some(100), ..Default::default() };
    let kelp = text(&["Kelp."]);
    let replaced = db.replace_passages("att_ready", &kelp, Some(("job-att_ready", &done)), T0 + 13).await.unwrap();
    assert_eq!(replaced, Replaced::Ready);

    let sweep = db
        .sweep_jobs(&SweepRules {
            now: T0 + 100,
            delete_finished_before: T0 + 50,
            cancel_awaiting_before: T0,
            max_attempts: 3,
            requeue_leases_before: T0,
        })
        .await
        .unwrap();
    assert_eq!(sweep.deleted, 4);
    let row = |id: &'static str| async move { db.attachment(id).await.unwrap().unwrap() };
    let cancelled = row("att_cancelled").await;
    assert_eq!(
        (cancelled.state, cancelled.error.as_deref(), cancelled.progress, cancelled.updated_at),
        (AttachmentState::Cancelled, Some("The job was cancelled."), 40, T0 + 10)
    );
    let failed = row("att_failed").await;
    assert_eq!(
        (failed.state, failed.error.as_deref(), failed.progress, failed.updated_at),
        (AttachmentState::Failed, Some("interrupted 3 times"), 40, T0 + 11)
    );
    let marked = row("att_marked").await;
    assert_eq!(
        (marked.state, marked.error.as_deref(), marked.progress),
        (AttachmentState::Failed, Some("the file is corrupt"), 40)
    );
    let ready = row("att_ready").await;
    assert_eq!(
        (ready.state, ready.error, ready.progress, ready.updated_at),
        (AttachmentState::Ready, None, 0, T0 + 13)
    );
    let running = row("att_running").await;
    assert_eq!((running.state, running.progress), (AttachmentState::Processing, 0), "a job still running is its own");
    assert!(db.job("job-att_running").await.unwrap().is_some());
}

/// An attachment of 300 passages (written in parts, one per core, from 128 passages on):
/// each passage is found by its own word, at its place, also across the parts' boundaries,
/// and processing it again with fewer passages leaves nothing of the longer run.
pub async fn long_attachments_are_found_in_every_part(db: &Db) {
    let ann = owner(db, "ann-long@example.com").await;
    session(db, ann, "s1").await;
    db.insert_attachment(&attachment("att_long", ann, "s1", T0), None).await.unwrap();
    let texts: Vec<String> = (0..300).map(|i| format!("Passage about marker{i} and common words.")).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    db.replace_passages("att_long", &text(&refs), None, T0).await.unwrap();
    check_index(db).await;
    for i in [0, 1, 63, 64, 74, 75, 99, 100, 149, 150, 224, 225, 298, 299] {
        let hits = db.search_passages(ann, &sid("s1"), &format!("marker{i}"), 10).await.unwrap();
        assert_eq!(ids(&hits), [("att_long".to_owned(), i)], "marker{i}");
    }
    assert_eq!(db.search_passages(ann, &sid("s1"), "common", 100).await.unwrap().len(), 100);
    // Processed again with fewer passages: nothing of the longer run is left.
    db.replace_passages("att_long", &text(&refs[..40]), None, T0).await.unwrap();
    check_index(db).await;
    assert!(db.search_passages(ann, &sid("s1"), "marker50", 10).await.unwrap().is_empty());
    assert!(db.search_passages(ann, &sid("s1"), "marker150", 10).await.unwrap().is_empty());
    assert_eq!(db.search_passages(ann, &sid("s1"), "common", 100).await.unwrap().len(), 40);
    let mut raw = RawConn::open(db).await;
    assert_eq!(raw.count_where("attachment_passages", "attachment_id", "att_long").await, 40);
}

pub async fn attachments_belong_to_their_session(db: &Db) {
    let ann = owner(db, "ann-att@example.com").await;
    let bob = owner(db, "bob-att@example.com").await;

    // No session (for this owner) → NotFound, nothing recorded, the job neither.
    let r = db.insert_attachment(&attachment("att_a", ann, "s1", T0), Some(&job(ann, "job-att_a", "s1"))).await;
    assert!(matches!(r, Err(StoreError::NotFound)), "{r:?}");
    session(db, bob, "s1").await;
    let r = db.insert_attachment(&attachment("att_a", ann, "s1", T0), Some(&job(ann, "job-att_a", "s1"))).await;
    assert!(matches!(r, Err(StoreError::NotFound)), "bob's s1 is not ann's: {r:?}");
    assert_eq!(db.attachment("att_a").await.unwrap(), None);
    assert_eq!(db.job("job-att_a").await.unwrap(), None, "the job goes in the same transaction");
    assert_eq!(db.list_attachments(ann, &sid("s1"), T0, &PageRequest::first(100)).await.unwrap(), None);
    assert!(!db.session_exists(ann, &sid("s1")).await.unwrap());
    assert!(db.session_exists(bob, &sid("s1")).await.unwrap());

    session(db, ann, "s1").await;
    db.insert_attachment(&attachment("att_b", ann, "s1", T0 + 2), Some(&job(ann, "job-att_b", "s1"))).await.unwrap();
    db.insert_attachment(&attachment("att_a", ann, "s1", T0 + 1), None).await.unwrap();
    assert_eq!(db.attachment("att_a").await.unwrap(), Some(attachment("att_a", ann, "s1", T0 + 1)));
    assert_eq!(db.job("job-att_b").await.unwrap().map(|j| j.job_type), Some(JobType::AttachmentProcessing));
    assert_eq!(db.attachment_of_job("job-att_b").await.unwrap().map(|a| a.attachment_id), Some("att_b".into()));
    assert_eq!(db.attachment_of_job("job-none").await.unwrap(), None);

    let r = db.insert_attachment(&attachment("att_a", ann, "s1", T0), None).await;
    assert!(matches!(r, Err(StoreError::Duplicate(_))), "{r:?}");

    // Listings: oldest first, the owner's session only; expired pre-signed uploads are hidden.
    db.insert_attachment(&awaiting("att_late", ann, "s1", T0 + 10), None).await.unwrap();
    db.insert_attachment(&awaiting("att_open", ann, "s1", T0 + 1_000), None).await.unwrap();
    let listed = async |owner: Owner, now: Millis| {
        let page = db.list_attachments(owner, &sid("s1"), now, &PageRequest::first(100)).await.unwrap().unwrap();
        assert!(page.next.is_none());
        page.items.into_iter().map(|a| a.attachment_id).collect::<Vec<_>>()
    };
    assert_eq!(listed(ann, T0 + 5).await, ["att_late", "att_open", "att_a", "att_b"]);
    assert_eq!(listed(ann, T0 + 100).await, ["att_open", "att_a", "att_b"]);
    assert_eq!(listed(bob, T0).await, Vec::<String>::new());
    let mut all = db.session_attachment_ids(ann, &sid("s1")).await.unwrap();
    all.sort();
    assert_eq!(all, ["att_a", "att_b", "att_late", "att_open"]);

    // Expired uploads that never came are removed; nothing else is.
    assert_eq!(db.delete_expired_uploads(bob, T0 + 100).await.unwrap(), 0);
    assert_eq!(db.delete_expired_uploads(ann, T0 + 100).await.unwrap(), 1);
    assert_eq!(db.attachment("att_late").await.unwrap(), None);
    assert!(db.attachment("att_open").await.unwrap().is_some());

    // Deleting the session deletes its attachments.
    assert!(db.delete_session(ann, &sid("s1")).await.unwrap());
    assert_eq!(db.attachment("att_a").await.unwrap(), None);
    assert!(db.session_attachment_ids(ann, &sid("s1")).await.unwrap().is_empty());
}

/// The passages and their processing job's completion commit together; with a job no longer
/// in progress (finished, or not claimed) nothing is written, nor when the attachment is gone.
pub async fn the_job_completes_with_its_passages(db: &Db) {
    let ann = owner(db, "ann-jobdone@example.com").await;
    session(db, ann, "s1").await;
    db.insert_attachment(&attachment("att_done", ann, "s1", T0), Some(&job(ann, "job_done", "s1"))).await.unwrap();
    db.insert_attachment(&attachment("att_wait", ann, "s1", T0), Some(&job(ann, "job_wait", "s1"))).await.unwrap();
    let start =
        JobUpdate { status: Some(JobStatus::InProgress), lease_until: Some(Some(T0 + 60_000)), ..Default::default() };
    assert!(db.update_job("job_done", &[JobStatus::Pending], &start, T0 + 1).await.unwrap().is_some());
    let done = JobUpdate {
        status: Some(JobStatus::Completed),
        progress: Some(100),
        result: Some(json!({"attachment_id": "att_done", "passages": 2})),
        lease_until: Some(None),
        ..Default::default()
    };
    let soup = text(&["Zorblax soup is purple.", "Kelp at dawn."]);
    let replaced = db.replace_passages("att_done", &soup, Some(("job_done", &done)), T0 + 5).await.unwrap();
    assert_eq!(replaced, Replaced::Ready);
    let completed = db.job("job_done").await.unwrap().unwrap();
    assert_eq!((completed.status, completed.progress), (JobStatus::Completed, 100));
    assert_eq!(completed.result, Some(json!({"attachment_id": "att_done", "passages": 2})));
    assert_eq!((completed.finished_at, completed.lease_until, completed.updated_at), (Some(T0 + 5), None, T0 + 5));
    let ready = db.attachment("att_done").await.unwrap().unwrap();
    assert_eq!((ready.state, ready.passage_count, ready.updated_at), (AttachmentState::Ready, 2, T0 + 5));

    // Run again once the job is finished (a worker that lost it): nothing is written.
    let other = text(&["Other words entirely."]);
    let replaced = db.replace_passages("att_done", &other, Some(("job_done", &done)), T0 + 9).await.unwrap();
    assert_eq!(replaced, Replaced::NotRunning);
    assert_eq!(db.job("job_done").await.unwrap().unwrap().updated_at, T0 + 5);
    let unchanged = db.attachment("att_done").await.unwrap().unwrap();
    assert_eq!((unchanged.passage_count, unchanged.updated_at), (2, T0 + 5));
    let mut raw = RawConn::open(db).await;
    assert_eq!(raw.count_where("attachment_passages", "attachment_id", "att_done").await, 2);
    assert_eq!(ids(&db.search_passages(ann, &sid("s1"), "zorblax", 10).await.unwrap()), [("att_done".to_owned(), 0)]);
    assert!(db.search_passages(ann, &sid("s1"), "entirely", 10).await.unwrap().is_empty());

    // A job not claimed yet (queued again by the sweeper, say): nothing is written either.
    let replaced = db.replace_passages("att_wait", &soup, Some(("job_wait", &done)), T0 + 9).await.unwrap();
    assert_eq!(replaced, Replaced::NotRunning);
    assert_eq!(db.job("job_wait").await.unwrap().unwrap().status, JobStatus::Pending);
    assert_eq!(db.attachment("att_wait").await.unwrap().unwrap().state, AttachmentState::Processing);
    assert_eq!(raw.count_where("attachment_passages", "attachment_id", "att_wait").await, 0);

    // No such attachment: nothing written, the job (in progress) untouched.
    assert!(db.update_job("job_wait", &[JobStatus::Pending], &start, T0 + 10).await.unwrap().is_some());
    let replaced = db.replace_passages("att_none", &soup, Some(("job_wait", &done)), T0 + 11).await.unwrap();
    assert_eq!(replaced, Replaced::Gone);
    assert_eq!(db.job("job_wait").await.unwrap().unwrap().status, JobStatus::InProgress);
    check_index(db).await;
}

pub async fn passages_are_indexed_once_and_searchable(db: &Db) {
    let ann = owner(db, "ann-idx@example.com").await;
    let bob = owner(db, "bob-idx@example.com").await;
    session(db, ann, "s1").await;
    session(db, ann, "s2").await;
    session(db, bob, "s1").await;
    db.insert_attachment(&attachment("att_soup", ann, "s1", T0), None).await.unwrap();
    db.insert_attachment(&attachment("att_town", ann, "s1", T0 + 1), None).await.unwrap();
    db.insert_attachment(&attachment("att_other", ann, "s2", T0), None).await.unwrap();
    db.insert_attachment(&attachment("att_bob", bob, "s1", T0), None).await.unwrap();
    assert!(db.session_attachments(ann, &sid("s1")).await.unwrap().is_empty(), "nothing is ready yet");

    let soup = text(&[
        "Chapter one describes the harbour town and its quiet mornings.",
        "The secret ingredient of Zorblax soup is purple kelp harvested at dawn.",
        "Fishermen trade stories about storms they barely survived.",
    ]);
    // A retried job writes its passages again: still one copy of each.
    for _ in 0..2 {
        let replaced = db.replace_passages("att_soup", &soup, None, T0 + 5).await.unwrap();
        assert_eq!(replaced, Replaced::Ready);
    }
    let mut raw = RawConn::open(db).await;
    assert_eq!(raw.count_where("attachment_passages", "attachment_id", "att_soup").await, 3);
    let ready = db.attachment("att_soup").await.unwrap().unwrap();
    assert_eq!((ready.state, ready.passage_count, ready.text_chars), (AttachmentState::Ready, 3, soup.text_chars));
    assert_eq!(ready.preview, soup.preview);
    assert_eq!(ready.updated_at, T0 + 5);
    db.replace_passages("att_town", &text(&["The town market sells soup and bread.", "Nothing else here."]), None, T0)
        .await
        .unwrap();
    db.replace_passages("att_other", &text(&["Zorblax soup, from the other session."]), None, T0).await.unwrap();
    db.replace_passages("att_bob", &text(&["Zorblax soup is Bob's secret too."]), None, T0).await.unwrap();
    assert_eq!(db.replace_passages("att_gone", &soup, None, T0).await.unwrap(), Replaced::Gone, "no such attachment");
    check_index(db).await;
    if db.backend_name() == "postgres" {
        // The vectors travel in binary form; for plain words they are PostgreSQL's own.
        let sql = "SELECT count(*) AS n FROM attachment_passages \
                   WHERE tsv::text = to_tsvector('english', text)::text AND attachment_id IN ('att_soup', 'att_town')";
        assert_eq!(raw.count(sql).await, 5);
    }

    let hits = db.search_passages(ann, &sid("s1"), "What is the secret ingredient of Zorblax soup?", 10).await.unwrap();
    assert_eq!(hits[0].attachment_id, "att_soup");
    assert_eq!(hits[0].chunk_index, 1);
    assert_eq!(hits[0].filename, "att_soup.txt");
    assert!(hits[0].text.contains("purple kelp"));
    assert_eq!(ids(&hits), [("att_soup".to_owned(), 1), ("att_town".to_owned(), 0)], "any word matches, best first");
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score), "{hits:?}");
    assert!(hits.iter().all(|h| h.score > 0.0 && h.score.is_finite()), "{hits:?}");
    // Stemming: "harvest" finds "harvested".
    assert_eq!(ids(&db.search_passages(ann, &sid("s1"), "harvest", 10).await.unwrap()), [("att_soup".to_owned(), 1)]);
    // Confined to the owner's session.
    assert_eq!(ids(&db.search_passages(ann, &sid("s2"), "zorblax", 10).await.unwrap()), [("att_other".to_owned(), 0)]);
    assert_eq!(ids(&db.search_passages(bob, &sid("s1"), "zorblax", 10).await.unwrap()), [("att_bob".to_owned(), 0)]);
    assert!(db.search_passages(bob, &sid("s2"), "zorblax", 10).await.unwrap().is_empty());
    assert_eq!(db.search_passages(ann, &sid("s1"), "soup", 1).await.unwrap().len(), 1, "limit");

    let summaries = db.session_attachments(ann, &sid("s1")).await.unwrap();
    assert_eq!(summaries.iter().map(|s| s.attachment_id.as_str()).collect::<Vec<_>>(), ["att_soup", "att_town"]);

    // A failed re-processing removes the passages.
    assert!(db.mark_failed("att_town", "the file is corrupt", T0 + 9).await.unwrap());
    let failed = db.attachment("att_town").await.unwrap().unwrap();
    assert_eq!((failed.state, failed.error.as_deref()), (AttachmentState::Failed, Some("the file is corrupt")));
    assert!(db.search_passages(ann, &sid("s1"), "market bread", 10).await.unwrap().is_empty());
    assert!(!db.mark_failed("att_gone", "x", T0).await.unwrap());
    check_index(db).await;
}

pub async fn any_query_text_is_safe(db: &Db) {
    let ann = owner(db, "ann-q@example.com").await;
    session(db, ann, "s1").await;
    db.insert_attachment(&attachment("att_q", ann, "s1", T0), None).await.unwrap();
    db.replace_passages(
        "att_q",
        &text(&[
            "NEAR the col: value, say \"hi\" AND OR NOT * ^ -",
            "פסקה ראשונה על הים. המתכון הסודי כולל אצות סגולות.",
            "Grüße aus Köln, crème brûlée.",
        ]),
        None,
        T0,
    )
    .await
    .unwrap();
    let hostile = [
        "\"unbalanced",
        "NEAR(a b",
        "*",
        "a AND OR NOT",
        "col:val ^ -",
        "",
        "   ",
        "scope:z0 OR text:x",
        "'; DROP TABLE attachments; --",
        "a\"b\"\"c",
        "(((",
        "{text}:say",
        "\u{0}",
        "say*",
        "hi)",
    ];
    for q in hostile {
        let r = db.search_passages(ann, &sid("s1"), q, 10).await;
        assert!(r.is_ok(), "query {q:?}: {r:?}");
    }
    assert!(db.search_passages(ann, &sid("s1"), "", 10).await.unwrap().is_empty());
    assert!(db.search_passages(ann, &sid("s1"), "*", 10).await.unwrap().is_empty());
    let said = db.search_passages(ann, &sid("s1"), "say \"hi\"", 10).await.unwrap();
    assert_eq!(ids(&said), [("att_q".to_owned(), 0)]);
    let hebrew = db.search_passages(ann, &sid("s1"), "אצות", 10).await.unwrap();
    assert_eq!(ids(&hebrew), [("att_q".to_owned(), 1)]);
    assert!(hebrew[0].text.contains("אצות סגולות"));
    assert_eq!(ids(&db.search_passages(ann, &sid("s1"), "köln", 10).await.unwrap()), [("att_q".to_owned(), 2)]);
    assert!(db.search_passages(ann, &sid("s1"), "zzz", 0).await.unwrap().is_empty());
    assert!(db.search_passages(ann, &sid("s1"), "zzz", -3).await.unwrap().is_empty());
    assert!(attachments_table_intact(db).await);
}

async fn attachments_table_intact(db: &Db) -> bool {
    db.attachment("att_q").await.unwrap().is_some()
}

pub async fn deletes_leave_nothing_in_the_index(db: &Db) {
    let ann = owner(db, "ann-del@example.com").await;
    session(db, ann, "s1").await;
    db.insert_attachment(&attachment("att_1", ann, "s1", T0), None).await.unwrap();
    db.insert_attachment(&attachment("att_2", ann, "s1", T0), None).await.unwrap();
    db.replace_passages("att_1", &text(&["Zorblax soup is purple.", "Kelp at dawn."]), None, T0).await.unwrap();
    db.replace_passages("att_2", &text(&["Zorblax tea is green."]), None, T0).await.unwrap();
    assert_eq!(db.search_passages(ann, &sid("s1"), "zorblax", 10).await.unwrap().len(), 2);

    assert!(db.delete_attachment("att_1").await.unwrap());
    assert!(!db.delete_attachment("att_1").await.unwrap());
    let mut raw = RawConn::open(db).await;
    assert_eq!(raw.count_where("attachment_passages", "attachment_id", "att_1").await, 0);
    assert_eq!(ids(&db.search_passages(ann, &sid("s1"), "zorblax kelp", 10).await.unwrap()), [("att_2".to_owned(), 0)]);
    check_index(db).await;

    // The session goes, and with it every row and index entry of its attachments.
    assert!(db.delete_session(ann, &sid("s1")).await.unwrap());
    assert_eq!(raw.count_where("attachment_passages", "attachment_id", "att_2").await, 0);
    assert_eq!(raw.count_where("attachments", "owner", &ann.to_string()).await, 0);
    session(db, ann, "s1").await;
    assert!(db.search_passages(ann, &sid("s1"), "zorblax", 10).await.unwrap().is_empty());
    check_index(db).await;
}

/// An attachment deleted while its passages are being written leaves none behind: the
/// writer waits for the delete (the attachment's row is locked before the insert, as the
/// passages have no foreign key on PostgreSQL) and then finds the attachment gone.
pub async fn a_delete_during_processing_leaves_no_passages(db: &Db) {
    let ann = owner(db, "ann-race@example.com").await;
    session(db, ann, "s1").await;
    db.insert_attachment(&attachment("att_race", ann, "s1", T0), None).await.unwrap();
    let mut deleter = RawConn::open(db).await;
    let begin = if db.backend_name() == "sqlite" { "BEGIN IMMEDIATE" } else { "BEGIN" };
    deleter.execute(&format!("{begin}; DELETE FROM attachments WHERE attachment_id = 'att_race'")).await;
    let passages = text(&["Zorblax soup is purple.", "Kelp at dawn."]);
    let (replaced, ()) = tokio::join!(db.replace_passages("att_race", &passages, None, T0), async {
        // Until the writer waits for the row held.
        common::until_a_lock_is_awaited(db, "the writer").await;
        deleter.execute("COMMIT").await;
    });
    assert_eq!(replaced.unwrap(), Replaced::Gone);
    assert_eq!(deleter.count_where("attachment_passages", "attachment_id", "att_race").await, 0);
    assert!(db.search_passages(ann, &sid("s1"), "zorblax", 10).await.unwrap().is_empty());
    check_index(db).await;
}

/// Migration 000007 moved the lexemes into the application: passages indexed before it (by
/// the database's own tokenizer) are indexed again, once, when the database opens.
pub async fn passages_indexed_the_old_way_are_indexed_again(db: &Db) {
    let ann = owner(db, "ann-mig@example.com").await;
    session(db, ann, "s1").await;
    db.insert_attachment(&attachment("att_old", ann, "s1", T0), None).await.unwrap();
    db.insert_attachment(&attachment("att_other", ann, "s1", T0), None).await.unwrap();
    let old = text(&["Pandoc 0.3 was announced in 2006.", "Purple kelp is harvested at dawn; e-mail the harbour."]);
    db.replace_passages("att_old", &old, None, T0).await.unwrap();
    db.replace_passages("att_other", &text(&["Nothing about kelp here, only 3 pandas."]), None, T0).await.unwrap();

    // Back to 000006: the down migration of 000007 indexes the stored passages the old way.
    db.revert_migrations_after("20261122000006").await.expect("revert 000007 and what came after it");
    let mut raw = RawConn::open(db).await;
    assert_eq!(raw.count_where("attachment_passages", "attachment_id", "att_old").await, 2);
    // Forward again: the passages are listed for re-indexing, and indexed before it returns.
    db.run_pending_migrations().await.expect("apply 000007 again");
    assert_eq!(raw.count_where("attachment_reindex", "attachment_id", "att_old").await, 0);
    check_index(db).await;

    let hits = |q: &'static str| async move { ids(&db.search_passages(ann, &sid("s1"), q, 10).await.unwrap()) };
    assert_eq!(hits("harvest").await, [("att_old".to_owned(), 1)], "stemmed, and indexed once");
    assert_eq!(hits("pandoc 0.3").await[0], ("att_old".to_owned(), 0));
    assert_eq!(hits("0.3").await, [("att_old".to_owned(), 0)], "a phrase of its parts");
    assert_eq!(hits("e-mail").await, [("att_old".to_owned(), 1)]);
    assert_eq!(hits("kelp").await.len(), 2);
    // Opening again finds nothing left to do; new passages are indexed as they are written.
    db.run_pending_migrations().await.expect("nothing pending");
    db.replace_passages("att_other", &text(&["Kelp soup."]), None, T0).await.unwrap();
    assert_eq!(hits("soup").await, [("att_other".to_owned(), 0)]);
    assert_eq!(hits("kelp").await.len(), 2);
    check_index(db).await;
}

/// Lexemes lose the accents of Latin and Greek letters (and Hebrew and Arabic vowel points):
/// a query typed with or without them finds the text written either way; Cyrillic keeps its
/// marks. Migration 000013 lists every stored attachment to be indexed again by this lexer.
pub async fn accents_are_folded_and_stored_passages_indexed_again(db: &Db) {
    let ann = owner(db, "ann-accents@example.com").await;
    session(db, ann, "s1").await;
    db.insert_attachment(&attachment("att_acc", ann, "s1", T0), None).await.unwrap();
    let written = text(&["Η Αθήνα είναι η πρωτεύουσα.", "Un café au lait à Łódź, s'il vous plaît.", "Плохой йод."]);
    db.replace_passages("att_acc", &written, None, T0).await.unwrap();
    let hits = |q: &'static str| async move { ids(&db.search_passages(ann, &sid("s1"), q, 10).await.unwrap()) };
    let at = |n: i64| vec![("att_acc".to_owned(), n)];
    let check = || async {
        for q in ["αθηνα", "ΑΘΗΝΑ", "Αθήνα", "πρωτευουσα"] {
            assert_eq!(hits(q).await, at(0), "{q}");
        }
        for q in ["cafe", "CAFÉ", "café", "lodz", "plait"] {
            assert_eq!(hits(q).await, at(1), "{q}");
        }
        assert_eq!(hits("йод").await, at(2));
        assert!(hits("иод").await.is_empty(), "й is not и");
    };
    check().await;

    // Back to 000012 and forward: every stored attachment is listed, then indexed again
    // before the migrations return.
    db.revert_migrations_after("20261125000012").await.expect("revert 000013");
    let mut raw = RawConn::open(db).await;
    assert_eq!(raw.count_where("attachment_reindex", "attachment_id", "att_acc").await, 1, "listed on the way down");
    db.run_pending_migrations().await.expect("apply 000013 again");
    assert_eq!(raw.count("SELECT count(*) AS n FROM attachment_reindex").await, 0);
    assert_eq!(raw.count_where("attachment_passages", "attachment_id", "att_acc").await, 3);
    check_index(db).await;
    check().await;
}

pub async fn pre_signed_uploads_start_once(db: &Db) {
    let ann = owner(db, "ann-pre@example.com").await;
    session(db, ann, "s1").await;
    db.insert_attachment(&awaiting("att_p", ann, "s1", T0 + 1_000), None).await.unwrap();

    // After the window: refused, nothing changes.
    assert!(!db.start_processing("att_p", 5, &job(ann, "job-late", "s1"), T0 + 1_001).await.unwrap());
    assert_eq!(db.job("job-late").await.unwrap(), None);
    assert_eq!(db.attachment("att_p").await.unwrap().unwrap().state, AttachmentState::AwaitingUpload);

    // Concurrent arrivals: exactly one starts processing.
    let shared = common::shared(db);
    let mut tasks = Vec::new();
    for i in 0..8 {
        let db = Arc::clone(&shared);
        tasks.push(tokio::spawn(async move {
            let j = job(ann, &format!("job-{i}"), "s1");
            db.start_processing("att_p", 42, &j, T0 + 500).await.unwrap()
        }));
    }
    let mut started = 0;
    for t in tasks {
        if t.await.unwrap() {
            started += 1;
        }
    }
    assert_eq!(started, 1);
    let a = db.attachment("att_p").await.unwrap().unwrap();
    assert_eq!((a.state, a.size_bytes), (AttachmentState::Processing, 42));
    let job_id = a.job_id.expect("the job is recorded");
    assert_eq!(db.job(&job_id).await.unwrap().map(|j| j.status), Some(JobStatus::Pending));
    assert!(!db.start_processing("att_p", 42, &job(ann, "job-again", "s1"), T0 + 600).await.unwrap());
    assert!(!db.start_processing("att_nope", 1, &job(ann, "job-nope", "s1"), T0).await.unwrap());
    assert_eq!(db.delete_expired_uploads(ann, T0 + 10_000).await.unwrap(), 0, "it is no longer awaiting");
}

/// The owner's attachment bytes (the storage check of every upload) follow each insert, start
/// of a pre-signed upload, delete and session delete, and count no other owner's.
pub async fn attachment_bytes_follow_every_change(db: &Db) {
    let ann = owner(db, "ann-bytes@example.com").await;
    let bob = owner(db, "bob-bytes@example.com").await;
    for s in ["s1", "s2"] {
        session(db, ann, s).await;
    }
    session(db, bob, "s1").await;
    assert_eq!(db.attachment_bytes(ann).await.unwrap(), 0, "none yet");
    db.insert_attachment(&awaiting("att_w", ann, "s1", T0 + 1_000), None).await.unwrap();
    assert_eq!(db.attachment_bytes(ann).await.unwrap(), 0, "an upload not made yet counts nothing");
    db.insert_attachment(&attachment("att_1", ann, "s1", T0), None).await.unwrap();
    db.insert_attachment(&attachment("att_2", ann, "s2", T0), None).await.unwrap();
    db.insert_attachment(&attachment("att_b", bob, "s1", T0), None).await.unwrap();
    assert_eq!(db.attachment_bytes(ann).await.unwrap(), 2 * 1234);
    assert!(db.start_processing("att_w", 42, &job(ann, "job-w", "s1"), T0 + 500).await.unwrap());
    assert_eq!(db.attachment_bytes(ann).await.unwrap(), 2 * 1234 + 42, "the upload arrived");
    assert!(db.delete_attachment("att_1").await.unwrap());
    assert_eq!(db.attachment_bytes(ann).await.unwrap(), 1234 + 42);
    assert!(db.delete_session(ann, &sid("s2")).await.unwrap());
    assert_eq!(db.attachment_bytes(ann).await.unwrap(), 42, "the session's attachments went with it");
    assert_eq!(db.attachment_bytes(bob).await.unwrap(), 1234);
}

/// SQLite, migration 000011: passages written before it, numbered one after another across
/// sessions, move into their session's range of ids (the FTS5 rowids) in their order, are
/// indexed again, and are found in their own session only; later passages join the range.
pub async fn passages_move_into_their_sessions_rowid_ranges(db: &Db) {
    let ann = owner(db, "ann-ranges@example.com").await;
    let bob = owner(db, "bob-ranges@example.com").await;
    session(db, ann, "s1").await;
    session(db, ann, "s2").await;
    session(db, bob, "s1").await;
    let written =
        [("att_a1", ann, "s1", "zorblax"), ("att_b1", bob, "s1", "quindle"), ("att_a2", ann, "s2", "frobnic")];
    let written = [written[0], written[1], written[2], ("att_a1b", ann, "s1", "wuzzle")];
    for (id, who, s, word) in written {
        db.insert_attachment(&attachment(id, who, s, T0), None).await.unwrap();
        let (first, second) = (format!("Kelp and {word} at first."), format!("Then {word} again, and kelp."));
        db.replace_passages(id, &text(&[&first, &second]), None, T0).await.unwrap();
    }

    // Back to 000009, with the ids as that code gave them: one after another, the sessions
    // interleaved.
    db.revert_migrations_after("20261123000009").await.expect("revert 000011");
    let mut raw = RawConn::open(db).await;
    raw.execute(
        "UPDATE attachment_passages SET passage_id = r.n FROM (\
             SELECT passage_id AS old, row_number() OVER (ORDER BY chunk_index, attachment_id) AS n \
             FROM attachment_passages) AS r \
         WHERE attachment_passages.passage_id = r.old",
    )
    .await;
    assert_eq!(raw.count("SELECT count(*) AS n FROM attachment_passages WHERE passage_id BETWEEN 1 AND 8").await, 8);
    db.run_pending_migrations().await.expect("apply 000011 again");
    assert_eq!(raw.count("SELECT count(*) AS n FROM attachment_reindex").await, 0);
    check_index(db).await;

    // One range per session, the passages in their order within it.
    let ranges = "SELECT count(DISTINCT passage_id >> 32) AS n FROM attachment_passages";
    assert_eq!(raw.count(ranges).await, 3);
    let shared = "SELECT count(*) AS n FROM attachment_passages p JOIN attachment_passages q \
                  ON p.passage_id >> 32 = q.passage_id >> 32 AND p.scope <> q.scope";
    assert_eq!(raw.count(shared).await, 0, "no range holds two sessions");
    let disordered = "SELECT count(*) AS n FROM attachment_passages p JOIN attachment_passages q \
                      ON p.attachment_id = q.attachment_id AND p.chunk_index < q.chunk_index \
                      AND p.passage_id > q.passage_id";
    assert_eq!(raw.count(disordered).await, 0);

    let found = |who: Owner, s: &'static str, q: &'static str| async move {
        let mut hits = ids(&db.search_passages(who, &sid(s), q, 10).await.unwrap());
        hits.sort();
        hits
    };
    let both = |id: &str| [(id.to_owned(), 0), (id.to_owned(), 1)];
    let mut ann_s1 = both("att_a1").to_vec();
    ann_s1.extend(both("att_a1b"));
    assert_eq!(found(ann, "s1", "kelp").await, ann_s1);
    assert_eq!(found(ann, "s2", "kelp").await, both("att_a2"));
    assert_eq!(found(bob, "s1", "kelp").await, both("att_b1"));
    assert!(found(ann, "s2", "zorblax").await.is_empty());
    assert!(found(bob, "s1", "zorblax wuzzle frobnic").await.is_empty());

    // Written after the migration: in the same ranges, found as well.
    db.insert_attachment(&attachment("att_a3", ann, "s1", T0), None).await.unwrap();
    db.replace_passages("att_a3", &text(&["Kelp, newly."]), None, T0).await.unwrap();
    db.replace_passages("att_a2", &text(&["Frobnic soup only."]), None, T0).await.unwrap();
    check_index(db).await;
    assert_eq!(raw.count(ranges).await, 3);
    assert_eq!(raw.count(shared).await, 0);
    assert_eq!(found(ann, "s1", "kelp").await.len(), 5);
    assert!(found(ann, "s2", "kelp").await.is_empty());
    assert_eq!(found(ann, "s2", "soup").await, [("att_a2".to_owned(), 0)]);

    // Reverted and applied again, with the ranges numbered the other way round from how the
    // migration numbers the scopes (in the order of their tokens): each range's ids are
    // wanted by another scope's passages while they are still taken.
    db.revert_migrations_after("20261123000009").await.expect("revert 000011 again");
    raw.execute("UPDATE attachment_passages SET passage_id = -passage_id").await;
    raw.execute(
        "UPDATE attachment_passages SET passage_id = r.n FROM (\
             SELECT passage_id AS old, (dense_rank() OVER (ORDER BY scope DESC) << 32) \
                 + row_number() OVER (PARTITION BY scope ORDER BY passage_id DESC) AS n \
             FROM attachment_passages) AS r \
         WHERE attachment_passages.passage_id = r.old",
    )
    .await;
    db.run_pending_migrations().await.expect("apply 000011 over ids in other ranges");
    check_index(db).await;
    assert_eq!(raw.count(ranges).await, 3);
    assert_eq!(raw.count(shared).await, 0);
    assert_eq!(raw.count(disordered).await, 0);
    assert_eq!(found(ann, "s1", "kelp").await.len(), 5);
    assert_eq!(found(bob, "s1", "kelp").await, both("att_b1"));
    assert_eq!(found(ann, "s2", "soup").await, [("att_a2".to_owned(), 0)]);
}

/// SQLite: a session whose range of passage ids is used up refuses more passages with an
/// error, and writes nothing (not the passages, nor the job's completion); once the
/// passages at the end of the range go, the ids after the largest one left are free again.
pub async fn a_session_out_of_passage_ids_writes_nothing(db: &Db) {
    let ann = owner(db, "ann-full@example.com").await;
    session(db, ann, "s1").await;
    db.insert_attachment(&attachment("att_top", ann, "s1", T0), None).await.unwrap();
    db.replace_passages("att_top", &text(&["Kelp at the top.", "More kelp."]), None, T0).await.unwrap();
    let mut raw = RawConn::open(db).await;
    // Its two passages moved to the last two ids of the range (the index entries with them).
    raw.execute("DELETE FROM attachment_fts").await;
    raw.execute("UPDATE attachment_passages SET passage_id = ((passage_id >> 32) << 32) + 4294967294 + chunk_index")
        .await;
    raw.execute("INSERT INTO attachment_fts (rowid, text) SELECT passage_id, lower(text) FROM attachment_passages")
        .await;
    check_index(db).await;

    db.insert_attachment(&attachment("att_full", ann, "s1", T0), Some(&job(ann, "job-att_full", "s1"))).await.unwrap();
    let start =
        JobUpdate { status: Some(JobStatus::InProgress), lease_until: Some(Some(T0 + 60_000)), ..Default::default() };
    assert!(db.update_job("job-att_full", &[JobStatus::Pending], &start, T0).await.unwrap().is_some());
    let done = JobUpdate {
        status: Some(JobStatus::Completed),
        progress: Some(100),
        result: Some(json!({"attachment_id": "att_full"})),
        lease_until: Some(None),
        ..Default::default()
    };
    let r = db.replace_passages("att_full", &text(&["Kelp below."]), Some(("job-att_full", &done)), T0 + 1).await;
    let Err(StoreError::Other(message)) = r else { panic!("{r:?}") };
    assert!(message.contains("no passage numbers left"), "{message}");
    assert_eq!(raw.count_where("attachment_passages", "attachment_id", "att_full").await, 0);
    assert_eq!(db.job("job-att_full").await.unwrap().map(|j| j.status), Some(JobStatus::InProgress));
    assert_eq!(ids(&db.search_passages(ann, &sid("s1"), "kelp", 10).await.unwrap()).len(), 2);

    // The top goes: its ids are free again.
    assert!(db.delete_attachment("att_top").await.unwrap());
    let r = db.replace_passages("att_full", &text(&["Kelp below."]), Some(("job-att_full", &done)), T0 + 1).await;
    assert_eq!(r.unwrap(), Replaced::Ready);
    assert_eq!(ids(&db.search_passages(ann, &sid("s1"), "kelp", 10).await.unwrap()), [("att_full".to_owned(), 0)]);
    check_index(db).await;
}

/// PostgreSQL, migration 000011: one GIN index over (scope, tsv) replaces the B-tree on scope
/// and the GIN on tsv, and a search still finds its own session's passages only.
pub async fn one_gin_index_holds_the_scope_and_the_vector(db: &Db) {
    let mut raw = RawConn::open(db).await;
    let index = |name: &str| {
        format!("SELECT count(*) AS n FROM pg_indexes WHERE tablename = 'attachment_passages' AND indexname = '{name}'")
    };
    assert_eq!(raw.count(&index("attachment_passages_scope_tsv")).await, 1);
    assert_eq!(raw.count(&index("attachment_passages_scope")).await, 0);
    assert_eq!(raw.count(&index("attachment_passages_tsv")).await, 0);
    let definition = "SELECT count(*) AS n FROM pg_indexes WHERE indexname = 'attachment_passages_scope_tsv' \
                      AND indexdef LIKE '%USING gin (scope, tsv)%'";
    assert_eq!(raw.count(definition).await, 1);

    searches_stay_in_their_session(db, "gin").await;
}

/// Two owners' sessions of the same name, with passages sharing words: each search finds
/// its own session's passages only, best first.
async fn searches_stay_in_their_session(db: &Db, tag: &str) {
    let ann = owner(db, &format!("ann-{tag}@example.com")).await;
    let bob = owner(db, &format!("bob-{tag}@example.com")).await;
    session(db, ann, "s1").await;
    session(db, bob, "s1").await;
    db.insert_attachment(&attachment("att_ann", ann, "s1", T0), None).await.unwrap();
    db.insert_attachment(&attachment("att_bob", bob, "s1", T0), None).await.unwrap();
    db.replace_passages("att_ann", &text(&["Kelp soup at the harbour.", "Kelp at dawn."]), None, T0).await.unwrap();
    db.replace_passages("att_bob", &text(&["Kelp soup for bob."]), None, T0).await.unwrap();
    let found = db.search_passages(ann, &sid("s1"), "kelp soup", 10).await.unwrap();
    assert_eq!(ids(&found), [("att_ann".to_owned(), 0), ("att_ann".to_owned(), 1)]);
    assert_eq!(ids(&db.search_passages(bob, &sid("s1"), "kelp", 10).await.unwrap()), [("att_bob".to_owned(), 0)]);
}

/// PostgreSQL, migration 000011, where the database refuses to create the btree_gin extension:
/// the migration still succeeds, the B-tree on scope and the GIN on tsv stay, and a search
/// works and stays within its session.
pub async fn without_btree_gin_the_two_indexes_stay(db: &Db) {
    let mut raw = RawConn::open(db).await;
    assert_eq!(raw.count("SELECT count(*) AS n FROM pg_extension WHERE extname = 'btree_gin'").await, 0);
    let index = |name: &str| {
        format!("SELECT count(*) AS n FROM pg_indexes WHERE tablename = 'attachment_passages' AND indexname = '{name}'")
    };
    assert_eq!(raw.count(&index("attachment_passages_scope")).await, 1);
    assert_eq!(raw.count(&index("attachment_passages_tsv")).await, 1);
    assert_eq!(raw.count(&index("attachment_passages_scope_tsv")).await, 0);

    searches_stay_in_their_session(db, "nogin").await;
}
