//! `DocumentStore`: versions of any size, written whole and listed in the order they were
//! committed.

use super::paging::versions_of;
use super::*;

/// A version's HTML is stored whole whatever its size (on SQLite, HTML of a megabyte or more
/// is written by a statement of its own after the rows), on a new session and on an existing
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
