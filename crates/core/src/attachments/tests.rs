//! The pure parts of the attachments use case: the status shown for each state of an
//! attachment and its job, the text kept from extraction, ids and blob keys. The whole flow
//! runs against the real adapters in the API tests (`crates/app/tests/api/attachments.rs`).

use redline_domain::UserId;

use super::*;

const T0: Millis = 1_800_000_000_000;

fn record(state: AttachmentState) -> AttachmentRecord {
    AttachmentRecord {
        attachment_id: new_attachment_id(),
        owner: Owner::User(UserId::new()),
        session_id: SessionId::parse("s1").unwrap(),
        filename: "a.txt".into(),
        content_type: "text/plain".into(),
        size_bytes: 3,
        state,
        source: AttachmentSource::Upload,
        job_id: Some("j1".into()),
        error: (state == AttachmentState::Failed).then(|| "the file is corrupt".to_owned()),
        preview: String::new(),
        text_chars: 0,
        passage_count: 0,
        created_at: T0,
        updated_at: T0,
        upload_expires_at: None,
        progress: 0,
    }
}

fn job(status: JobStatus, progress: i32, error: Option<&str>) -> JobRecord {
    JobRecord {
        job_id: "j1".into(),
        owner: Owner::User(UserId::new()),
        session_id: SessionId::parse("s1").unwrap(),
        job_type: JobType::AttachmentProcessing,
        status,
        progress,
        attempts: 1,
        request: json!({}),
        result: None,
        error: error.map(str::to_owned),
        metadata: json!({}),
        state: json!({}),
        created_at: T0,
        updated_at: T0,
        finished_at: None,
        lease_until: None,
    }
}

fn shown(v: AttachmentView) -> (String, i32, Option<String>) {
    (v.status, v.progress, v.error)
}

#[test]
fn the_status_follows_the_job_while_processing() {
    let p = || record(AttachmentState::Processing);
    assert_eq!(shown(view(p(), Some(&job(JobStatus::Pending, 0, None)))), ("pending".into(), 0, None));
    assert_eq!(shown(view(p(), Some(&job(JobStatus::InProgress, 25, None)))), ("in_progress".into(), 25, None));
    assert_eq!(
        shown(view(p(), Some(&job(JobStatus::Cancelled, 10, Some("The job was cancelled."))))),
        ("cancelled".into(), 10, Some("The job was cancelled.".into()))
    );
    let (status, _, error) = shown(view(p(), None));
    assert_eq!(status, "failed");
    assert!(error.unwrap().contains("upload the file again"));
    // The job's last change (a cancel, progress) is the attachment's too; never earlier.
    let cancelled = JobRecord { updated_at: T0 + 5_000, ..job(JobStatus::Cancelled, 10, None) };
    assert_eq!(view(p(), Some(&cancelled)).record.updated_at, T0 + 5_000);
    let older = JobRecord { updated_at: T0 - 5_000, ..job(JobStatus::InProgress, 10, None) };
    assert_eq!(view(p(), Some(&older)).record.updated_at, T0);
}

#[test]
fn finished_attachments_speak_for_themselves() {
    assert_eq!(shown(view(record(AttachmentState::Ready), None)), ("completed".into(), 100, None));
    assert_eq!(
        shown(view(record(AttachmentState::Failed), Some(&job(JobStatus::Failed, 25, Some("x"))))),
        ("failed".into(), 25, Some("the file is corrupt".into()))
    );
    assert_eq!(shown(view(record(AttachmentState::AwaitingUpload), None)), ("awaiting_upload".into(), 0, None));
    // Once its job is deleted, the end the sweeper copied onto the row is shown.
    let kept = |state| AttachmentRecord { progress: 40, error: Some("why".into()), ..record(state) };
    assert_eq!(shown(view(kept(AttachmentState::Failed), None)), ("failed".into(), 40, Some("why".into())));
    assert_eq!(shown(view(kept(AttachmentState::Cancelled), None)), ("cancelled".into(), 40, Some("why".into())));
}

#[test]
fn extracted_text_keeps_a_preview_and_counts() {
    let blocks = vec![TextBlock::new("Title", true), TextBlock::new("x".repeat(3000), false)];
    let text = extracted_text(&blocks);
    assert_eq!(text.text_chars, 3005);
    assert_eq!(text.preview.chars().count(), PREVIEW_CHARS);
    assert!(text.preview.starts_with("Title\nxxx"));
    assert_eq!(text.passages.len(), 4);
    assert!(text.passages[1].starts_with("Title\nxxx"), "later passages carry their heading");
    assert_eq!(extracted_text(&[]), ExtractedText::default());
}

#[test]
fn ids_and_keys() {
    let id = new_attachment_id();
    assert!(is_attachment_id(&id), "{id}");
    assert_ne!(id, new_attachment_id());
    for bad in ["", "att_", "00000000-0000-4000-8000-000000000000", "\u{0}", &format!("{id}0"), "../att_x"] {
        assert!(!is_attachment_id(bad), "{bad:?}");
    }
    let key = new_blob_key(&id);
    assert!(key.starts_with(&blob_prefix(&id)) && key.len() > blob_prefix(&id).len());
    assert_ne!(key, new_blob_key(&id));
}

#[test]
fn names_are_neutralised_before_their_extension_is_checked() {
    assert_eq!(checked_name("../../x/notes.MD").unwrap(), ("notes.MD".to_owned(), SourceFormat::Markdown));
    let e = checked_name("old.doc").unwrap_err();
    assert!(matches!(e, AttachmentError::Unsupported(ref u) if u.extension == ".doc"), "{e:?}");
    assert!(matches!(checked_name("evil.txt\u{0}.exe"), Err(AttachmentError::Unsupported(_))));
}
