//! The web app's lists of the API's concepts (export formats, job statuses, the free plan's
//! quota) and the OpenAPI document's job types, each checked against its one source: a value
//! added to the API and not to the web app (or the other way) fails here.

use redline_domain::account::Plan;
use redline_domain::export::ExportFormat;
use redline_domain::job::{JobStatus, JobType};

use crate::helpers::*;

/// A file of the web app's assets.
fn asset(path: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../web/assets").join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The items of the array `export const NAME = [ … ];` in `js`: its strings (`['a', 'b']`),
/// or the first string of each pair (`[['a', 'A'], …]`).
fn js_list(js: &str, name: &str) -> Vec<String> {
    let list = js
        .split(&format!("export const {name} = ["))
        .nth(1)
        .and_then(|r| r.split("];").next())
        .unwrap_or_else(|| panic!("no list {name}"));
    let quoted = |item: &str| item.trim().strip_prefix('\'').and_then(|r| r.split('\'').next()).map(str::to_owned);
    if list.contains('[') {
        list.split('[').skip(1).filter_map(|pair| pair.split(',').next().and_then(quoted)).collect()
    } else {
        list.split(',').filter_map(quoted).collect()
    }
}

/// The web app's Export panel offers exactly the formats the API takes (its one list,
/// `ExportFormat::API_NAMES`, less the legacy alias), read from the served OpenAPI document.
#[tokio::test]
async fn the_web_apps_export_formats_are_the_apis() {
    let app = spawn_app().await;
    let doc = app.send(app.get("/openapi.json")).await;
    doc.expect_status(200);
    let api: Vec<String> = doc.json["components"]["schemas"]["FormatField"]["enum"]
        .as_array()
        .unwrap_or_else(|| panic!("no FormatField enum"))
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .filter(|f| f != ExportFormat::LEGACY_ALIAS)
        .collect();
    assert_eq!(js_list(&asset("editor/export.js"), "FORMATS"), api);
}

/// The editor's running and finished job statuses are the API's, split as the domain splits
/// them.
#[test]
fn the_web_apps_job_statuses_are_the_apis() {
    let js = asset("editor/job.js");
    let names = |finished: bool| -> Vec<String> {
        JobStatus::ALL.into_iter().filter(|s| s.is_finished() == finished).map(|s| s.as_str().to_owned()).collect()
    };
    assert_eq!(js_list(&js, "ACTIVE"), names(false));
    assert_eq!(js_list(&js, "FINISHED"), names(true));
}

/// The `job_type` filter of `GET /v1/jobs` in the OpenAPI document names the public job types.
#[tokio::test]
async fn the_job_type_filter_names_the_public_job_types() {
    let app = spawn_app().await;
    let doc = app.send(app.get("/openapi.json")).await;
    let params = doc.expect_status(200).json["paths"]["/v1/jobs"]["get"]["parameters"].clone();
    let pattern = params
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == "job_type"))
        .and_then(|p| p["schema"]["pattern"].as_str())
        .unwrap_or_else(|| panic!("no job_type pattern in {params}"))
        .to_owned();
    let public: Vec<&str> = JobType::ALL.into_iter().filter(|t| t.is_public()).map(JobType::as_str).collect();
    assert_eq!(pattern, format!("^({})?$", public.join("|")));
}

/// The sign-up page states the free plan's monthly operations as the plan has them.
#[test]
fn the_sign_up_page_states_the_free_plans_quota() {
    let js = asset("pages/account.js");
    let ops = Plan::Free.monthly_ops().expect("the free plan has a limit");
    assert!(js.contains(&format!("The free plan includes {ops} operations a month.")), "account.js");
}

/// The Webhooks page offers every event the API sends, in the API's order.
#[test]
fn the_web_apps_webhook_events_are_the_apis() {
    let names: Vec<String> = redline_domain::webhook::EventType::ALL.iter().map(|e| e.as_str().to_owned()).collect();
    assert_eq!(js_list(&asset("pages/webhooks.js"), "EVENTS"), names);
}
