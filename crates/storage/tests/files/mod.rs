//! `FileIndex`: the rows of images and exports kept in the blob store.

use redline_domain::time_util::Millis;
use redline_domain::{Owner, SessionId, UserId};
use redline_ports::documents::{CommitOutcome, NewVersion};
use redline_ports::files::{ExportFileRecord, ImageRecord, SessionFiles};
use redline_ports::{DocumentStore, FileIndex, StoreError};
use redline_storage::Db;

const T0: Millis = 1_800_000_000_000;

fn sid(s: &str) -> SessionId {
    SessionId::parse(s).unwrap()
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

fn image(id: &str, owner: Owner, session: &str) -> ImageRecord {
    ImageRecord {
        image_id: id.to_owned(),
        owner,
        session_id: sid(session),
        content_type: "image/png".to_owned(),
        size_bytes: 42,
        created_at: T0,
    }
}

fn export(id: &str, owner: Owner, session: &str, expires_at: Millis) -> ExportFileRecord {
    ExportFileRecord {
        export_id: id.to_owned(),
        owner,
        session_id: sid(session),
        format: "docx".to_owned(),
        filename: format!("{session}.docx"),
        content_type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document".to_owned(),
        size_bytes: 1234,
        created_at: T0,
        expires_at,
    }
}

pub async fn images_and_exports_belong_to_their_session(db: &Db) {
    let ann = Owner::User(UserId::new());
    let bob = Owner::User(UserId::new());

    // A session that does not exist (for this owner) records nothing.
    let r = db.insert_images(&[image("img_a", ann, "s1")]).await;
    assert!(matches!(r, Err(StoreError::NotFound)), "{r:?}");
    session(db, bob, "s1").await;
    let r = db.insert_images(&[image("img_a", ann, "s1")]).await;
    assert!(matches!(r, Err(StoreError::NotFound)), "bob's s1 is not ann's: {r:?}");
    assert_eq!(db.image("img_a").await.unwrap(), None);

    session(db, ann, "s1").await;
    db.insert_images(&[]).await.unwrap();
    db.insert_images(&[image("img_b", ann, "s1"), image("img_a", ann, "s1")]).await.unwrap();
    assert_eq!(db.image("img_a").await.unwrap(), Some(image("img_a", ann, "s1")));
    assert_eq!(db.image("img_zz").await.unwrap(), None);

    // All or nothing, and ids are unique.
    let r = db.insert_images(&[image("img_c", ann, "s1"), image("img_a", bob, "s1")]).await;
    assert!(matches!(r, Err(StoreError::Duplicate(_))), "{r:?}");
    assert_eq!(db.image("img_c").await.unwrap(), None, "the batch is one transaction");

    assert!(matches!(db.insert_export(&export("exp_1", ann, "nope", T0)).await, Err(StoreError::NotFound)));
    db.insert_export(&export("exp_1", ann, "s1", T0 + 10)).await.unwrap();
    assert_eq!(db.export_file("exp_1").await.unwrap(), Some(export("exp_1", ann, "s1", T0 + 10)));
    assert!(matches!(db.insert_export(&export("exp_1", ann, "s1", T0)).await, Err(StoreError::Duplicate(_))));
    db.insert_images(&[image("img_bob", bob, "s1")]).await.unwrap();

    assert_eq!(
        db.session_files(ann, &sid("s1")).await.unwrap(),
        SessionFiles { image_ids: vec!["img_a".into(), "img_b".into()], export_ids: vec!["exp_1".into()] }
    );
    assert_eq!(
        db.session_files(bob, &sid("s1")).await.unwrap(),
        SessionFiles { image_ids: vec!["img_bob".into()], export_ids: vec![] }
    );
    assert_eq!(db.session_files(ann, &sid("other")).await.unwrap(), SessionFiles::default());

    // The rows go with their session, and only with it.
    assert!(db.delete_session(ann, &sid("s1")).await.unwrap());
    assert_eq!(db.image("img_a").await.unwrap(), None);
    assert_eq!(db.image("img_b").await.unwrap(), None);
    assert_eq!(db.export_file("exp_1").await.unwrap(), None);
    assert_eq!(db.session_files(ann, &sid("s1")).await.unwrap(), SessionFiles::default());
    assert_eq!(db.image("img_bob").await.unwrap(), Some(image("img_bob", bob, "s1")));
}

pub async fn expired_exports_are_taken_once(db: &Db) {
    let ann = Owner::User(UserId::new());
    session(db, ann, "s1").await;
    for (id, expires_at) in [("exp_1", T0 + 1), ("exp_2", T0 + 5), ("exp_3", T0 + 10)] {
        db.insert_export(&export(id, ann, "s1", expires_at)).await.unwrap();
    }
    assert!(db.take_expired_exports(T0).await.unwrap().is_empty());
    let mut taken = db.take_expired_exports(T0 + 6).await.unwrap();
    taken.sort();
    assert_eq!(taken, ["exp_1", "exp_2"]);
    assert!(db.take_expired_exports(T0 + 6).await.unwrap().is_empty(), "taken once");
    assert_eq!(db.export_file("exp_1").await.unwrap(), None);
    assert!(db.export_file("exp_3").await.unwrap().is_some());
    assert_eq!(db.session_files(ann, &sid("s1")).await.unwrap().export_ids, ["exp_3"]);
}
