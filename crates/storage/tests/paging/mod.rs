//! Keyset paging of the listings beside sessions and jobs (`sessions/mod.rs`) and templates
//! (`templates/mod.rs`): attachments, versions, the chat history, keys, a user's organizations
//! and an organization's members. Each is read a few items at a time through items that share
//! their sort time (the id settles the order), and every item is seen once, in listing order,
//! with nothing of another owner, session, organization or member.

use redline_domain::page::{Page, PageRequest};
use redline_domain::SessionId;
use redline_ports::attachments::{AttachmentRecord, AttachmentSource, AttachmentState};
use redline_ports::documents::VersionRecord;
use redline_ports::jobs::HistoryMessage;
use redline_ports::{AttachmentStore, DocumentStore, HistoryStore};

use super::sessions::page_through;
use super::*;

/// Items a page holds in these tests: fewer than the items, so that ties span pages.
const LIMIT: usize = 3;

fn sid(s: &str) -> SessionId {
    SessionId::parse(s).expect("session id")
}

/// The items of a listing read as one page (of a size no test reaches).
fn whole<T>(page: Page<T>) -> Vec<T> {
    assert!(page.next.is_none(), "one page holds the whole listing");
    page.items
}

fn first_page() -> PageRequest {
    PageRequest::first(10_000)
}

/// The owner's keys, whole.
pub async fn keys_of(db: &Db, owner: Owner) -> Vec<KeyRecord> {
    whole(db.keys_of(owner, &first_page()).await.unwrap())
}

/// The user's organizations, whole.
pub async fn orgs_of(db: &Db, user: UserId) -> Vec<OrgRecord> {
    whole(db.orgs_of_user(user, &first_page()).await.unwrap())
}

/// The organization's members, whole.
pub async fn members_of(db: &Db, org: OrgId) -> Vec<MemberRecord> {
    whole(db.members(org, &first_page()).await.unwrap())
}

/// The versions of the session's document, whole.
pub async fn versions_of(db: &Db, owner: Owner, session: &SessionId) -> Vec<VersionRecord> {
    whole(db.versions(owner, session, &first_page()).await.unwrap())
}

/// Rows `(time, id)` in the order a listing by `(time, id)` gives them, ascending or not.
fn sorted<T: Clone>(items: &[T], key: impl Fn(&T) -> (Millis, String), ascending: bool) -> Vec<T> {
    let mut items = items.to_vec();
    items.sort_by(|a, b| if ascending { key(a).cmp(&key(b)) } else { key(b).cmp(&key(a)) });
    items
}

fn attachment(id: String, owner: Owner, session: &str, created_at: Millis) -> AttachmentRecord {
    AttachmentRecord {
        attachment_id: id.clone(),
        owner,
        session_id: sid(session),
        filename: format!("{id}.txt"),
        content_type: "text/plain".to_owned(),
        size_bytes: 10,
        state: AttachmentState::Ready,
        source: AttachmentSource::Upload,
        job_id: None,
        error: None,
        preview: String::new(),
        text_chars: 0,
        passage_count: 0,
        created_at,
        updated_at: created_at,
        upload_expires_at: None,
        progress: 100,
    }
}

/// Attachments created in the same millisecond, three at a time, inserted newest first: the
/// pages give them oldest first, ties by id, without another session's or owner's and
/// without a pre-signed upload whose window closed.
pub async fn every_attachment_is_reached_by_paging(db: &Db) {
    let ann = Owner::User(UserId::new());
    let bob = Owner::User(UserId::new());
    for (owner, session) in [(ann, "s"), (ann, "other"), (bob, "s")] {
        db.ensure_session(owner, &sid(session), T0).await.unwrap();
    }
    let mine: Vec<AttachmentRecord> =
        (0..14).rev().map(|i| attachment(format!("att-{i:02}"), ann, "s", T0 + i / 3)).collect();
    for a in &mine {
        db.insert_attachment(a, None).await.unwrap();
    }
    let expired = AttachmentRecord {
        state: AttachmentState::AwaitingUpload,
        upload_expires_at: Some(T0 + 1),
        ..attachment("att-expired".to_owned(), ann, "s", T0 + 2)
    };
    for a in [
        expired,
        attachment("att-elsewhere".to_owned(), ann, "other", T0),
        attachment("att-bob".to_owned(), bob, "s", T0),
    ] {
        db.insert_attachment(&a, None).await.unwrap();
    }
    let now = T0 + 100;
    let read = |req: PageRequest| async move { db.list_attachments(ann, &sid("s"), now, &req).await.unwrap().unwrap() };
    let seen = page_through(read, LIMIT, |_| {}).await;
    assert_eq!(seen, sorted(&mine, |a| (a.created_at, a.attachment_id.clone()), true), "oldest first, ties by id");
    assert_eq!(db.list_attachments(ann, &sid("none"), now, &PageRequest::first(LIMIT)).await.unwrap(), None);
}

/// Versions stamped in the same millisecond (rows written as a replica whose clock is behind
/// would leave them): newest first, ties by id, none of another session or owner.
pub async fn every_version_is_reached_by_paging(db: &Db) {
    let ann = Owner::User(UserId::new());
    let bob = Owner::User(UserId::new());
    let mut raw = RawConn::open(db).await;
    let mut mine = Vec::new();
    for (owner, session) in [(ann, "s"), (ann, "other"), (bob, "s")] {
        db.ensure_session(owner, &sid(session), T0).await.unwrap();
    }
    let mut insert = async |owner: Owner, session: &str, id: &str, created_at: Millis| {
        raw.execute(&format!(
            "INSERT INTO document_versions (version_id, owner, session_id, html, section_count, source, created_at) \
             VALUES ('{id}', '{owner}', '{session}', '<p>{id}</p>', 1, 'save', {created_at})"
        ))
        .await;
        VersionRecord {
            version_id: id.to_owned(),
            html: String::new(),
            section_count: 1,
            source: "save".to_owned(),
            created_at,
        }
    };
    for i in 0..13 {
        mine.push(insert(ann, "s", &format!("v-{i:02}"), T0 + i / 4).await);
    }
    insert(ann, "other", "v-other", T0).await;
    insert(bob, "s", "v-bob", T0).await;
    let read = |req: PageRequest| async move { db.versions(ann, &sid("s"), &req).await.unwrap() };
    let seen = page_through(read, LIMIT, |_| {}).await;
    assert_eq!(seen, sorted(&mine, |v| (v.created_at, v.version_id.clone()), false), "newest first, ties by id");
}

fn message(id: &str, created_at: Millis) -> HistoryMessage {
    HistoryMessage {
        message_id: id.to_owned(),
        role: if id.ends_with('u') { "user" } else { "assistant" }.to_owned(),
        content: format!("said {id}"),
        job_id: Some(format!("job-{id}")),
        version_before: None,
        version_after: None,
        created_at,
    }
}

/// Turns of two messages, two turns to a millisecond: the active history is paged oldest
/// first, a reverted turn is left out, and another session's or owner's messages too.
pub async fn the_whole_history_is_reached_by_paging(db: &Db) {
    let ann = Owner::User(UserId::new());
    let bob = Owner::User(UserId::new());
    for (owner, session) in [(ann, "s"), (ann, "other"), (bob, "s")] {
        db.ensure_session(owner, &sid(session), T0).await.unwrap();
    }
    let turn = |i: i64| [message(&format!("m{i:02}u"), T0 + i / 2), message(&format!("m{i:02}a"), T0 + i / 2)];
    let mut mine = Vec::new();
    for i in 0..7 {
        db.add_messages(ann, &sid("s"), &turn(i)).await.unwrap();
        mine.extend(turn(i));
    }
    assert!(db.truncate_history(ann, &sid("s"), "m05u").await.unwrap());
    mine.truncate(10);
    for i in 7..9 {
        db.add_messages(ann, &sid("s"), &turn(i)).await.unwrap();
        mine.extend(turn(i));
    }
    db.add_messages(ann, &sid("other"), &[message("elsewhere", T0)]).await.unwrap();
    db.add_messages(bob, &sid("s"), &[message("bobs", T0)]).await.unwrap();
    let read = |req: PageRequest| async move { db.active_history(ann, &sid("s"), &req).await.unwrap() };
    let seen = page_through(read, LIMIT, |_| {}).await;
    assert_eq!(seen, mine, "the active history, oldest first");
    assert_eq!(db.recent_history(ann, &sid("s"), 3).await.unwrap(), mine[mine.len() - 3..]);
    assert_eq!(db.active_message(ann, &sid("s"), "m03a").await.unwrap().as_ref(), Some(&mine[7]));
    assert_eq!(db.active_message(ann, &sid("s"), "m05u").await.unwrap(), None, "reverted");
    assert_eq!(db.active_message(ann, &sid("other"), "m03a").await.unwrap(), None, "another session's");
    assert_eq!(db.active_message(bob, &sid("s"), "m03a").await.unwrap(), None, "another owner's");
}

/// Keys made in the same millisecond, some revoked: newest first, ties by id descending, the
/// revoked ones in their place, none of another owner's.
pub async fn every_key_is_reached_by_paging(db: &Db) {
    let ann = Owner::User(new_user(db, web_user("ann@example.com", T0)).await.id);
    let bob = Owner::User(new_user(db, web_user("bob@example.com", T0)).await.id);
    let mut mine = Vec::new();
    for i in 0..13 {
        mine.push(insert_key(db, key(ann, &format!("ann000{i:02}"), T0 + i / 3)).await);
    }
    for k in mine.iter_mut().step_by(4) {
        db.revoke_key(ann, k.id, T0 + 50).await.unwrap();
        k.revoked_at = Some(T0 + 50);
    }
    insert_key(db, key(bob, "bob00000", T0 + 1)).await;
    let read = |req: PageRequest| async move { db.keys_of(ann, &req).await.unwrap() };
    let seen = page_through(read, LIMIT, |_| {}).await;
    assert_eq!(seen, sorted(&mine, |k| (k.created_at, k.id.to_string()), false), "newest first, ties by id");
}

/// Organizations created in the same millisecond, joined in another order than their
/// creation: a user's are paged by the organizations' creation, ties by id, without those the
/// user is not in.
pub async fn every_organization_of_a_user_is_reached_by_paging(db: &Db) {
    let ann = new_user(db, web_user("ann@example.com", T0)).await;
    let bob = new_user(db, web_user("bob@example.com", T0)).await;
    let mut mine = Vec::new();
    for i in 0..11 {
        // Ann owns every third; Bob owns the others and adds her later, newest first.
        let owner = if i % 3 == 0 { ann.id } else { bob.id };
        mine.push(new_org(db, org(owner, &format!("Org {i}"), T0 + i / 3)).await);
    }
    for (joined, o) in mine.iter().rev().filter(|o| o.owner_user_id == bob.id).enumerate() {
        db.add_member(&member(o.id, ann.id, T0 + 100 + joined as i64)).await.unwrap();
    }
    new_org(db, org(bob.id, "Bob's alone", T0)).await;
    let read = |req: PageRequest| async move { db.orgs_of_user(ann.id, &req).await.unwrap() };
    let seen = page_through(read, LIMIT, |_| {}).await;
    assert_eq!(seen, sorted(&mine, |o| (o.created_at, o.id.to_string()), true), "oldest first, ties by id");
}

/// Memberships made before the organizations' creation was copied onto them (migration
/// 000015 fills the copy in) are listed by the organizations' creation like new ones.
pub async fn memberships_made_before_the_copy_are_listed_in_order(db: &Db) {
    let ann = new_user(db, web_user("ann@example.com", T0)).await;
    let bob = new_user(db, web_user("bob@example.com", T0)).await;
    db.revert_migrations_after("20261126000014").await.expect("revert 000015");
    let mut raw = RawConn::open(db).await;
    let mut old = Vec::new();
    for i in 0..5 {
        // Joined in the reverse order of creation, so that the join's time is no help.
        let o = org(bob.id, &format!("Old {i}"), T0 + 10 * (i / 2));
        let (id, name, plan, created) = (o.id, &o.name, o.plan.plan.as_str(), o.created_at);
        let joined = T0 + 100 - i;
        raw.execute(&format!(
            "INSERT INTO organizations (id, name, owner_user_id, plan, monthly_limit, created_at) \
             VALUES ('{id}', '{name}', '{bob}', '{plan}', NULL, {created}); \
             INSERT INTO org_members (org_id, user_id, role, created_at) VALUES ('{id}', '{bob}', 'owner', {created}); \
             INSERT INTO org_members (org_id, user_id, role, created_at) VALUES ('{id}', '{ann}', 'member', {joined})",
            bob = bob.id,
            ann = ann.id,
        ))
        .await;
        old.push(o);
    }
    db.run_pending_migrations().await.expect("apply 000015 again");
    let new = new_org(db, org(ann.id, "New", T0 + 15)).await;
    let mut expected = old.clone();
    expected.push(new);
    let expected = sorted(&expected, |o| (o.created_at, o.id.to_string()), true);
    let read = |req: PageRequest| async move { db.orgs_of_user(ann.id, &req).await.unwrap() };
    assert_eq!(page_through(read, 2, |_| {}).await, expected, "by the organizations' creation");
    let read = |req: PageRequest| async move { db.orgs_of_user(bob.id, &req).await.unwrap() };
    assert_eq!(page_through(read, 2, |_| {}).await, sorted(&old, |o| (o.created_at, o.id.to_string()), true));
}

/// Members who joined in the same millisecond: oldest membership first, ties by user id, the
/// owner first, none of another organization's; a member is found by its organization and id.
pub async fn every_member_is_reached_by_paging(db: &Db) {
    let ann = new_user(db, web_user("ann@example.com", T0)).await;
    let acme = new_org(db, org(ann.id, "Acme", T0)).await;
    let other = new_org(db, org(ann.id, "Other", T0)).await;
    let mut mine = vec![MemberRecord { org_id: acme.id, user_id: ann.id, role: "owner".to_owned(), created_at: T0 }];
    for i in 0..12 {
        let user = new_user(db, web_user(&format!("user{i}@example.com"), T0)).await;
        let m = member(acme.id, user.id, T0 + 1 + (11 - i) / 3);
        db.add_member(&m).await.unwrap();
        db.add_member(&member(other.id, user.id, T0)).await.unwrap();
        mine.push(m);
    }
    let read = |req: PageRequest| async move { db.members(acme.id, &req).await.unwrap() };
    let seen = page_through(read, LIMIT, |_| {}).await;
    assert_eq!(seen, sorted(&mine, |m| (m.created_at, m.user_id.to_string()), true), "oldest first, ties by id");
    assert_eq!(db.member(acme.id, mine[5].user_id).await.unwrap().as_ref(), Some(&mine[5]));
    assert_eq!(db.member(acme.id, UserId::new()).await.unwrap(), None);
    assert_eq!(db.member(OrgId::new(), ann.id).await.unwrap(), None);
    assert!(whole(db.members(OrgId::new(), &first_page()).await.unwrap()).is_empty());

    // Their e-mails in one read: an agent has none, an unknown id is left out.
    let agent = new_user(db, agent_user(T0)).await;
    let mut ids: Vec<UserId> = mine.iter().map(|m| m.user_id).collect();
    ids.extend([agent.id, UserId::new()]);
    let emails: std::collections::HashMap<UserId, Email> = db.emails_of(&ids).await.unwrap().into_iter().collect();
    assert_eq!(emails.len(), mine.len(), "{emails:?}");
    assert_eq!(emails.get(&ann.id).map(Email::as_str), Some("ann@example.com"));
    assert_eq!(emails.get(&mine[3].user_id).map(Email::as_str), Some("user2@example.com"));
    assert!(db.emails_of(&[]).await.unwrap().is_empty());
}
