//! Webhooks (`WebhookStore`): endpoints, the outbox of deliveries and their attempts.
//!
//! A message is queued by [`queue_webhooks!`] inside the transaction of the change it tells of
//! (a job's status: `jobs/mod.rs`), so a crash never loses one and a rolled-back change never
//! sends one. A sender claims a due delivery by a conditional update that only a free claim
//! passes (PostgreSQL re-checks the condition under the row's lock), so two senders of any
//! replicas never hold one delivery at the same time; only the holder's token records the
//! attempt.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use redline_domain::page::{Cursor, Page, PageRequest};
use redline_domain::time_util::Millis;
use redline_domain::webhook::EventType;
use redline_domain::Owner;
use redline_ports::{
    AttemptOutcome, ClaimedDelivery, Delivery, DeliveryAttempt, DeliveryStatus, EndpointChanges, StoreError,
    WebhookEndpoint, WebhookMessage, WebhookStore,
};

use crate::db::{BackendOps, Db};
use crate::error::DbResult;
use crate::schema::{webhook_attempts as a, webhook_deliveries as d, webhook_endpoints as e};

/// A new delivery's id: `msg_` + 32 hex.
pub(crate) fn message_id() -> String {
    format!("msg_{}", uuid::Uuid::new_v4().simple())
}

/// Whether an endpoint's stored event list (a JSON array of names) holds `event`.
pub(crate) fn wants(events: &str, event: EventType) -> bool {
    serde_json::from_str::<Vec<String>>(events).is_ok_and(|names| names.iter().any(|n| n == event.as_str()))
}

/// Queues `$message` (a `&WebhookMessage`) for each enabled endpoint of its owner that asked
/// for its event, on `$conn` inside the caller's transaction; evaluates to how many.
macro_rules! queue_webhooks {
    ($conn:expr, $message:expr, $now:expr) => {{
        use $crate::schema::{webhook_deliveries as qd, webhook_endpoints as qe};
        let message: &redline_ports::WebhookMessage = $message;
        let now: i64 = $now;
        let endpoints: Vec<(String, String)> = qe::table
            .filter(qe::owner.eq(message.owner.to_string()))
            .filter(qe::disabled_reason.is_null())
            .select((qe::id, qe::events))
            .load($conn)
            .await?;
        let mut queued = 0usize;
        for (endpoint_id, events) in endpoints {
            if !$crate::webhooks::wants(&events, message.event) {
                continue;
            }
            diesel::insert_into(qd::table)
                .values((
                    qd::id.eq($crate::webhooks::message_id()),
                    qd::endpoint_id.eq(&endpoint_id),
                    qd::owner.eq(message.owner.to_string()),
                    qd::event.eq(message.event.as_str()),
                    qd::payload.eq(&message.payload),
                    qd::created_at.eq(now),
                    qd::status.eq(redline_ports::DeliveryStatus::Pending.as_str()),
                    qd::attempts.eq(0),
                    qd::next_attempt_at.eq(now),
                ))
                .execute($conn)
                .await?;
            queued += 1;
        }
        queued
    }};
}

/// An endpoint as stored.
#[derive(Queryable, Selectable)]
#[diesel(table_name = e)]
struct EndpointRow {
    id: String,
    owner: String,
    url: String,
    description: String,
    /// A JSON array of event names.
    events: String,
    secret: String,
    previous_secret: Option<String>,
    previous_secret_until: Option<i64>,
    disabled_reason: Option<String>,
    failing_since: Option<i64>,
    created_at: i64,
    updated_at: i64,
}

fn corrupt(what: &str) -> StoreError {
    StoreError::Other(format!("corrupt {what} in the webhook tables"))
}

fn endpoint(row: EndpointRow) -> Result<WebhookEndpoint, StoreError> {
    let names: Vec<String> = serde_json::from_str(&row.events).map_err(|_| corrupt("event list"))?;
    Ok(WebhookEndpoint {
        owner: Owner::parse(&row.owner).ok_or_else(|| corrupt("owner"))?,
        // A name this version does not know (written by a newer one) is left out.
        events: names.iter().filter_map(|n| EventType::parse(n)).collect(),
        id: row.id,
        url: row.url,
        description: row.description,
        secret: row.secret,
        previous_secret: row.previous_secret,
        previous_secret_until: row.previous_secret_until,
        disabled_reason: row.disabled_reason,
        failing_since: row.failing_since,
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}

/// What an update of an endpoint writes: `None` leaves a column as it is.
#[derive(AsChangeset)]
#[diesel(table_name = e)]
struct EndpointChangeset<'a> {
    url: Option<&'a str>,
    description: Option<&'a str>,
    events: Option<String>,
    disabled_reason: Option<Option<&'a str>>,
    failing_since: Option<Option<i64>>,
    updated_at: i64,
}

fn event_names(events: &[EventType]) -> String {
    serde_json::Value::from(events.iter().map(|e| e.as_str()).collect::<Vec<_>>()).to_string()
}

/// A delivery as stored (its claim's lease and token are the sender's business).
#[derive(Queryable, Selectable)]
#[diesel(table_name = d)]
struct DeliveryRow {
    id: String,
    endpoint_id: String,
    owner: String,
    event: String,
    payload: String,
    created_at: i64,
    status: String,
    attempts: i32,
    next_attempt_at: i64,
    last_status_code: Option<i32>,
    last_error: Option<String>,
    delivered_at: Option<i64>,
}

fn delivery(row: DeliveryRow) -> Result<Delivery, StoreError> {
    Ok(Delivery {
        owner: Owner::parse(&row.owner).ok_or_else(|| corrupt("owner"))?,
        event: EventType::parse(&row.event).ok_or_else(|| corrupt("event"))?,
        status: DeliveryStatus::parse(&row.status).ok_or_else(|| corrupt("status"))?,
        id: row.id,
        endpoint_id: row.endpoint_id,
        payload: row.payload,
        created_at: row.created_at,
        attempts: row.attempts,
        next_attempt_at: row.next_attempt_at,
        last_status_code: row.last_status_code,
        last_error: row.last_error,
        delivered_at: row.delivered_at,
    })
}

const PENDING: &str = "pending";

/// Gives up the pending deliveries of endpoint `$id`, saying `$reason`.
macro_rules! give_up_pending {
    ($conn:expr, $id:expr, $reason:expr) => {
        diesel::update(d::table.filter(d::endpoint_id.eq($id)).filter(d::status.eq(PENDING)))
            .set((
                d::status.eq(DeliveryStatus::Failed.as_str()),
                d::last_error.eq(Some(format!("not sent: the endpoint was disabled ({})", $reason))),
                d::lease_until.eq(None::<i64>),
                d::lease_token.eq(None::<String>),
            ))
            .execute($conn)
            .await?
    };
}

#[async_trait::async_trait]
impl WebhookStore for Db {
    async fn create_webhook_endpoint(&self, endpoint: &WebhookEndpoint, max: usize) -> Result<(), StoreError> {
        let owner = endpoint.owner.to_string();
        let events = event_names(&endpoint.events);
        let r: DbResult<bool> = with_tx!(self, |conn| {
            conn.lock_owner(&owner).await?;
            let n: i64 = e::table.filter(e::owner.eq(&owner)).count().get_result(conn).await?;
            if usize::try_from(n).unwrap_or(usize::MAX) >= max {
                return Ok(false);
            }
            diesel::insert_into(e::table)
                .values((
                    e::id.eq(&endpoint.id),
                    e::owner.eq(&owner),
                    e::url.eq(&endpoint.url),
                    e::description.eq(&endpoint.description),
                    e::events.eq(&events),
                    e::secret.eq(&endpoint.secret),
                    e::created_at.eq(endpoint.created_at),
                    e::updated_at.eq(endpoint.updated_at),
                ))
                .execute(conn)
                .await?;
            Ok(true)
        });
        if r? {
            Ok(())
        } else {
            Err(StoreError::LimitReached)
        }
    }

    async fn webhook_endpoints(&self, owner: Owner) -> Result<Vec<WebhookEndpoint>, StoreError> {
        let owner = owner.to_string();
        let rows: DbResult<Vec<EndpointRow>> = with_conn!(self, |conn| Ok(e::table
            .filter(e::owner.eq(&owner))
            .order((e::created_at.asc(), e::id.asc()))
            .select(EndpointRow::as_select())
            .load(conn)
            .await?));
        rows?.into_iter().map(endpoint).collect()
    }

    async fn webhook_endpoint(&self, owner: Owner, id: &str) -> Result<Option<WebhookEndpoint>, StoreError> {
        let owner = owner.to_string();
        let row: DbResult<Option<EndpointRow>> = with_conn!(self, |conn| Ok(e::table
            .find(id)
            .filter(e::owner.eq(&owner))
            .select(EndpointRow::as_select())
            .get_result(conn)
            .await
            .optional()?));
        row?.map(endpoint).transpose()
    }

    async fn update_webhook_endpoint(
        &self,
        owner: Owner,
        id: &str,
        changes: &EndpointChanges,
        now: Millis,
    ) -> Result<Option<WebhookEndpoint>, StoreError> {
        let owner = owner.to_string();
        let reason = changes.disabled_reason.as_ref().map(Option::as_deref);
        let set = EndpointChangeset {
            url: changes.url.as_deref(),
            description: changes.description.as_deref(),
            events: changes.events.as_deref().map(event_names),
            disabled_reason: reason,
            // Enabled again: its failures are forgotten.
            failing_since: matches!(reason, Some(None)).then_some(None),
            updated_at: now,
        };
        let row: DbResult<Option<EndpointRow>> = with_tx!(self, |conn| {
            let this = e::table.find(id).filter(e::owner.eq(&owner));
            if diesel::update(this).set(&set).execute(conn).await? == 0 {
                return Ok(None);
            }
            if let Some(Some(reason)) = reason {
                give_up_pending!(conn, id, reason);
            }
            Ok(this.select(EndpointRow::as_select()).get_result(conn).await.optional()?)
        });
        row?.map(endpoint).transpose()
    }

    async fn rotate_webhook_secret(
        &self,
        owner: Owner,
        id: &str,
        secret: &str,
        now: Millis,
        previous_until: Millis,
    ) -> Result<Option<WebhookEndpoint>, StoreError> {
        let owner = owner.to_string();
        let row: DbResult<Option<EndpointRow>> = with_tx!(self, |conn| {
            let this = e::table.find(id).filter(e::owner.eq(&owner));
            let Some(current): Option<String> = this.select(e::secret).get_result(conn).await.optional()? else {
                return Ok(None);
            };
            diesel::update(this)
                .set((
                    e::secret.eq(secret),
                    e::previous_secret.eq(Some(current)),
                    e::previous_secret_until.eq(Some(previous_until)),
                    e::updated_at.eq(now),
                ))
                .execute(conn)
                .await?;
            Ok(this.select(EndpointRow::as_select()).get_result(conn).await.optional()?)
        });
        row?.map(endpoint).transpose()
    }

    async fn delete_webhook_endpoint(&self, owner: Owner, id: &str) -> Result<bool, StoreError> {
        let owner = owner.to_string();
        let r: DbResult<bool> = with_tx!(self, |conn| {
            let n = diesel::delete(e::table.find(id).filter(e::owner.eq(&owner))).execute(conn).await?;
            if n == 0 {
                return Ok(false);
            }
            let ids = d::table.filter(d::endpoint_id.eq(id)).select(d::id);
            diesel::delete(a::table.filter(a::delivery_id.eq_any(ids))).execute(conn).await?;
            diesel::delete(d::table.filter(d::endpoint_id.eq(id))).execute(conn).await?;
            Ok(true)
        });
        Ok(r?)
    }

    async fn enqueue_webhook(&self, message: &WebhookMessage, now: Millis) -> Result<usize, StoreError> {
        let r: DbResult<usize> = with_tx!(self, |conn| Ok(queue_webhooks!(conn, message, now)));
        Ok(r?)
    }

    async fn claim_webhook_deliveries(
        &self,
        now: Millis,
        lease_until: Millis,
        limit: i64,
    ) -> Result<Vec<ClaimedDelivery>, StoreError> {
        let token = uuid::Uuid::new_v4().simple().to_string();
        let free = || d::lease_until.is_null().or(d::lease_until.lt(now));
        // A read first: an idle sender looks often, and on SQLite a write transaction would
        // take the writers' turn each time.
        let any: DbResult<Option<String>> = with_read!(self, |conn| Ok(d::table
            .filter(d::status.eq(PENDING))
            .filter(d::next_attempt_at.le(now))
            .filter(free())
            .select(d::id)
            .first(conn)
            .await
            .optional()?));
        if any?.is_none() {
            return Ok(Vec::new());
        }
        let rows: DbResult<Vec<(DeliveryRow, EndpointRow)>> = with_tx!(self, |conn| {
            let due: Vec<String> = d::table
                .filter(d::status.eq(PENDING))
                .filter(d::next_attempt_at.le(now))
                .filter(free())
                .order(d::next_attempt_at.asc())
                .select(d::id)
                .limit(limit)
                .load(conn)
                .await?;
            let mut taken = Vec::new();
            for id in due {
                // Re-checked by the update itself: another sender may have taken it since.
                let n = diesel::update(d::table.find(&id).filter(d::status.eq(PENDING)).filter(free()))
                    .set((d::lease_until.eq(Some(lease_until)), d::lease_token.eq(Some(&token))))
                    .execute(conn)
                    .await?;
                if n == 0 {
                    continue;
                }
                let row: DeliveryRow = d::table.find(&id).select(DeliveryRow::as_select()).get_result(conn).await?;
                let endpoint: Option<EndpointRow> = e::table
                    .find(&row.endpoint_id)
                    .select(EndpointRow::as_select())
                    .get_result(conn)
                    .await
                    .optional()?;
                if let Some(endpoint) = endpoint {
                    taken.push((row, endpoint));
                }
            }
            Ok(taken)
        });
        rows?
            .into_iter()
            .map(|(row, ep)| {
                Ok(ClaimedDelivery { delivery: delivery(row)?, endpoint: endpoint(ep)?, lease_token: token.clone() })
            })
            .collect()
    }

    async fn record_webhook_attempt(
        &self,
        delivery_id: &str,
        lease_token: &str,
        outcome: &AttemptOutcome,
    ) -> Result<bool, StoreError> {
        let attempt = &outcome.attempt;
        let r: DbResult<bool> = with_tx!(self, |conn| {
            let held = d::table.find(delivery_id).filter(d::lease_token.eq(lease_token));
            let endpoint_id: Option<String> = held.select(d::endpoint_id).get_result(conn).await.optional()?;
            let Some(endpoint_id) = endpoint_id else {
                return Ok(false);
            };
            let delivered = outcome.status == DeliveryStatus::Delivered;
            diesel::update(held)
                .set((
                    d::status.eq(outcome.status.as_str()),
                    d::attempts.eq(attempt.attempt),
                    d::next_attempt_at.eq(outcome.next_attempt_at),
                    d::lease_until.eq(None::<i64>),
                    d::lease_token.eq(None::<String>),
                    d::last_status_code.eq(attempt.status_code),
                    d::last_error.eq(&attempt.error),
                    d::delivered_at.eq(delivered.then_some(attempt.at)),
                ))
                .execute(conn)
                .await?;
            diesel::insert_into(a::table)
                .values((
                    a::delivery_id.eq(delivery_id),
                    a::attempt.eq(attempt.attempt),
                    a::at.eq(attempt.at),
                    a::status_code.eq(attempt.status_code),
                    a::latency_ms.eq(attempt.latency_ms),
                    a::error.eq(&attempt.error),
                ))
                .on_conflict_do_nothing()
                .execute(conn)
                .await?;
            let endpoint = e::table.find(&endpoint_id);
            if delivered {
                diesel::update(endpoint).set(e::failing_since.eq(None::<i64>)).execute(conn).await?;
            } else {
                diesel::update(endpoint.filter(e::failing_since.is_null()))
                    .set(e::failing_since.eq(Some(attempt.at)))
                    .execute(conn)
                    .await?;
            }
            if let Some(reason) = &outcome.disable_endpoint {
                diesel::update(endpoint.filter(e::disabled_reason.is_null()))
                    .set(e::disabled_reason.eq(reason))
                    .execute(conn)
                    .await?;
                give_up_pending!(conn, &endpoint_id, reason);
            }
            Ok(true)
        });
        Ok(r?)
    }

    async fn webhook_deliveries(
        &self,
        owner: Owner,
        endpoint_id: &str,
        page: &PageRequest,
    ) -> Result<Page<(Delivery, Vec<DeliveryAttempt>)>, StoreError> {
        let owner = owner.to_string();
        let fetch = i64::try_from(page.fetch()).unwrap_or(i64::MAX);
        let after = page.after.clone();
        type AttemptRow = (String, i32, i64, Option<i32>, i64, Option<String>);
        let r: DbResult<(Vec<DeliveryRow>, Vec<AttemptRow>)> = with_conn!(self, |conn| {
            let q = d::table.filter(d::endpoint_id.eq(endpoint_id)).filter(d::owner.eq(&owner)).into_boxed();
            let rows: Vec<DeliveryRow> = keyset!(q, desc(d::created_at, d::id), &after, fetch)
                .select(DeliveryRow::as_select())
                .load(conn)
                .await?;
            let ids: Vec<&String> = rows.iter().map(|r| &r.id).collect();
            let attempts: Vec<AttemptRow> = a::table
                .filter(a::delivery_id.eq_any(ids))
                .order((a::delivery_id.asc(), a::attempt.asc()))
                .select((a::delivery_id, a::attempt, a::at, a::status_code, a::latency_ms, a::error))
                .load(conn)
                .await?;
            Ok((rows, attempts))
        });
        let (rows, attempts) = r?;
        let log = rows
            .into_iter()
            .map(|row| {
                let of_it = attempts
                    .iter()
                    .filter(|t| t.0 == row.id)
                    .map(|t| DeliveryAttempt {
                        attempt: t.1,
                        at: t.2,
                        status_code: t.3,
                        latency_ms: t.4,
                        error: t.5.clone(),
                    })
                    .collect();
                Ok((delivery(row)?, of_it))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(Page::from_rows(log, page, |(d, _)| Cursor::new(d.created_at, d.id.clone())))
    }

    async fn redeliver_webhook(
        &self,
        owner: Owner,
        endpoint_id: &str,
        delivery_id: &str,
        now: Millis,
    ) -> Result<Option<Delivery>, StoreError> {
        let owner = owner.to_string();
        let row: DbResult<Option<DeliveryRow>> = with_tx!(self, |conn| {
            let this = d::table.find(delivery_id).filter(d::owner.eq(&owner)).filter(d::endpoint_id.eq(endpoint_id));
            let n = diesel::update(this)
                .set((d::status.eq(PENDING), d::next_attempt_at.eq(now), d::delivered_at.eq(None::<i64>)))
                .execute(conn)
                .await?;
            if n == 0 {
                return Ok(None);
            }
            Ok(this.select(DeliveryRow::as_select()).get_result(conn).await.optional()?)
        });
        row?.map(delivery).transpose()
    }

    async fn purge_webhook_deliveries(&self, before: Millis, limit: i64) -> Result<usize, StoreError> {
        let r: DbResult<usize> = with_tx!(self, |conn| {
            let old: Vec<String> = d::table
                .filter(d::created_at.lt(before))
                .filter(d::status.ne(PENDING))
                .select(d::id)
                .limit(limit)
                .load(conn)
                .await?;
            diesel::delete(a::table.filter(a::delivery_id.eq_any(&old))).execute(conn).await?;
            Ok(diesel::delete(d::table.filter(d::id.eq_any(&old))).execute(conn).await?)
        });
        Ok(r?)
    }
}
