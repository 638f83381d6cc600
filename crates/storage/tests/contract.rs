//! The storage contract suite: every sentence of the store ports' doc comments ("MUST return
//! …") checked against both backends of the diesel adapter. Each body is written once, as an
//! `async fn(&Db)`, and runs as `sqlite_<name>` on a fresh SQLite file and as `postgres_<name>`
//! on a fresh PostgreSQL database (see `common`).

mod accounts;
mod attachments;
mod common;
mod documents;
mod files;
mod jobs;
mod paging;
mod plans;
mod sessions;
mod templates;
mod throttles;
mod usage;
mod webhooks;

use std::collections::BTreeSet;

use redline_domain::handoff::MAX_WRONG_CODES;
use redline_domain::page::PageRequest;
use redline_domain::time_util::Millis;
use redline_domain::{Email, KeyId, OrgId, Owner, Plan, Scopes, UserId};
use redline_ports::records::*;
use redline_ports::{HealthCheck, IdentityStore, SessionStore, StoreError};
use redline_storage::Db;

use common::RawConn;
use paging::{keys_of, members_of, orgs_of};

/// SQLite only: its FTS5 index confines a search by ranges of rowids (migration 000011), which
/// PostgreSQL, confining by a column, has no counterpart of.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_attachments_passages_move_into_their_sessions_rowid_ranges() {
    common::on_sqlite(attachments::passages_move_into_their_sessions_rowid_ranges).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_attachments_a_session_out_of_passage_ids_writes_nothing() {
    common::on_sqlite(attachments::a_session_out_of_passage_ids_writes_nothing).await;
}

/// PostgreSQL only: the GIN index over (scope, tsv) of its migration 000011.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_attachments_one_gin_index_holds_the_scope_and_the_vector() {
    common::on_postgres(attachments::one_gin_index_holds_the_scope_and_the_vector).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_attachments_without_btree_gin_the_two_indexes_stay() {
    common::on_postgres_without_extensions(attachments::without_btree_gin_the_two_indexes_stay).await;
}

/// Replicas starting together on a new (or upgraded) PostgreSQL database all open it: one
/// migrates, the others wait for it and find nothing left to do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_replicas_starting_together_all_open_the_database() {
    let Some(outcomes) = common::open_postgres_at_once(4).await else { return };
    for outcome in &outcomes {
        assert!(outcome.is_ok(), "{outcomes:?}");
    }
}

/// One `#[tokio::test]` per backend for each body.
macro_rules! contract_tests {
    ($($body:path => $sqlite:ident, $postgres:ident;)+) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $sqlite() {
            common::on_sqlite($body).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $postgres() {
            common::on_postgres($body).await;
        }
    )+};
}

contract_tests! {
    ping_round_trips => sqlite_ping_round_trips, postgres_ping_round_trips;
    users_round_trip => sqlite_users_round_trip, postgres_users_round_trip;
    create_user_rejects_duplicates => sqlite_create_user_rejects_duplicates, postgres_create_user_rejects_duplicates;
    plans_of_users_and_orgs => sqlite_plans_of_users_and_orgs, postgres_plans_of_users_and_orgs;
    plan_of_unknown_owner_is_not_found => sqlite_plan_of_unknown_owner_is_not_found, postgres_plan_of_unknown_owner_is_not_found;
    orgs_and_members => sqlite_orgs_and_members, postgres_orgs_and_members;
    add_member_errors => sqlite_add_member_errors, postgres_add_member_errors;
    create_org_errors => sqlite_create_org_errors, postgres_create_org_errors;
    key_limit => sqlite_key_limit, postgres_key_limit;
    keys_of_newest_first_with_revoked => sqlite_keys_of_newest_first_with_revoked, postgres_keys_of_newest_first_with_revoked;
    live_keys_by_prefix_excludes_revoked => sqlite_live_keys_by_prefix_excludes_revoked, postgres_live_keys_by_prefix_excludes_revoked;
    revoke_key_errors => sqlite_revoke_key_errors, postgres_revoke_key_errors;
    accounts::keys_remember_their_maker => sqlite_keys_remember_their_maker, postgres_keys_remember_their_maker;
    accounts::keys_keep_their_terms_and_last_use => sqlite_keys_keep_their_terms_and_last_use, postgres_keys_keep_their_terms_and_last_use;
    accounts::an_idempotency_claim_taken_over_is_finished_only_by_its_new_holder => sqlite_an_idempotency_claim_taken_over_is_finished_only_by_its_new_holder, postgres_an_idempotency_claim_taken_over_is_finished_only_by_its_new_holder;
    accounts::invitations_are_replaced_listed_and_accepted_once => sqlite_invitations_are_replaced_listed_and_accepted_once, postgres_invitations_are_replaced_listed_and_accepted_once;
    concurrent_key_limit => sqlite_concurrent_key_limit, postgres_concurrent_key_limit;
    accounts::web_sessions_expire => sqlite_web_sessions_expire, postgres_web_sessions_expire;
    accounts::delete_web_session_is_idempotent => sqlite_delete_web_session_is_idempotent, postgres_delete_web_session_is_idempotent;
    accounts::web_sessions_listed_touched_and_signed_out => sqlite_web_sessions_listed_touched_and_signed_out, postgres_web_sessions_listed_touched_and_signed_out;
    accounts::password_resets_work_once_until_they_expire => sqlite_password_resets_work_once_until_they_expire, postgres_password_resets_work_once_until_they_expire;
    accounts::email_verifications_prove_an_address_once_until_they_expire => sqlite_email_verifications_prove_an_address_once_until_they_expire, postgres_email_verifications_prove_an_address_once_until_they_expire;
    handoff_and_wrong_codes => sqlite_handoff_and_wrong_codes, postgres_handoff_and_wrong_codes;
    concurrent_wrong_codes => sqlite_concurrent_wrong_codes, postgres_concurrent_wrong_codes;
    claim_handoff_makes_a_web_user => sqlite_claim_handoff_makes_a_web_user, postgres_claim_handoff_makes_a_web_user;
    claim_handoff_refuses_unknown_and_expired => sqlite_claim_handoff_refuses_unknown_and_expired, postgres_claim_handoff_refuses_unknown_and_expired;
    claim_handoff_refuses_disabled => sqlite_claim_handoff_refuses_disabled, postgres_claim_handoff_refuses_disabled;
    claim_handoff_taken_email_changes_nothing => sqlite_claim_handoff_taken_email_changes_nothing, postgres_claim_handoff_taken_email_changes_nothing;
    concurrent_claims_have_one_winner => sqlite_concurrent_claims_have_one_winner, postgres_concurrent_claims_have_one_winner;
    an_account_is_taken_over_through_one_link => sqlite_an_account_is_taken_over_through_one_link, postgres_an_account_is_taken_over_through_one_link;
    promo_codes => sqlite_promo_codes, postgres_promo_codes;
    promo_grants => sqlite_promo_grants, postgres_promo_grants;
    plans::every_listing_reads_by_an_owner_index => sqlite_plans_every_listing_reads_by_an_owner_index, postgres_plans_every_listing_reads_by_an_owner_index;
    plans::the_sweep_reads_jobs_through_indexes => sqlite_plans_the_sweep_reads_jobs_through_indexes, postgres_plans_the_sweep_reads_jobs_through_indexes;
    sessions::list_sessions_is_owner_scoped => sqlite_list_sessions_is_owner_scoped, postgres_list_sessions_is_owner_scoped;
    sessions::session_lists_follow_the_stores_writes => sqlite_session_lists_follow_the_stores_writes, postgres_session_lists_follow_the_stores_writes;
    sessions::a_rename_changes_the_title_alone => sqlite_a_rename_changes_the_title_alone, postgres_a_rename_changes_the_title_alone;
    sessions::session_lists_follow_other_replicas_writes => sqlite_session_lists_follow_other_replicas_writes, postgres_session_lists_follow_other_replicas_writes;
    sessions::every_session_is_reached_by_paging => sqlite_every_session_is_reached_by_paging, postgres_every_session_is_reached_by_paging;
    sessions::every_job_is_reached_by_paging => sqlite_every_job_is_reached_by_paging, postgres_every_job_is_reached_by_paging;
    paging::every_attachment_is_reached_by_paging => sqlite_paging_every_attachment_is_reached_by_paging, postgres_paging_every_attachment_is_reached_by_paging;
    paging::every_version_is_reached_by_paging => sqlite_paging_every_version_is_reached_by_paging, postgres_paging_every_version_is_reached_by_paging;
    paging::the_whole_history_is_reached_by_paging => sqlite_paging_the_whole_history_is_reached_by_paging, postgres_paging_the_whole_history_is_reached_by_paging;
    paging::every_key_is_reached_by_paging => sqlite_paging_every_key_is_reached_by_paging, postgres_paging_every_key_is_reached_by_paging;
    paging::every_organization_of_a_user_is_reached_by_paging => sqlite_paging_every_organization_of_a_user_is_reached_by_paging, postgres_paging_every_organization_of_a_user_is_reached_by_paging;
    paging::memberships_made_before_the_copy_are_listed_in_order => sqlite_paging_memberships_made_before_the_copy_are_listed_in_order, postgres_paging_memberships_made_before_the_copy_are_listed_in_order;
    paging::every_member_is_reached_by_paging => sqlite_paging_every_member_is_reached_by_paging, postgres_paging_every_member_is_reached_by_paging;
    templates::every_template_is_reached_by_paging => sqlite_templates_every_template_is_reached_by_paging, postgres_templates_every_template_is_reached_by_paging;
    documents::versions_of_any_size_round_trip => sqlite_versions_of_any_size_round_trip, postgres_versions_of_any_size_round_trip;
    documents::a_save_stores_only_what_changed => sqlite_a_save_stores_only_what_changed, postgres_a_save_stores_only_what_changed;
    documents::versions_stored_whole_are_converted => sqlite_versions_stored_whole_are_converted, postgres_versions_stored_whole_are_converted;
    migrations_are_reversible => sqlite_migrations_are_reversible, postgres_migrations_are_reversible;
    attachments::attachments_belong_to_their_session => sqlite_attachments_belong_to_their_session, postgres_attachments_belong_to_their_session;
    attachments::passages_are_indexed_once_and_searchable => sqlite_attachments_passages_are_indexed_once_and_searchable, postgres_attachments_passages_are_indexed_once_and_searchable;
    attachments::the_job_completes_with_its_passages => sqlite_attachments_the_job_completes_with_its_passages, postgres_attachments_the_job_completes_with_its_passages;
    attachments::an_ended_job_leaves_its_end_on_the_attachment => sqlite_attachments_an_ended_job_leaves_its_end_on_the_attachment, postgres_attachments_an_ended_job_leaves_its_end_on_the_attachment;
    attachments::any_query_text_is_safe => sqlite_attachments_any_query_text_is_safe, postgres_attachments_any_query_text_is_safe;
    attachments::deletes_leave_nothing_in_the_index => sqlite_attachments_deletes_leave_nothing_in_the_index, postgres_attachments_deletes_leave_nothing_in_the_index;
    attachments::long_attachments_are_found_in_every_part => sqlite_attachments_long_attachments_are_found_in_every_part, postgres_attachments_long_attachments_are_found_in_every_part;
    attachments::a_delete_during_processing_leaves_no_passages => sqlite_attachments_a_delete_during_processing_leaves_no_passages, postgres_attachments_a_delete_during_processing_leaves_no_passages;
    attachments::pre_signed_uploads_start_once => sqlite_attachments_pre_signed_uploads_start_once, postgres_attachments_pre_signed_uploads_start_once;
    attachments::attachment_bytes_follow_every_change => sqlite_attachments_attachment_bytes_follow_every_change, postgres_attachments_attachment_bytes_follow_every_change;
    attachments::passages_indexed_the_old_way_are_indexed_again => sqlite_attachments_passages_indexed_the_old_way_are_indexed_again, postgres_attachments_passages_indexed_the_old_way_are_indexed_again;
    attachments::accents_are_folded_and_stored_passages_indexed_again => sqlite_attachments_accents_are_folded_and_stored_passages_indexed_again, postgres_attachments_accents_are_folded_and_stored_passages_indexed_again;
    files::images_and_exports_belong_to_their_session => sqlite_files_images_and_exports_belong_to_their_session, postgres_files_images_and_exports_belong_to_their_session;
    files::expired_exports_are_taken_once => sqlite_files_expired_exports_are_taken_once, postgres_files_expired_exports_are_taken_once;
    templates::templates_are_owner_scoped => sqlite_templates_are_owner_scoped, postgres_templates_are_owner_scoped;
    webhooks::a_job_status_queues_its_message_for_the_endpoints_that_asked => sqlite_webhooks_a_job_status_queues_its_message_for_the_endpoints_that_asked, postgres_webhooks_a_job_status_queues_its_message_for_the_endpoints_that_asked;
    webhooks::a_hold_reaching_80_percent_queues_usage_threshold_with_it => sqlite_webhooks_a_hold_reaching_80_percent_queues_usage_threshold_with_it, postgres_webhooks_a_hold_reaching_80_percent_queues_usage_threshold_with_it;
    webhooks::deliveries_are_held_by_one_sender_at_a_time => sqlite_webhooks_deliveries_are_held_by_one_sender_at_a_time, postgres_webhooks_deliveries_are_held_by_one_sender_at_a_time;
    jobs::claims_are_exclusive_and_oldest_first => sqlite_jobs_claims_are_exclusive_and_oldest_first, postgres_jobs_claims_are_exclusive_and_oldest_first;
    jobs::updates_are_compare_and_set => sqlite_jobs_updates_are_compare_and_set, postgres_jobs_updates_are_compare_and_set;
    jobs::listings_are_owner_scoped_newest_first => sqlite_jobs_listings_are_owner_scoped_newest_first, postgres_jobs_listings_are_owner_scoped_newest_first;
    jobs::events_are_numbered_in_order => sqlite_jobs_events_are_numbered_in_order, postgres_jobs_events_are_numbered_in_order;
    jobs::finished_jobs_are_archived_and_read_back_alike => sqlite_jobs_finished_jobs_are_archived_and_read_back_alike, postgres_jobs_finished_jobs_are_archived_and_read_back_alike;
    jobs::the_sweep_requeues_fails_cancels_and_deletes => sqlite_jobs_the_sweep_requeues_fails_cancels_and_deletes, postgres_jobs_the_sweep_requeues_fails_cancels_and_deletes;
    jobs::a_lease_renewed_during_the_sweep_is_kept => sqlite_jobs_a_lease_renewed_during_the_sweep_is_kept, postgres_jobs_a_lease_renewed_during_the_sweep_is_kept;
    jobs::a_released_job_is_pending_at_once_without_an_attempt => sqlite_jobs_a_released_job_is_pending_at_once_without_an_attempt, postgres_jobs_a_released_job_is_pending_at_once_without_an_attempt;
    jobs::unfinished_jobs_are_counted_by_type_and_status => sqlite_jobs_unfinished_jobs_are_counted_by_type_and_status, postgres_jobs_unfinished_jobs_are_counted_by_type_and_status;
    jobs::a_committed_job_cannot_be_cancelled_nor_rerun => sqlite_jobs_a_committed_job_cannot_be_cancelled_nor_rerun, postgres_jobs_a_committed_job_cannot_be_cancelled_nor_rerun;
    jobs::history_truncates_from_a_message => sqlite_jobs_history_truncates_from_a_message, postgres_jobs_history_truncates_from_a_message;
    jobs::signals_reach_other_buses => sqlite_jobs_signals_reach_other_buses, postgres_jobs_signals_reach_other_buses;
    jobs::internal_jobs_run_in_the_queue_but_are_never_listed => sqlite_jobs_internal_jobs_run_in_the_queue_but_are_never_listed, postgres_jobs_internal_jobs_run_in_the_queue_but_are_never_listed;
    throttles::free_attempts_then_waits_and_refusals_change_nothing => sqlite_throttles_free_attempts_then_waits_and_refusals_change_nothing, postgres_throttles_free_attempts_then_waits_and_refusals_change_nothing;
    throttles::attempts_at_once_are_each_counted => sqlite_throttles_attempts_at_once_are_each_counted, postgres_throttles_attempts_at_once_are_each_counted;
    usage::hold_admits_once_per_request => sqlite_usage_hold_admits_once_per_request, postgres_usage_hold_admits_once_per_request;
    usage::hold_refused_writes_nothing => sqlite_usage_hold_refused_writes_nothing, postgres_usage_hold_refused_writes_nothing;
    usage::holds_draw_the_soonest_expiring_grant_first => sqlite_usage_holds_draw_the_soonest_expiring_grant_first, postgres_usage_holds_draw_the_soonest_expiring_grant_first;
    usage::settle_charges_the_rest_once => sqlite_usage_settle_charges_the_rest_once, postgres_usage_settle_charges_the_rest_once;
    usage::release_gives_back_exactly_once => sqlite_usage_release_gives_back_exactly_once, postgres_usage_release_gives_back_exactly_once;
    usage::the_charge_goes_to_the_cycle_of_the_hold => sqlite_usage_the_charge_goes_to_the_cycle_of_the_hold, postgres_usage_the_charge_goes_to_the_cycle_of_the_hold;
    usage::redeem_code_grants_once_per_owner => sqlite_usage_redeem_code_grants_once_per_owner, postgres_usage_redeem_code_grants_once_per_owner;
    usage::concurrent_holds_admit_exactly_the_operations_left => sqlite_usage_concurrent_holds_admit_exactly_the_operations_left, postgres_usage_concurrent_holds_admit_exactly_the_operations_left;
    usage::concurrent_holds_admit_exactly_the_operations_left_with_grants => sqlite_usage_concurrent_holds_admit_exactly_the_operations_left_with_grants, postgres_usage_concurrent_holds_admit_exactly_the_operations_left_with_grants;
    usage::concurrent_holds_of_one_request_admit_it_once => sqlite_usage_concurrent_holds_of_one_request_admit_it_once, postgres_usage_concurrent_holds_of_one_request_admit_it_once;
    usage::concurrent_settles_of_one_request_charge_once => sqlite_usage_concurrent_settles_of_one_request_charge_once, postgres_usage_concurrent_settles_of_one_request_charge_once;
    usage::concurrent_releases_of_one_request_give_back_once => sqlite_usage_concurrent_releases_of_one_request_give_back_once, postgres_usage_concurrent_releases_of_one_request_give_back_once;
    usage::concurrent_settles_and_releases_of_one_request_apply_once => sqlite_usage_concurrent_settles_and_releases_of_one_request_apply_once, postgres_usage_concurrent_settles_and_releases_of_one_request_apply_once;
    usage::ledger_and_counters_agree_after_a_random_mix => sqlite_usage_ledger_and_counters_agree_after_a_random_mix, postgres_usage_ledger_and_counters_agree_after_a_random_mix;
}

// ---------------------------------------------------------------------------------------------
// Fixtures.

const T0: Millis = 1_800_000_000_000;

fn email(s: &str) -> Email {
    Email::parse(s).expect("valid e-mail")
}

fn free() -> PlanSettings {
    PlanSettings { plan: Plan::Free, monthly_limit_override: None }
}

fn web_user(address: &str, created_at: Millis) -> UserRecord {
    UserRecord {
        id: UserId::new(),
        kind: UserKind::Web,
        email: Some(email(address)),
        password_hash: Some(format!("$argon2id$v=19$m=19456,t=2,p=1$salt${address}")),
        name: Some(format!("Web {address}")),
        plan: free(),
        created_at,
    }
}

fn agent_user(created_at: Millis) -> UserRecord {
    UserRecord {
        id: UserId::new(),
        kind: UserKind::Agent,
        email: None,
        password_hash: None,
        name: Some("agent".to_owned()),
        plan: PlanSettings { plan: Plan::Plus, monthly_limit_override: Some(42) },
        created_at,
    }
}

fn org(owner: UserId, name: &str, created_at: Millis) -> OrgRecord {
    OrgRecord {
        id: OrgId::new(),
        name: name.to_owned(),
        owner_user_id: owner,
        plan: PlanSettings { plan: Plan::Enterprise, monthly_limit_override: None },
        created_at,
    }
}

fn member(org: OrgId, user: UserId, created_at: Millis) -> MemberRecord {
    MemberRecord { org_id: org, user_id: user, role: "member".to_owned(), created_at }
}

fn key(owner: Owner, prefix: &str, created_at: Millis) -> KeyRecord {
    let id = KeyId::new();
    KeyRecord {
        id,
        owner,
        name: format!("key {id}"),
        lookup_prefix: prefix.to_owned(),
        hash: format!("$argon2id$v=19$m=19456,t=2,p=1$salt${id}"),
        created_at,
        revoked_at: None,
        created_by: None,
        scopes: Scopes::FULL,
        expires_at: None,
        last_used_at: None,
    }
}

fn web_session(token: &str, user: UserId, expires_at: Millis) -> WebSessionRecord {
    WebSessionRecord {
        token_hash: token.to_owned(),
        id: format!("wss_{token}"),
        user_id: user,
        created_at: T0,
        expires_at,
        last_seen_at: T0,
        user_agent: Some("Test browser".to_owned()),
        address: Some("192.0.2.1".to_owned()),
    }
}

fn handoff(token: &str, user: UserId, expires_at: Millis) -> HandoffRecord {
    HandoffRecord {
        token_hash: token.to_owned(),
        user_id: user,
        code_hash: format!("code-hash-of-{token}"),
        created_at: T0,
        expires_at,
        wrong_codes: 0,
        claimed_at: None,
    }
}

async fn new_user(db: &Db, user: UserRecord) -> UserRecord {
    db.create_user(&user).await.expect("create user");
    user
}

async fn new_org(db: &Db, org: OrgRecord) -> OrgRecord {
    db.create_org(&org).await.expect("create org");
    org
}

async fn insert_key(db: &Db, key: KeyRecord) -> KeyRecord {
    db.insert_key_within_limit(&key, u32::MAX).await.expect("insert key");
    key
}

fn ids(keys: &[KeyRecord]) -> Vec<KeyId> {
    keys.iter().map(|k| k.id).collect()
}

#[track_caller]
fn assert_duplicate<T: std::fmt::Debug>(result: Result<T, StoreError>, what: &str) {
    assert!(matches!(result, Err(StoreError::Duplicate(_))), "{what}: expected Duplicate, got {result:?}");
}

#[track_caller]
fn assert_not_found<T: std::fmt::Debug>(result: Result<T, StoreError>, what: &str) {
    assert!(matches!(result, Err(StoreError::NotFound)), "{what}: expected NotFound, got {result:?}");
}

// ---------------------------------------------------------------------------------------------
// HealthCheck.

async fn ping_round_trips(db: &Db) {
    db.ping().await.expect("first ping");
    db.ping().await.expect("second ping");
    // A ping proves a round trip: it works while other connections are busy too.
    let (a, b) = tokio::join!(db.ping(), db.ping());
    a.expect("concurrent ping a");
    b.expect("concurrent ping b");
}

// ---------------------------------------------------------------------------------------------
// Users and plans.

async fn users_round_trip(db: &Db) {
    let web = new_user(db, web_user("ann@example.com", T0)).await;
    let agent1 = new_user(db, agent_user(T0 + 1)).await;
    // Accounts without an e-mail never collide with each other.
    let agent2 = new_user(db, agent_user(T0 + 2)).await;

    for user in [&web, &agent1, &agent2] {
        assert_eq!(db.user_by_id(user.id).await.unwrap().as_ref(), Some(user));
    }
    assert_eq!(db.user_by_email(&email("ann@example.com")).await.unwrap(), Some(web.clone()));
    // E-mails arrive normalised: any spelling finds the account.
    assert_eq!(db.user_by_email(&email("  ANN@Example.COM ")).await.unwrap(), Some(web));

    assert_eq!(db.user_by_id(UserId::new()).await.unwrap(), None);
    assert_eq!(db.user_by_email(&email("nobody@example.com")).await.unwrap(), None);
}

async fn create_user_rejects_duplicates(db: &Db) {
    let ann = new_user(db, web_user("ann@example.com", T0)).await;

    // Same e-mail, another id (and another spelling, normalised by `Email`).
    let mut twin = web_user("ann@example.com", T0 + 1);
    twin.email = Some(email("Ann@EXAMPLE.com"));
    assert_duplicate(db.create_user(&twin).await, "create_user with a taken e-mail");
    assert_eq!(db.user_by_id(twin.id).await.unwrap(), None, "nothing inserted");
    assert_eq!(db.user_by_email(&email("ann@example.com")).await.unwrap(), Some(ann.clone()));

    // An id reused.
    let mut reused = web_user("bob@example.com", T0 + 2);
    reused.id = ann.id;
    assert_duplicate(db.create_user(&reused).await, "create_user with a reused id");
    assert_eq!(db.user_by_email(&email("bob@example.com")).await.unwrap(), None, "nothing inserted");
    assert_eq!(db.user_by_id(ann.id).await.unwrap(), Some(ann));
}

async fn plans_of_users_and_orgs(db: &Db) {
    let ann = new_user(db, web_user("ann@example.com", T0)).await;
    let bob = new_user(db, web_user("bob@example.com", T0)).await;
    let acme = new_org(db, org(ann.id, "Acme", T0)).await;
    let other = new_org(db, org(bob.id, "Other", T0)).await;

    assert_eq!(db.plan_of(Owner::User(ann.id)).await.unwrap(), free());
    assert_eq!(db.plan_of(Owner::Org(acme.id)).await.unwrap(), acme.plan);

    let pro = PlanSettings { plan: Plan::Pro, monthly_limit_override: Some(20_000) };
    db.set_plan(Owner::User(ann.id), pro).await.unwrap();
    assert_eq!(db.plan_of(Owner::User(ann.id)).await.unwrap(), pro);
    assert_eq!(db.user_by_id(ann.id).await.unwrap().unwrap().plan, pro);

    let unlimited = PlanSettings { plan: Plan::Plus, monthly_limit_override: Some(-1) };
    db.set_plan(Owner::Org(acme.id), unlimited).await.unwrap();
    assert_eq!(db.plan_of(Owner::Org(acme.id)).await.unwrap(), unlimited);
    assert_eq!(db.org_by_id(acme.id).await.unwrap().unwrap().plan, unlimited);

    // Clearing the override.
    db.set_plan(Owner::User(ann.id), free()).await.unwrap();
    assert_eq!(db.plan_of(Owner::User(ann.id)).await.unwrap(), free());

    // Nobody else changed.
    assert_eq!(db.plan_of(Owner::User(bob.id)).await.unwrap(), free());
    assert_eq!(db.plan_of(Owner::Org(other.id)).await.unwrap(), other.plan);
}

async fn plan_of_unknown_owner_is_not_found(db: &Db) {
    let ann = new_user(db, web_user("ann@example.com", T0)).await;
    let pro = PlanSettings { plan: Plan::Pro, monthly_limit_override: None };
    assert_not_found(db.set_plan(Owner::User(UserId::new()), pro).await, "set_plan of an unknown user");
    assert_not_found(db.set_plan(Owner::Org(OrgId::new()), pro).await, "set_plan of an unknown org");
    // An org id that happens to be a user's id is still an unknown org.
    let as_org = OrgId::parse(&ann.id.to_string()).unwrap();
    assert_not_found(db.set_plan(Owner::Org(as_org), pro).await, "set_plan of a user id as an org");
    assert_not_found(db.plan_of(Owner::User(UserId::new())).await, "plan_of an unknown user");
    assert_not_found(db.plan_of(Owner::Org(OrgId::new())).await, "plan_of an unknown org");
    assert_eq!(db.plan_of(Owner::User(ann.id)).await.unwrap(), free(), "the existing user kept its plan");
}

// ---------------------------------------------------------------------------------------------
// Organizations.

async fn orgs_and_members(db: &Db) {
    let ann = new_user(db, web_user("ann@example.com", T0)).await;
    let bob = new_user(db, web_user("bob@example.com", T0)).await;
    let carl = new_user(db, web_user("carl@example.com", T0)).await;

    // Created newest first, so that "oldest first" is not insertion order.
    let newer = new_org(db, org(bob.id, "Newer", T0 + 2_000)).await;
    let older = new_org(db, org(ann.id, "Older", T0 + 1_000)).await;

    assert_eq!(db.org_by_id(older.id).await.unwrap(), Some(older.clone()));
    assert_eq!(db.org_by_id(newer.id).await.unwrap(), Some(newer.clone()));
    assert_eq!(db.org_by_id(OrgId::new()).await.unwrap(), None);

    // The owner is the first member.
    let owner_member =
        MemberRecord { org_id: older.id, user_id: ann.id, role: "owner".to_owned(), created_at: older.created_at };
    assert_eq!(members_of(db, older.id).await, vec![owner_member.clone()]);

    let later = member(older.id, carl.id, T0 + 5_000);
    let earlier = member(older.id, bob.id, T0 + 3_000);
    db.add_member(&later).await.unwrap();
    db.add_member(&earlier).await.unwrap();
    assert_eq!(members_of(db, older.id).await, vec![owner_member, earlier, later]);
    assert_eq!(members_of(db, OrgId::new()).await, vec![]);

    // Bob owns `newer` and is a member of `older`: oldest first.
    assert_eq!(orgs_of(db, bob.id).await, vec![older.clone(), newer.clone()]);
    assert_eq!(orgs_of(db, ann.id).await, vec![older.clone()]);
    assert_eq!(orgs_of(db, carl.id).await, vec![older]);
    assert_eq!(orgs_of(db, UserId::new()).await, vec![]);
}

async fn add_member_errors(db: &Db) {
    let ann = new_user(db, web_user("ann@example.com", T0)).await;
    let bob = new_user(db, web_user("bob@example.com", T0)).await;
    let acme = new_org(db, org(ann.id, "Acme", T0)).await;
    db.add_member(&member(acme.id, bob.id, T0 + 1)).await.unwrap();
    let before = members_of(db, acme.id).await;
    assert_eq!(before.len(), 2);

    assert_duplicate(db.add_member(&member(acme.id, bob.id, T0 + 2)).await, "add_member twice");
    assert_duplicate(db.add_member(&member(acme.id, ann.id, T0 + 2)).await, "add_member of the owner");
    assert_not_found(db.add_member(&member(OrgId::new(), bob.id, T0 + 2)).await, "add_member to an unknown org");
    assert_not_found(db.add_member(&member(acme.id, UserId::new(), T0 + 2)).await, "add_member of an unknown user");

    assert_eq!(members_of(db, acme.id).await, before, "members unchanged");

    // The owner is never removed; a member is, once; the organization is left with its owner.
    assert!(!db.remove_member(acme.id, ann.id).await.unwrap(), "the owner stays");
    assert!(!db.remove_member(OrgId::new(), bob.id).await.unwrap(), "no such organization");
    assert!(db.remove_member(acme.id, bob.id).await.unwrap());
    assert!(!db.remove_member(acme.id, bob.id).await.unwrap(), "removed already");
    assert_eq!(members_of(db, acme.id).await, before[..1], "the owner alone");
    db.add_member(&member(acme.id, bob.id, T0 + 3)).await.unwrap();
}

async fn create_org_errors(db: &Db) {
    let ann = new_user(db, web_user("ann@example.com", T0)).await;
    let acme = new_org(db, org(ann.id, "Acme", T0)).await;

    // An id reused.
    let mut reused = org(ann.id, "Reused", T0 + 1);
    reused.id = acme.id;
    assert_duplicate(db.create_org(&reused).await, "create_org with a reused id");
    assert_eq!(db.org_by_id(acme.id).await.unwrap(), Some(acme.clone()));
    assert_eq!(members_of(db, acme.id).await.len(), 1);

    // An unknown owner: nothing is inserted, neither the org nor a membership.
    let orphan = org(UserId::new(), "Orphan", T0 + 2);
    let result = db.create_org(&orphan).await;
    assert!(result.is_err(), "create_org with an unknown owner must fail, got {result:?}");
    assert_eq!(db.org_by_id(orphan.id).await.unwrap(), None);
    assert_eq!(members_of(db, orphan.id).await, vec![]);
    assert_eq!(orgs_of(db, ann.id).await, vec![acme]);
}

// ---------------------------------------------------------------------------------------------
// API keys.

async fn key_limit(db: &Db) {
    let ann = Owner::User(new_user(db, web_user("ann@example.com", T0)).await.id);
    let acme = Owner::Org(new_org(db, org(ann.user_id().unwrap(), "Acme", T0)).await.id);

    let mut live = Vec::new();
    for i in 0..3 {
        let k = key(ann, &format!("ann0000{i}"), T0 + i);
        db.insert_key_within_limit(&k, 3).await.unwrap_or_else(|e| panic!("key {i} within the limit: {e}"));
        live.push(k);
    }
    let over = key(ann, "ann00003", T0 + 10);
    assert!(matches!(db.insert_key_within_limit(&over, 3).await, Err(StoreError::LimitReached)));
    assert!(db.live_keys_by_prefix("ann00003").await.unwrap().is_empty(), "nothing inserted");
    assert_eq!(keys_of(db, ann).await.len(), 3);

    // Another owner has its own count.
    db.insert_key_within_limit(&key(acme, "acme0000", T0), 1).await.unwrap();
    assert!(matches!(
        db.insert_key_within_limit(&key(acme, "acme0001", T0 + 1), 1).await,
        Err(StoreError::LimitReached)
    ));

    // Revoked keys do not count.
    db.revoke_key(ann, live[0].id, T0 + 20).await.unwrap();
    db.insert_key_within_limit(&over, 3).await.expect("a revoked key frees a slot");
    assert!(matches!(
        db.insert_key_within_limit(&key(ann, "ann00004", T0 + 30), 3).await,
        Err(StoreError::LimitReached)
    ));
    assert_eq!(keys_of(db, ann).await.len(), 4, "revoked keys stay listed");

    // A limit of zero admits nothing.
    let bob = Owner::User(new_user(db, web_user("bob@example.com", T0)).await.id);
    assert!(matches!(db.insert_key_within_limit(&key(bob, "bob00000", T0), 0).await, Err(StoreError::LimitReached)));
    assert!(keys_of(db, bob).await.is_empty());
}

async fn keys_of_newest_first_with_revoked(db: &Db) {
    let ann = Owner::User(new_user(db, web_user("ann@example.com", T0)).await.id);
    let bob = Owner::User(new_user(db, web_user("bob@example.com", T0)).await.id);
    let acme = Owner::Org(new_org(db, org(ann.user_id().unwrap(), "Acme", T0)).await.id);

    // Inserted out of order.
    let middle = insert_key(db, key(ann, "aaaa0002", T0 + 200)).await;
    let oldest = insert_key(db, key(ann, "aaaa0001", T0 + 100)).await;
    let newest = insert_key(db, key(ann, "aaaa0003", T0 + 300)).await;
    let bobs = insert_key(db, key(bob, "bbbb0001", T0 + 250)).await;
    let acmes = insert_key(db, key(acme, "cccc0001", T0 + 150)).await;

    db.revoke_key(ann, middle.id, T0 + 400).await.unwrap();
    let revoked_middle = KeyRecord { revoked_at: Some(T0 + 400), ..middle };

    assert_eq!(keys_of(db, ann).await, vec![newest, revoked_middle, oldest]);
    assert_eq!(keys_of(db, bob).await, vec![bobs]);
    assert_eq!(keys_of(db, acme).await, vec![acmes]);
    assert!(keys_of(db, Owner::User(UserId::new())).await.is_empty());
    // An org sharing the uuid of a user is another owner.
    let ann_as_org = Owner::Org(OrgId::parse(&ann.user_id().unwrap().to_string()).unwrap());
    assert!(keys_of(db, ann_as_org).await.is_empty());
}

async fn live_keys_by_prefix_excludes_revoked(db: &Db) {
    let ann = Owner::User(new_user(db, web_user("ann@example.com", T0)).await.id);
    let bob = Owner::User(new_user(db, web_user("bob@example.com", T0)).await.id);

    // Lookup prefixes may collide across keys and owners.
    let a1 = insert_key(db, key(ann, "deadbeef", T0)).await;
    let a2 = insert_key(db, key(ann, "deadbeef", T0 + 1)).await;
    let b1 = insert_key(db, key(bob, "deadbeef", T0 + 2)).await;
    let other = insert_key(db, key(ann, "cafebabe", T0 + 3)).await;
    // A longer prefix sharing the start is not a match.
    insert_key(db, key(ann, "deadbeef0", T0 + 4)).await;

    let set = |keys: Vec<KeyRecord>| keys.into_iter().map(|k| (k.id, k)).collect::<std::collections::BTreeMap<_, _>>();
    let all = set(vec![a1.clone(), a2.clone(), b1.clone()]);
    assert_eq!(set(db.live_keys_by_prefix("deadbeef").await.unwrap()), all);
    assert_eq!(db.live_keys_by_prefix("cafebabe").await.unwrap(), vec![other.clone()]);
    assert!(db.live_keys_by_prefix("deadbee").await.unwrap().is_empty());
    assert!(db.live_keys_by_prefix("00000000").await.unwrap().is_empty());

    db.revoke_key(ann, a2.id, T0 + 10).await.unwrap();
    db.revoke_key(ann, other.id, T0 + 10).await.unwrap();
    assert_eq!(set(db.live_keys_by_prefix("deadbeef").await.unwrap()), set(vec![a1, b1]));
    assert!(db.live_keys_by_prefix("cafebabe").await.unwrap().is_empty());
}

async fn revoke_key_errors(db: &Db) {
    let ann = Owner::User(new_user(db, web_user("ann@example.com", T0)).await.id);
    let bob = Owner::User(new_user(db, web_user("bob@example.com", T0)).await.id);
    let acme = Owner::Org(new_org(db, org(ann.user_id().unwrap(), "Acme", T0)).await.id);
    let anns = insert_key(db, key(ann, "aaaa0001", T0)).await;
    let acmes = insert_key(db, key(acme, "cccc0001", T0)).await;

    assert_not_found(db.revoke_key(ann, KeyId::new(), T0 + 1).await, "revoke an unknown key");
    assert_not_found(db.revoke_key(bob, anns.id, T0 + 1).await, "revoke another user's key");
    // The org's key is not its owner's, nor the other way round.
    assert_not_found(db.revoke_key(ann, acmes.id, T0 + 1).await, "revoke an org key as its owner user");
    assert_not_found(db.revoke_key(acme, anns.id, T0 + 1).await, "revoke a user key as an org");
    assert_eq!(keys_of(db, ann).await, vec![anns.clone()], "still live");
    assert_eq!(db.live_keys_by_prefix("aaaa0001").await.unwrap(), vec![anns.clone()]);

    db.revoke_key(ann, anns.id, T0 + 5).await.unwrap();
    db.revoke_key(acme, acmes.id, T0 + 6).await.unwrap();
    assert_not_found(db.revoke_key(ann, anns.id, T0 + 7).await, "revoke an already revoked key");
    assert_eq!(
        keys_of(db, ann).await[0].revoked_at,
        Some(T0 + 5),
        "the second revocation did not move the revocation time"
    );
    assert_eq!(keys_of(db, acme).await[0].revoked_at, Some(T0 + 6));
}

async fn concurrent_key_limit(db: &Db) {
    const CALLS: usize = 20;
    const MAX_LIVE: u32 = 5;
    let ann = Owner::User(new_user(db, web_user("ann@example.com", T0)).await.id);
    let bob = Owner::User(new_user(db, web_user("bob@example.com", T0)).await.id);
    insert_key(db, key(bob, "bbbb0000", T0)).await;

    let shared = common::shared(db);
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(CALLS));
    let tasks: Vec<_> = (0..CALLS)
        .map(|i| {
            let db = shared.clone();
            let barrier = barrier.clone();
            let k = key(ann, &format!("conc{i:04}"), T0 + i as i64);
            tokio::spawn(async move {
                barrier.wait().await;
                db.insert_key_within_limit(&k, MAX_LIVE).await.map(|()| k.id)
            })
        })
        .collect();

    let mut inserted = BTreeSet::new();
    let mut refused = 0;
    for task in tasks {
        match task.await.expect("task panicked") {
            Ok(id) => {
                inserted.insert(id);
            }
            Err(StoreError::LimitReached) => refused += 1,
            Err(e) => panic!("insert_key_within_limit under concurrency must succeed or be LimitReached, got {e:?}"),
        }
    }
    assert_eq!(inserted.len(), MAX_LIVE as usize, "exactly max_live calls pass");
    assert_eq!(refused, CALLS - MAX_LIVE as usize);

    let stored = keys_of(db, ann).await;
    assert_eq!(ids(&stored).into_iter().collect::<BTreeSet<_>>(), inserted, "exactly the winners are stored");
    assert_eq!(keys_of(db, bob).await.len(), 1, "another owner is untouched");
}

// ---------------------------------------------------------------------------------------------
// Agent handoffs.

async fn handoff_and_wrong_codes(db: &Db) {
    let agent = new_user(db, agent_user(T0)).await;
    let h = handoff("handoff-1", agent.id, T0 + 60_000);
    db.insert_handoff(&h).await.unwrap();
    let other = handoff("handoff-2", agent.id, T0 + 60_000);
    db.insert_handoff(&other).await.unwrap();

    assert_eq!(db.handoff("handoff-1").await.unwrap(), Some(h.clone()));
    assert_eq!(db.handoff("unknown").await.unwrap(), None);

    for n in 1..=3 {
        let after = db.take_attempt("handoff-1", T0).await.unwrap();
        assert_eq!(after, HandoffRecord { wrong_codes: n, ..h.clone() }, "the record as it is after {n} attempts");
    }
    assert_eq!(db.handoff("handoff-1").await.unwrap().unwrap().wrong_codes, 3);
    db.give_back_attempt("handoff-1").await.unwrap();
    assert_eq!(db.handoff("handoff-1").await.unwrap().unwrap().wrong_codes, 2, "an attempt given back");
    assert_eq!(db.handoff("handoff-2").await.unwrap(), Some(other.clone()), "another handoff is untouched");

    assert_not_found(db.take_attempt("unknown", T0).await, "take_attempt for an unknown token");
    assert_not_found(db.take_attempt("handoff-2", T0 + 60_000).await, "take_attempt at expires_at");
    assert_eq!(db.handoff("handoff-2").await.unwrap(), Some(other), "an expired handoff is unchanged");
    db.give_back_attempt("unknown").await.unwrap();
}

async fn concurrent_wrong_codes(db: &Db) {
    const CALLS: usize = 12;
    let agent = new_user(db, agent_user(T0)).await;
    db.insert_handoff(&handoff("handoff-1", agent.id, T0 + 60_000)).await.unwrap();

    let shared = common::shared(db);
    let tasks: Vec<_> = (0..CALLS)
        .map(|_| {
            let db = shared.clone();
            tokio::spawn(async move { db.take_attempt("handoff-1", T0).await })
        })
        .collect();
    let mut seen = BTreeSet::new();
    let mut refused = 0;
    for task in tasks {
        match task.await.expect("task panicked") {
            Ok(after) => assert!(seen.insert(after.wrong_codes), "each attempt saw its own increment"),
            Err(StoreError::NotFound) => refused += 1,
            Err(e) => panic!("take_attempt: {e}"),
        }
    }
    // Attempts at the same moment get no more than the link has, together.
    assert_eq!(seen, (1..=MAX_WRONG_CODES).collect::<BTreeSet<_>>());
    assert_eq!(refused, CALLS - MAX_WRONG_CODES as usize);
    assert_eq!(db.handoff("handoff-1").await.unwrap().unwrap().wrong_codes, MAX_WRONG_CODES);
}

async fn claim_handoff_makes_a_web_user(db: &Db) {
    let agent = new_user(db, agent_user(T0)).await;
    let h = handoff("handoff-1", agent.id, T0 + 60_000);
    db.insert_handoff(&h).await.unwrap();
    // Wrong codes below the maximum do not prevent the claim.
    for _ in 1..MAX_WRONG_CODES {
        db.take_attempt("handoff-1", T0).await.unwrap();
    }

    let now = T0 + 30_000;
    let claimed_by = db.claim_handoff("handoff-1", &email("Op@Example.com"), "$argon2id$operator", now).await.unwrap();
    assert_eq!(claimed_by, agent.id);

    let user = db.user_by_id(agent.id).await.unwrap().unwrap();
    assert_eq!(
        user,
        UserRecord {
            kind: UserKind::Web,
            email: Some(email("op@example.com")),
            password_hash: Some("$argon2id$operator".to_owned()),
            ..agent.clone()
        },
        "same account, now a web user; name, plan and creation time kept"
    );
    assert_eq!(db.user_by_email(&email("op@example.com")).await.unwrap(), Some(user));
    assert_eq!(
        db.handoff("handoff-1").await.unwrap(),
        Some(HandoffRecord { claimed_at: Some(now), wrong_codes: MAX_WRONG_CODES - 1, ..h })
    );

    // Claimed once, for ever.
    assert_not_found(db.take_attempt("handoff-1", now + 1).await, "take_attempt of a claimed handoff");
    assert_not_found(
        db.claim_handoff("handoff-1", &email("again@example.com"), "$argon2id$again", now + 1).await,
        "claim_handoff of a claimed handoff",
    );
    assert_eq!(db.user_by_email(&email("again@example.com")).await.unwrap(), None);
    assert_eq!(db.handoff("handoff-1").await.unwrap().unwrap().claimed_at, Some(now));
}

async fn claim_handoff_refuses_unknown_and_expired(db: &Db) {
    let agent = new_user(db, agent_user(T0)).await;
    let expires = T0 + 60_000;
    let h = handoff("handoff-1", agent.id, expires);
    db.insert_handoff(&h).await.unwrap();

    assert_not_found(
        db.claim_handoff("unknown", &email("op@example.com"), "$argon2id$op", T0).await,
        "claim_handoff of an unknown token",
    );
    assert_not_found(
        db.claim_handoff("handoff-1", &email("op@example.com"), "$argon2id$op", expires).await,
        "claim_handoff at expires_at",
    );
    assert_not_found(
        db.claim_handoff("handoff-1", &email("op@example.com"), "$argon2id$op", expires + 1_000).await,
        "claim_handoff after expiry",
    );
    assert_eq!(db.handoff("handoff-1").await.unwrap(), Some(h), "handoff unchanged");
    assert_eq!(db.user_by_id(agent.id).await.unwrap(), Some(agent.clone()), "user unchanged");
    assert_eq!(db.user_by_email(&email("op@example.com")).await.unwrap(), None);

    // One millisecond before expiry it still works.
    assert_eq!(
        db.claim_handoff("handoff-1", &email("op@example.com"), "$argon2id$op", expires - 1).await.unwrap(),
        agent.id
    );
}

async fn claim_handoff_refuses_disabled(db: &Db) {
    let agent = new_user(db, agent_user(T0)).await;
    let h = handoff("handoff-1", agent.id, T0 + 60_000);
    db.insert_handoff(&h).await.unwrap();
    let mut last = None;
    for _ in 0..MAX_WRONG_CODES {
        last = Some(db.take_attempt("handoff-1", T0).await.unwrap());
    }
    assert_eq!(last.unwrap().wrong_codes, MAX_WRONG_CODES);

    assert_not_found(
        db.claim_handoff("handoff-1", &email("op@example.com"), "$argon2id$op", T0 + 1).await,
        "claim_handoff of a disabled handoff",
    );
    assert_eq!(db.handoff("handoff-1").await.unwrap(), Some(HandoffRecord { wrong_codes: MAX_WRONG_CODES, ..h }));
    assert_eq!(db.user_by_id(agent.id).await.unwrap(), Some(agent), "user unchanged");

    // No attempt is left, and the link stays disabled.
    assert_not_found(db.take_attempt("handoff-1", T0 + 1).await, "take_attempt of a disabled handoff");
    assert_eq!(db.handoff("handoff-1").await.unwrap().unwrap().wrong_codes, MAX_WRONG_CODES);
    assert_not_found(
        db.claim_handoff("handoff-1", &email("op@example.com"), "$argon2id$op", T0 + 2).await,
        "claim_handoff of a disabled handoff",
    );
}

async fn claim_handoff_taken_email_changes_nothing(db: &Db) {
    let ann = new_user(db, web_user("ann@example.com", T0)).await;
    let agent = new_user(db, agent_user(T0)).await;
    let h = handoff("handoff-1", agent.id, T0 + 60_000);
    db.insert_handoff(&h).await.unwrap();

    assert_duplicate(
        db.claim_handoff("handoff-1", &email("ANN@example.com"), "$argon2id$op", T0 + 1).await,
        "claim_handoff with a taken e-mail",
    );
    assert_eq!(db.handoff("handoff-1").await.unwrap(), Some(h), "the handoff stays unclaimed");
    assert_eq!(db.user_by_id(agent.id).await.unwrap(), Some(agent.clone()), "the agent is unchanged");
    assert_eq!(
        db.user_by_email(&email("ann@example.com")).await.unwrap(),
        Some(ann),
        "the e-mail's owner is unchanged"
    );

    // The link is still usable with a free e-mail.
    assert_eq!(
        db.claim_handoff("handoff-1", &email("op@example.com"), "$argon2id$op", T0 + 2).await.unwrap(),
        agent.id
    );
    assert_eq!(db.user_by_email(&email("op@example.com")).await.unwrap().unwrap().id, agent.id);
}

/// Claims each link at the same moment, the i-th for `op{i}@example.com`; the addresses
/// whose claim took `agent` over (the others must be `NotFound`).
async fn claims_at_once(db: &Db, agent: UserId, links: Vec<String>) -> Vec<Email> {
    let shared = common::shared(db);
    let tasks: Vec<_> = links
        .into_iter()
        .enumerate()
        .map(|(i, link)| {
            let db = shared.clone();
            let address = email(&format!("op{i}@example.com"));
            tokio::spawn(async move {
                let r = db.claim_handoff(&link, &address, "$argon2id$op", T0 + 1).await;
                (address, r)
            })
        })
        .collect();
    let mut winners = Vec::new();
    for task in tasks {
        match task.await.expect("task panicked") {
            (address, Ok(id)) => {
                assert_eq!(id, agent);
                winners.push(address);
            }
            (_, Err(StoreError::NotFound)) => {}
            (_, Err(e)) => panic!("concurrent claim_handoff must succeed or be NotFound, got {e:?}"),
        }
    }
    winners
}

async fn concurrent_claims_have_one_winner(db: &Db) {
    const CALLS: usize = 10;
    let agent = new_user(db, agent_user(T0)).await;
    db.insert_handoff(&handoff("handoff-1", agent.id, T0 + 60_000)).await.unwrap();

    let winners = claims_at_once(db, agent.id, vec!["handoff-1".to_owned(); CALLS]).await;
    assert_eq!(winners.len(), 1, "exactly one claim wins: {winners:?}");
    assert_eq!(db.user_by_id(agent.id).await.unwrap().unwrap().email.as_ref(), Some(&winners[0]));
}

/// An agent with several links is taken over once: after one is claimed, the others claim
/// nothing (and change nothing), also when all are claimed at once.
async fn an_account_is_taken_over_through_one_link(db: &Db) {
    const LINKS: usize = 6;
    let agent = new_user(db, agent_user(T0)).await;
    for i in 0..LINKS {
        db.insert_handoff(&handoff(&format!("handoff-{i}"), agent.id, T0 + 60_000)).await.unwrap();
    }
    db.claim_handoff("handoff-0", &email("first@example.com"), "$argon2id$first", T0 + 1).await.unwrap();
    assert_not_found(
        db.claim_handoff("handoff-1", &email("second@example.com"), "$argon2id$second", T0 + 2).await,
        "claim_handoff through a second link",
    );
    let user = db.user_by_id(agent.id).await.unwrap().unwrap();
    assert_eq!(
        (user.email.as_ref(), user.password_hash.as_deref()),
        (Some(&email("first@example.com")), Some("$argon2id$first"))
    );
    assert_eq!(db.user_by_email(&email("second@example.com")).await.unwrap(), None);
    assert_eq!(db.handoff("handoff-1").await.unwrap().unwrap().claimed_at, None, "the refused claim wrote nothing");

    // Another agent's links, all claimed at once.
    let agent = new_user(db, agent_user(T0)).await;
    for i in 0..LINKS {
        db.insert_handoff(&handoff(&format!("other-{i}"), agent.id, T0 + 60_000)).await.unwrap();
    }
    let winners = claims_at_once(db, agent.id, (0..LINKS).map(|i| format!("other-{i}")).collect()).await;
    assert_eq!(winners.len(), 1, "exactly one link takes the account over: {winners:?}");
    assert_eq!(db.user_by_id(agent.id).await.unwrap().unwrap().email.as_ref(), Some(&winners[0]));
    let mut claimed = 0;
    for i in 0..LINKS {
        claimed += usize::from(db.handoff(&format!("other-{i}")).await.unwrap().unwrap().claimed_at.is_some());
    }
    assert_eq!(claimed, 1, "only the winning link is marked claimed");
}

// ---------------------------------------------------------------------------------------------
// Promotions.

async fn promo_codes(db: &Db) {
    let mut raw = RawConn::open(db).await;
    let launch = PromoCodeRecord {
        code: "LAUNCH".to_owned(),
        name: "Launch week".to_owned(),
        ops: 1_000,
        expires_at: Some(T0 + 86_400_000),
        created_at: T0,
    };
    let forever = PromoCodeRecord {
        code: "FOREVER".to_owned(),
        name: "No end".to_owned(),
        ops: 5,
        expires_at: None,
        created_at: T0,
    };
    db.create_promo_code(&launch).await.unwrap();
    db.create_promo_code(&forever).await.unwrap();
    assert_eq!(raw.promo_code("LAUNCH").await, Some(launch.clone()));
    assert_eq!(raw.promo_code("FOREVER").await, Some(forever));

    let again = PromoCodeRecord { name: "Relaunch".to_owned(), ops: 9_999, ..launch.clone() };
    assert_duplicate(db.create_promo_code(&again).await, "create_promo_code with an existing code");
    assert_eq!(raw.promo_code("LAUNCH").await, Some(launch), "the existing code is unchanged");
}

async fn promo_grants(db: &Db) {
    let mut raw = RawConn::open(db).await;
    let ann = Owner::User(new_user(db, web_user("ann@example.com", T0)).await.id);
    let acme = Owner::Org(new_org(db, org(ann.user_id().unwrap(), "Acme", T0)).await.id);
    db.create_promo_code(&PromoCodeRecord {
        code: "LAUNCH".to_owned(),
        name: "Launch week".to_owned(),
        ops: 1_000,
        expires_at: None,
        created_at: T0,
    })
    .await
    .unwrap();

    let grant = |id: &str, owner: Owner, code: Option<&str>| PromoGrantRecord {
        redemption_id: id.to_owned(),
        owner,
        name: "Launch week".to_owned(),
        code: code.map(str::to_owned),
        ops_granted: 1_000,
        ops_remaining: 750,
        expires_at: Some(T0 + 1_000),
        created_at: T0,
    };
    let first = grant("r1", ann, Some("LAUNCH"));
    db.insert_promo_grant(&first).await.unwrap();
    assert_eq!(raw.promo_grant("r1").await, Some(first.clone()));

    // Another owner may redeem the same code; grants without a code never collide.
    db.insert_promo_grant(&grant("r2", acme, Some("LAUNCH"))).await.unwrap();
    let manual = PromoGrantRecord { expires_at: None, ..grant("r3", ann, None) };
    db.insert_promo_grant(&manual).await.unwrap();
    db.insert_promo_grant(&grant("r4", ann, None)).await.unwrap();
    assert_eq!(raw.promo_grant("r3").await, Some(manual));
    assert_eq!(raw.count_owned("promo_grants", ann).await, 3);
    assert_eq!(raw.count_owned("promo_grants", acme).await, 1);

    // A code is redeemed at most once per account (schema rule), and redemption ids are unique.
    assert_duplicate(db.insert_promo_grant(&grant("r5", ann, Some("LAUNCH"))).await, "redeeming a code twice");
    assert_duplicate(db.insert_promo_grant(&grant("r1", acme, None)).await, "a reused redemption id");
    assert_eq!(raw.promo_grant("r5").await, None);
    assert_eq!(raw.promo_grant("r1").await, Some(first), "the first grant is unchanged");
    assert_eq!(raw.count_owned("promo_grants", ann).await, 3);
}

// ---------------------------------------------------------------------------------------------
// Migrations.

async fn migrations_are_reversible(db: &Db) {
    let before = new_user(db, web_user("ann@example.com", T0)).await;
    insert_key(db, key(Owner::User(before.id), "aaaa0001", T0)).await;

    db.revert_all_migrations().await.expect("revert every migration");
    db.ping().await.expect("the database itself is still there");
    let gone = db.user_by_id(before.id).await;
    assert!(gone.is_err(), "no users table after reverting every migration, got {gone:?}");

    db.run_pending_migrations().await.expect("re-apply every migration");
    db.run_pending_migrations().await.expect("nothing pending is not an error");

    // Fresh, empty and fully working again.
    assert_eq!(db.user_by_id(before.id).await.unwrap(), None);
    assert!(db.live_keys_by_prefix("aaaa0001").await.unwrap().is_empty());
    let ann = new_user(db, web_user("ann@example.com", T0)).await;
    assert_eq!(db.user_by_email(&email("ann@example.com")).await.unwrap(), Some(ann.clone()));
    assert_duplicate(db.create_user(&web_user("ann@example.com", T0)).await, "unique e-mail after re-migration");
    let acme = new_org(db, org(ann.id, "Acme", T0)).await;
    assert_eq!(orgs_of(db, ann.id).await, vec![acme]);
    let k = key(Owner::User(ann.id), "aaaa0002", T0);
    db.insert_key_within_limit(&k, 1).await.unwrap();
    assert!(matches!(
        db.insert_key_within_limit(&key(Owner::User(ann.id), "aaaa0003", T0), 1).await,
        Err(StoreError::LimitReached)
    ));
    assert_eq!(keys_of(db, Owner::User(ann.id)).await, vec![k]);
    let mut raw = RawConn::open(db).await;
    raw.insert_session(
        Owner::User(ann.id),
        &SessionSummary {
            session_id: "s".to_owned(),
            title: None,
            created_at: T0,
            updated_at: T0,
            version_id: None,
            section_count: 0,
        },
    )
    .await;
    assert_eq!(db.list_sessions(Owner::User(ann.id), &PageRequest::first(10)).await.unwrap().items.len(), 1);
}
