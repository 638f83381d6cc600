//! Caps on open event streams (docs/api.md, "Event streams"): per key and per client address,
//! 429 beyond them; a stream's place is freed when it ends or its client goes away.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::chat::{seed, start, wait_for};
use crate::helpers::*;

/// A job that waits for approval: its event stream stays open.
async fn waiting_job(app: &TestApp, key: &str, sid: &str) -> String {
    seed(app, key, sid, &["alpha one"]).await;
    let job = start(
        app,
        key,
        json!({"session_id": sid, "message": "replace \"alpha\" with \"omega\"", "require_approval": true}),
    )
    .await;
    let id = job["job_id"].as_str().unwrap().to_owned();
    wait_for(app, key, &id, &["awaiting_approval"]).await;
    id
}

async fn open(app: &TestApp, key: &str, job: &str) -> reqwest::Response {
    app.client.get(app.url(&format!("/v1/jobs/{job}/events"))).bearer_auth(key).send().await.expect("an answer")
}

#[tokio::test]
async fn streams_are_capped_per_key_and_per_address_and_freed_when_the_client_goes() {
    let app = spawn_app_with(&[("REDLINE_MAX_STREAMS_PER_KEY", "2"), ("REDLINE_MAX_STREAMS_PER_ADDRESS", "3")]).await;
    let (a, b) = (app.agent_key().await, app.agent_key().await);
    let (job_a, job_b) = (waiting_job(&app, &a, "sa").await, waiting_job(&app, &b, "sb").await);

    let first = open(&app, &a, &job_a).await;
    let _second = open(&app, &a, &job_a).await;
    assert_eq!((first.status().as_u16(), _second.status().as_u16()), (200, 200));
    let third = Reply::of(open(&app, &a, &job_a).await).await;
    third.expect_status(429);
    assert_eq!(
        third.detail(),
        "Too many event streams are open for this key (at most 2 at once). Close one, or poll GET /v1/jobs/{job_id} instead."
    );
    assert_eq!(third.header("retry-after"), Some("5"));
    // Another key from the same address: one more fits under the address's cap of 3.
    let _other = open(&app, &b, &job_b).await;
    assert_eq!(_other.status().as_u16(), 200);
    let over = Reply::of(open(&app, &b, &job_b).await).await;
    over.expect_status(429);
    assert!(
        over.detail().starts_with("Too many event streams are open from this address (at most 3 at once)."),
        "{over:?}"
    );
    // A chat turn asking for a stream is refused before it is queued: nothing is charged.
    let used = app.send(app.get("/v1/usage").bearer_auth(&b)).await.json["monthly_used"].clone();
    let turn = app
        .send(
            app.post("/v1/chat/async")
                .bearer_auth(&b)
                .header("accept", "text/event-stream")
                .json(&json!({"session_id": "sb", "message": "replace \"omega\" with \"beta\""})),
        )
        .await;
    turn.expect_status(429);
    assert_eq!(app.send(app.get("/v1/usage").bearer_auth(&b)).await.json["monthly_used"], used);

    // The client of the first stream goes away: its place comes back (at the stream's next
    // heartbeat, 15 s at most).
    drop(first);
    let gone = Instant::now();
    loop {
        let again = open(&app, &a, &job_a).await;
        if again.status().as_u16() == 200 {
            break;
        }
        assert!(gone.elapsed() < Duration::from_secs(90), "the place never came back");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
