//! The `WebhookStore` part of the contract suite: a job's new status queues its message in the
//! job's own transaction, for the endpoints that asked for it; concurrent senders never hold
//! one delivery at once; only the holder records an attempt; a lapsed claim is free again.

use std::collections::BTreeSet;

use redline_domain::job::JobStatus;
use redline_domain::page::PageRequest;
use redline_domain::webhook::EventType;
use redline_ports::jobs::JobUpdate;
use redline_ports::{
    AttemptOutcome, DeliveryAttempt, DeliveryStatus, JobStore, WebhookEndpoint, WebhookMessage, WebhookStore,
};
use serde_json::json;

use super::*;

fn endpoint(owner: Owner, id: &str, events: &[EventType]) -> WebhookEndpoint {
    WebhookEndpoint {
        id: id.to_owned(),
        owner,
        url: "https://hooks.example.com/in".to_owned(),
        description: String::new(),
        events: events.to_vec(),
        secret: "whsec_AAAA".to_owned(),
        previous_secret: None,
        previous_secret_until: None,
        disabled_reason: None,
        failing_since: None,
        created_at: T0,
        updated_at: T0,
    }
}

pub async fn a_job_status_queues_its_message_for_the_endpoints_that_asked(db: &Db) {
    let ann = Owner::User(new_user(db, web_user("hooks@example.com", T0)).await.id);
    let bob = Owner::User(new_user(db, web_user("other@example.com", T0)).await.id);
    db.create_webhook_endpoint(&endpoint(ann, "we_done", &[EventType::JobCompleted]), 20).await.unwrap();
    db.create_webhook_endpoint(&endpoint(ann, "we_fail", &[EventType::JobFailed]), 20).await.unwrap();
    db.create_webhook_endpoint(&endpoint(bob, "we_bob", &[EventType::JobCompleted]), 20).await.unwrap();
    assert!(matches!(
        db.create_webhook_endpoint(&endpoint(ann, "we_third", &[EventType::JobFailed]), 2).await,
        Err(StoreError::LimitReached)
    ));
    db.insert_job(&super::jobs::job(ann, "j1", "s", T0)).await.unwrap();
    db.claim_job(T0 + 1, T0 + 1_000).await.unwrap().expect("claimed");
    // Progress alone queues nothing; the move to completed queues one message.
    let progress = JobUpdate { progress: Some(50), ..Default::default() };
    db.update_job("j1", &[JobStatus::InProgress], &progress, T0 + 2).await.unwrap().expect("updated");
    let done = JobUpdate { status: Some(JobStatus::Completed), ..Default::default() };
    db.update_job("j1", &[JobStatus::InProgress], &done, T0 + 3).await.unwrap().expect("updated");
    let claimed = db.claim_webhook_deliveries(T0 + 10, T0 + 100, 50).await.unwrap();
    assert_eq!(claimed.len(), 1, "{claimed:?}");
    let d = &claimed[0];
    assert_eq!((d.endpoint.id.as_str(), d.delivery.event), ("we_done", EventType::JobCompleted));
    let payload: serde_json::Value = serde_json::from_str(&d.delivery.payload).unwrap();
    assert_eq!(payload["type"], "job.completed");
    assert_eq!(payload["data"]["job_id"], "j1");
    assert!(db.webhook_deliveries(bob, "we_bob", &PageRequest::first(10)).await.unwrap().items.is_empty());
}

pub async fn deliveries_are_held_by_one_sender_at_a_time(db: &Db) {
    let ann = Owner::User(new_user(db, web_user("senders@example.com", T0)).await.id);
    db.create_webhook_endpoint(&endpoint(ann, "we_1", &[EventType::UsageThreshold]), 20).await.unwrap();
    for i in 0..20 {
        let message = WebhookMessage::new(ann, EventType::UsageThreshold, T0, json!({"n": i}));
        assert_eq!(db.enqueue_webhook(&message, T0).await.unwrap(), 1);
    }
    let shared = common::shared(db);
    let mut tasks = Vec::new();
    for _ in 0..6 {
        let db = shared.clone();
        tasks.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            loop {
                let got = db.claim_webhook_deliveries(T0 + 10, T0 + 1_000, 3).await.unwrap();
                if got.is_empty() {
                    return mine;
                }
                mine.extend(got.into_iter().map(|c| (c.delivery.id, c.lease_token)));
            }
        }));
    }
    let mut claimed = Vec::new();
    for t in tasks {
        claimed.extend(t.await.unwrap());
    }
    let unique: BTreeSet<&String> = claimed.iter().map(|(id, _)| id).collect();
    assert_eq!((claimed.len(), unique.len()), (20, 20), "{claimed:?}");

    let (id, token) = claimed[0].clone();
    let attempt =
        DeliveryAttempt { attempt: 1, at: T0 + 20, status_code: Some(500), latency_ms: 3, error: Some("500".into()) };
    let retry =
        AttemptOutcome { attempt, status: DeliveryStatus::Pending, next_attempt_at: T0 + 50, disable_endpoint: None };
    assert!(!db.record_webhook_attempt(&id, "not the holder", &retry).await.unwrap());
    assert!(db.record_webhook_attempt(&id, &token, &retry).await.unwrap());
    assert!(!db.record_webhook_attempt(&id, &token, &retry).await.unwrap(), "a recorded attempt ends the claim");
    let ep = db.webhook_endpoint(ann, "we_1").await.unwrap().unwrap();
    assert_eq!(ep.failing_since, Some(T0 + 20));
    // Due again at T0 + 50; the others' leases run to T0 + 1000.
    let again = db.claim_webhook_deliveries(T0 + 60, T0 + 2_000, 50).await.unwrap();
    assert_eq!(again.iter().map(|c| c.delivery.id.as_str()).collect::<Vec<_>>(), [id.as_str()]);
    assert_eq!(again[0].delivery.attempts, 1);
    // Leases that lapsed (their sender died) are free again.
    assert_eq!(db.claim_webhook_deliveries(T0 + 1_001, T0 + 3_000, 50).await.unwrap().len(), 19);
    let log = db.webhook_deliveries(ann, "we_1", &PageRequest::first(100)).await.unwrap().items;
    let (logged, attempts) = log.iter().find(|(d, _)| d.id == id).unwrap();
    assert_eq!((logged.status, attempts.len(), attempts[0].status_code), (DeliveryStatus::Pending, 1, Some(500)));
    // The log pages newest first: pages of 7 hold all 20 deliveries once, in the order of one
    // long page.
    let (mut paged, mut after) = (Vec::new(), None);
    loop {
        let page = db.webhook_deliveries(ann, "we_1", &PageRequest { limit: 7, after }).await.unwrap();
        assert!(page.items.len() <= 7);
        paged.extend(page.items.iter().map(|(d, _)| d.id.clone()));
        after = page.next;
        if after.is_none() {
            break;
        }
    }
    assert_eq!(paged, log.iter().map(|(d, _)| d.id.clone()).collect::<Vec<_>>());
    assert_eq!(paged.len(), 20);
    assert!(log.windows(2).all(|w| (w[0].0.created_at, &w[0].0.id) > (w[1].0.created_at, &w[1].0.id)), "newest first");
    assert!(db.delete_webhook_endpoint(ann, "we_1").await.unwrap());
    assert!(db.webhook_deliveries(ann, "we_1", &PageRequest::first(100)).await.unwrap().items.is_empty());
}

pub async fn a_hold_reaching_80_percent_queues_usage_threshold_with_it(db: &Db) {
    use redline_ports::UsageStore;
    let ann = Owner::User(new_user(db, web_user("usage-hooks@example.com", T0)).await.id);
    db.create_webhook_endpoint(&endpoint(ann, "we_usage", &[EventType::UsageThreshold]), 20).await.unwrap();
    let cycle = redline_domain::usage::Cycle::containing(T0).id;
    for i in 0..4 {
        db.hold(ann, &format!("r{i}"), &cycle, Some(5), T0).await.unwrap();
    }
    let claimed = db.claim_webhook_deliveries(T0 + 1, T0 + 100, 50).await.unwrap();
    assert_eq!(claimed.len(), 1, "{claimed:?}");
    let payload: serde_json::Value = serde_json::from_str(&claimed[0].delivery.payload).unwrap();
    assert_eq!(payload["data"]["threshold_percent"], 80);
    assert_eq!(payload["data"]["monthly_used"], 4);
    // Charging what was held moves nothing; the fifth hold reaches 100 %.
    db.settle("r0", 1, Some(5), T0 + 2).await.unwrap();
    db.hold(ann, "r4", &cycle, Some(5), T0 + 3).await.unwrap();
    let claimed = db.claim_webhook_deliveries(T0 + 4, T0 + 100, 50).await.unwrap();
    let payload: serde_json::Value = serde_json::from_str(&claimed[0].delivery.payload).unwrap();
    assert_eq!((claimed.len(), payload["data"]["threshold_percent"].clone()), (1, json!(100)));
}
