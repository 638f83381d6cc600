//! `DocumentStore`: versions of any size, stored by what changed, read back whole, listed in
//! the order they were committed; versions written whole before chunks are converted.

use super::paging::versions_of;
use super::*;

/// A version's HTML reads back whole whatever its size, on a new session and on an existing
/// one, and a stale commit of a large version writes nothing.
pub async fn versions_of_any_size_round_trip(db: &Db) {
    use redline_ports::documents::{CommitOutcome, NewVersion};
    use redline_ports::DocumentStore;
    let ann = Owner::User(UserId::new());
    let big = |tag: &str| -> String {
        (0..30_000).map(|i| format!("<p data-chunk-id=\"{tag}{i}\">Paragraph {i} of {tag}.</p>\n")).collect()
    };
    let version = |id: &str, html: String, now: Millis| NewVersion {
        version_id: id.to_owned(),
        html,
        section_count: 30_000,
        source: "upload".to_owned(),
        title: Some("Big".to_owned()),
        now,
    };
    for (session, first_html) in [("small-first", "<p>small</p>\n".to_owned()), ("big-first", big("a"))] {
        let s = redline_domain::SessionId::parse(session).unwrap();
        // A new session, then the same one again (its row is updated).
        let first = db.commit_new_version(ann, &s, Some(None), version("v1", first_html.clone(), T0)).await.unwrap();
        let CommitOutcome::Committed(first) = first else { panic!("{session}: the first commit is not stale") };
        assert_eq!(first.html, first_html, "{session}: the record answered holds the HTML");
        let second_html = big("b");
        assert!(second_html.len() > 1 << 20, "large enough for the separate write");
        let second = db
            .commit_new_version(ann, &s, Some(Some("v1".to_owned())), version("v2", second_html.clone(), T0 + 1))
            .await
            .unwrap();
        assert!(matches!(&second, CommitOutcome::Committed(r) if r.html == second_html), "{session}");
        // A stale commit of a large version changes nothing.
        let stale =
            db.commit_new_version(ann, &s, Some(Some("v1".to_owned())), version("v3", big("c"), T0 + 2)).await.unwrap();
        assert_eq!(stale, CommitOutcome::Stale { current_version: Some("v2".to_owned()) }, "{session}");
        let doc = db.document(ann, &s).await.unwrap().unwrap();
        assert_eq!((doc.version_id.as_deref(), doc.html == second_html), (Some("v2"), true), "{session}");
        assert_eq!(db.version(ann, &s, "v1").await.unwrap().map(|v| v.html), Some(first_html), "{session}");
        assert_eq!(db.version(ann, &s, "v2").await.unwrap().map(|v| v.html), Some(second_html), "{session}");
        assert_eq!(db.version(ann, &s, "v3").await.unwrap(), None, "{session}: nothing of the stale commit");
        // Version ids are global: the next session uses the same ones after this is gone.
        assert!(db.delete_session(ann, &s).await.unwrap());
    }

    // Commits in one millisecond (or stamped earlier than the last: a replica's clock
    // behind) are listed newest first in the order they were made.
    let s = redline_domain::SessionId::parse("same-millisecond").unwrap();
    let small =
        |id: &str, now: Millis| NewVersion { html: format!("<p>{id}</p>\n"), ..version(id, String::new(), now) };
    let ids: Vec<String> = (0..8).map(|i| format!("z{}", 8 - i)).collect();
    for (i, id) in ids.iter().enumerate() {
        let now = if i == 5 { T0 + 5 } else { T0 + 10 };
        db.commit_new_version(ann, &s, None, small(id, now)).await.unwrap();
    }
    let listed: Vec<String> = versions_of(db, ann, &s).await.into_iter().map(|v| v.version_id).collect();
    let newest_first: Vec<String> = ids.iter().rev().cloned().collect();
    assert_eq!(listed, newest_first);
    let doc = db.document(ann, &s).await.unwrap().unwrap();
    assert_eq!(doc.updated_at, T0 + 10 + 7, "each commit a millisecond after the one before");
}

fn paragraphs(n: usize) -> String {
    (0..n)
        .map(|i| format!("<p data-chunk-id=\"p{i}\">Paragraph {i} of the document, steady words, number {i}.</p>"))
        .collect()
}

/// Bytes of stored chunks of the database.
async fn chunk_bytes(raw: &mut RawConn) -> i64 {
    raw.count("SELECT CAST(COALESCE(SUM(LENGTH(body)), 0) AS BIGINT) AS n FROM document_chunks").await
}

/// A save that changes one word of a 5 KB document stores about one compressed chunk, not
/// the document again; a restore of an earlier version stores no chunk at all; every version
/// reads back whole; deleting the session deletes its chunks.
pub async fn a_save_stores_only_what_changed(db: &Db) {
    use redline_ports::documents::NewVersion;
    use redline_ports::DocumentStore;
    let ann = Owner::User(UserId::new());
    let s = redline_domain::SessionId::parse("one-word").unwrap();
    let version = |id: &str, html: &str, now: Millis| NewVersion {
        version_id: id.to_owned(),
        html: html.to_owned(),
        section_count: 40,
        source: "edit".to_owned(),
        title: None,
        now,
    };
    let mut raw = RawConn::open(db).await;
    let first = paragraphs(60);
    db.commit_new_version(ann, &s, None, version("w1", &first, T0)).await.unwrap();
    let after_first = chunk_bytes(&mut raw).await;
    assert!(after_first > 0 && after_first < first.len() as i64 / 2, "compressed: {after_first} of {}", first.len());
    let mut html = first.clone();
    for i in 0..10 {
        html = html.replacen(&format!("number {}.", 5 * i + 3), &format!("number {}!", 5 * i + 3), 1);
        let before = chunk_bytes(&mut raw).await;
        db.commit_new_version(ann, &s, None, version(&format!("w{}", i + 2), &html, T0 + 1 + i)).await.unwrap();
        let added = chunk_bytes(&mut raw).await - before;
        assert!((1..=1200).contains(&added), "save {i}: {added} bytes of chunks for a one-word change");
    }
    let before = chunk_bytes(&mut raw).await;
    db.commit_new_version(ann, &s, None, version("restored", &first, T0 + 20)).await.unwrap();
    assert_eq!(chunk_bytes(&mut raw).await, before, "the restored version's chunks are all there");
    assert_eq!(db.version(ann, &s, "w1").await.unwrap().unwrap().html, first);
    assert_eq!(db.version(ann, &s, "w11").await.unwrap().unwrap().html, html);
    assert_eq!(db.document(ann, &s).await.unwrap().unwrap().html, first);
    // Several versions of several sessions read together (a listing of jobs), each as alone.
    let other = redline_domain::SessionId::parse("other").unwrap();
    let small = paragraphs(5);
    db.commit_new_version(ann, &other, None, version("o1", &small, T0 + 30)).await.unwrap();
    let wanted = |pairs: &[(&redline_domain::SessionId, &str)]| {
        pairs.iter().map(|(s, v)| ((*s).clone(), (*v).to_owned())).collect::<Vec<_>>()
    };
    let got = db.versions_html(ann, &wanted(&[(&s, "w1"), (&s, "w11"), (&other, "o1"), (&s, "none")])).await.unwrap();
    assert_eq!(got.len(), 3, "a version not found is left out");
    assert_eq!((&got["w1"], &got["w11"], &got["o1"]), (&first, &html, &small));
    let elsewhere = db.versions_html(ann, &wanted(&[(&other, "w1")])).await.unwrap();
    assert!(elsewhere.is_empty(), "a version answers only under its own session");
    let stranger = Owner::User(UserId::new());
    assert!(db.versions_html(stranger, &wanted(&[(&s, "w1")])).await.unwrap().is_empty(), "nor to another owner");
    assert!(db.delete_session(ann, &other).await.unwrap());
    assert!(db.delete_session(ann, &s).await.unwrap());
    assert_eq!(raw.count("SELECT COUNT(*) AS n FROM document_chunks").await, 0, "the session's chunks are gone");
}

/// Versions stored whole before migration 000021 (and the current HTML on the session row)
/// are stored as chunks when the migrations run again, and read back as they were.
pub async fn versions_stored_whole_are_converted(db: &Db) {
    use redline_ports::DocumentStore;
    let ann = Owner::User(UserId::new());
    db.revert_migrations_after("20261129000020").await.expect("revert 000021");
    let mut raw = RawConn::open(db).await;
    let old = paragraphs(30);
    let new = paragraphs(31);
    raw.execute(&format!(
        "INSERT INTO sessions (owner, session_id, title, created_at, updated_at, version_id, section_count, html) \
         VALUES ('{ann}', 'legacy', NULL, {T0}, {T0}, 'old2', 31, '{new}'); \
         INSERT INTO document_versions (version_id, owner, session_id, html, section_count, source, created_at) \
         VALUES ('old1', '{ann}', 'legacy', '{old}', 30, 'upload', {T0}); \
         INSERT INTO document_versions (version_id, owner, session_id, html, section_count, source, created_at) \
         VALUES ('old2', '{ann}', 'legacy', '{new}', 31, 'edit', {T0})"
    ))
    .await;
    db.run_pending_migrations().await.expect("apply 000021 again");
    let s = redline_domain::SessionId::parse("legacy").unwrap();
    assert_eq!(db.version(ann, &s, "old1").await.unwrap().unwrap().html, old);
    assert_eq!(db.version(ann, &s, "old2").await.unwrap().unwrap().html, new);
    let doc = db.document(ann, &s).await.unwrap().unwrap();
    assert_eq!((doc.html, doc.version_id.as_deref()), (new, Some("old2")));
    assert_eq!(raw.count("SELECT COUNT(*) AS n FROM document_versions WHERE chunks IS NULL OR html <> ''").await, 0);
    assert!(raw.count("SELECT COUNT(*) AS n FROM document_chunks").await > 0);
}
