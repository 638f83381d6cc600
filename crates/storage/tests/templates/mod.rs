//! `TemplateStore`: an owner's templates.

use redline_domain::time_util::Millis;
use redline_domain::{OrgId, Owner, UserId};
use redline_ports::templates::TemplateRecord;
use redline_ports::{StoreError, TemplateStore};
use redline_storage::Db;

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

pub async fn templates_are_owner_scoped(db: &Db) {
    let ann = Owner::User(UserId::new());
    let acme = Owner::Org(OrgId::new());
    assert!(db.templates_of(ann).await.unwrap().is_empty());

    let (a1, a2, a3) =
        (template("tpl_a1", ann, T0 + 1), template("tpl_a2", ann, T0 + 3), template("tpl_a3", ann, T0 + 2));
    let c1 = template("tpl_c1", acme, T0 + 5);
    for t in [&a1, &a2, &a3, &c1] {
        db.insert_template(t).await.unwrap();
    }
    let r = db.insert_template(&template("tpl_a1", acme, T0)).await;
    assert!(matches!(r, Err(StoreError::Duplicate(_))), "{r:?}");

    assert_eq!(db.templates_of(ann).await.unwrap(), vec![a2.clone(), a3.clone(), a1.clone()], "newest first");
    assert_eq!(db.templates_of(acme).await.unwrap(), vec![c1.clone()]);
    assert_eq!(db.template("tpl_c1").await.unwrap(), Some(c1.clone()), "found whoever owns it");
    assert_eq!(db.template("tpl_none").await.unwrap(), None);

    assert!(!db.delete_template(acme, "tpl_a1").await.unwrap(), "not acme's");
    assert_eq!(db.template("tpl_a1").await.unwrap(), Some(a1));
    assert!(db.delete_template(ann, "tpl_a1").await.unwrap());
    assert!(!db.delete_template(ann, "tpl_a1").await.unwrap(), "already gone");
    assert_eq!(db.templates_of(ann).await.unwrap(), vec![a2, a3]);
}
