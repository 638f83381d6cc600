//! `TemplateStore`: an owner's templates, and their listing a page at a time.

use redline_domain::page::PageRequest;
use redline_domain::time_util::Millis;
use redline_domain::{OrgId, Owner, UserId};
use redline_ports::templates::{TemplateRecord, TemplateSummaryRecord};
use redline_ports::{StoreError, TemplateStore};
use redline_storage::Db;

use super::sessions::page_through;

const T0: Millis = 1_800_000_000_000;

fn template(id: &str, owner: Owner, created_at: Millis) -> TemplateRecord {
    TemplateRecord {
        template_id: id.to_owned(),
        owner,
        name: format!("Template {id}"),
        description: (created_at % 2 == 0).then(|| "Described".to_owned()),
        html: format!("<h1 data-chunk-id=\"c000000000001\">{id}</h1>"),
        section_count: 1,
        created_at,
        updated_at: created_at + 1,
    }
}

/// The owner's templates as one listing shows them (a page of a size no test reaches).
async fn templates_of(db: &Db, owner: Owner) -> Vec<TemplateSummaryRecord> {
    let page = db.templates_of(owner, &PageRequest::first(10_000)).await.unwrap();
    assert!(page.next.is_none());
    page.items
}

/// The listing's view of templates.
fn listed<'a>(templates: impl IntoIterator<Item = &'a TemplateRecord>) -> Vec<TemplateSummaryRecord> {
    templates.into_iter().map(TemplateSummaryRecord::from).collect()
}

pub async fn templates_are_owner_scoped(db: &Db) {
    let ann = Owner::User(UserId::new());
    let acme = Owner::Org(OrgId::new());
    assert!(templates_of(db, ann).await.is_empty());

    let (a1, a2, a3) =
        (template("tpl_a1", ann, T0 + 1), template("tpl_a2", ann, T0 + 3), template("tpl_a3", ann, T0 + 2));
    let c1 = template("tpl_c1", acme, T0 + 5);
    for t in [&a1, &a2, &a3, &c1] {
        db.insert_template(t).await.unwrap();
    }
    let r = db.insert_template(&template("tpl_a1", acme, T0)).await;
    assert!(matches!(r, Err(StoreError::Duplicate(_))), "{r:?}");

    assert_eq!(templates_of(db, ann).await, listed([&a2, &a3, &a1]), "newest first");
    assert_eq!(templates_of(db, acme).await, listed([&c1]));
    assert_eq!(db.template("tpl_c1").await.unwrap(), Some(c1.clone()), "found whoever owns it");
    assert_eq!(db.template("tpl_none").await.unwrap(), None);

    assert!(!db.delete_template(acme, "tpl_a1").await.unwrap(), "not acme's");
    assert_eq!(db.template("tpl_a1").await.unwrap(), Some(a1));
    assert!(db.delete_template(ann, "tpl_a1").await.unwrap());
    assert!(!db.delete_template(ann, "tpl_a1").await.unwrap(), "already gone");
    assert_eq!(templates_of(db, ann).await, listed([&a2, &a3]));
}

/// Templates saved in the same millisecond: newest first, ties by id descending, none of
/// another owner's.
pub async fn every_template_is_reached_by_paging(db: &Db) {
    let ann = Owner::User(UserId::new());
    let bob = Owner::User(UserId::new());
    let mut mine = Vec::new();
    for i in 0..14 {
        let t = template(&format!("tpl_{i:02}"), ann, T0 + i / 3);
        db.insert_template(&t).await.unwrap();
        mine.push(t);
    }
    db.insert_template(&template("tpl_bob", bob, T0 + 2)).await.unwrap();
    mine.sort_by(|a, b| (b.created_at, &b.template_id).cmp(&(a.created_at, &a.template_id)));
    let read = |req: PageRequest| async move { db.templates_of(ann, &req).await.unwrap() };
    assert_eq!(page_through(read, 3, |_| {}).await, listed(&mine), "newest first, ties by id");
}
