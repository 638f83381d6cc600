//! `UsageStore` on both backends. The arithmetic is `redline_domain::usage`; this module only
//! reads and writes its inputs and outputs inside one transaction per call, serialised per
//! owner (`BEGIN IMMEDIATE` on SQLite, an advisory lock on PostgreSQL).

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use redline_domain::time_util::Millis;
use redline_domain::usage::{allocate, can_admit, Cycle};
use redline_domain::webhook::{threshold_crossed, EventType};
use redline_domain::Owner;
use redline_ports::records::PromoGrantRecord;
use redline_ports::usage::{HoldOutcome, LedgerEntry, LedgerStatus, UsageSnapshot};
use redline_ports::{StoreError, UsageStore, WebhookMessage};

use crate::db::{BackendOps, Db};
use crate::error::DbResult;
use crate::rows::{domain_grant, LedgerRow, PromoCodeRow, PromoGrantRow};
use crate::schema::*;

fn ops_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Writes a draw: the cycle counter, the grants' balances and the draw rows. Expanded inside
/// the transaction body of either backend.
macro_rules! apply_draw {
    ($conn:expr, $owner:expr, $cycle:expr, $request_id:expr, $draw:expr) => {{
        let tier = ops_i64($draw.tier);
        diesel::insert_into(usage_counters::table)
            .values((
                usage_counters::owner.eq($owner),
                usage_counters::cycle.eq($cycle),
                usage_counters::tier_used.eq(tier),
            ))
            .on_conflict((usage_counters::owner, usage_counters::cycle))
            .do_update()
            .set(usage_counters::tier_used.eq(usage_counters::tier_used + tier))
            .execute($conn)
            .await?;
        for (redemption, n) in &$draw.promos {
            let n = ops_i64(*n);
            diesel::update(promo_grants::table.find(redemption))
                .set(promo_grants::ops_remaining.eq(promo_grants::ops_remaining - n))
                .execute($conn)
                .await?;
            diesel::insert_into(usage_draws::table)
                .values((
                    usage_draws::request_id.eq($request_id),
                    usage_draws::redemption_id.eq(redemption),
                    usage_draws::draw_ops.eq(n),
                ))
                .on_conflict((usage_draws::request_id, usage_draws::redemption_id))
                .do_update()
                .set(usage_draws::draw_ops.eq(usage_draws::draw_ops + n))
                .execute($conn)
                .await?;
        }
    }};
}

/// Reads the tier counter and the grants of an owner for a cycle.
macro_rules! read_state {
    ($conn:expr, $owner:expr, $cycle:expr) => {{
        let used: Option<i64> = usage_counters::table
            .find(($owner, $cycle))
            .select(usage_counters::tier_used)
            .get_result($conn)
            .await
            .optional()?;
        let grants: Vec<PromoGrantRow> = promo_grants::table
            .filter(promo_grants::owner.eq($owner))
            .select(PromoGrantRow::as_select())
            .load($conn)
            .await?;
        (used.unwrap_or(0), grants)
    }};
}

/// The `usage.threshold` message of a move of the month's operations (its tier count) from
/// `before` to `after`, when the move reaches 80 % or 100 % of `limit` (docs/api.md,
/// "Webhooks"). It is queued in the transaction of the move: a hold at admission or the
/// charge beyond it.
fn threshold_message(
    owner: Owner,
    cycle: &str,
    before: u64,
    after: u64,
    limit: Option<u64>,
    now: Millis,
) -> Option<WebhookMessage> {
    let as_i64 = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let limit = limit?;
    let pct = threshold_crossed(as_i64(before), as_i64(after), as_i64(limit))?;
    let mut data = serde_json::json!({
        "threshold_percent": pct,
        "monthly_used": after,
        "monthly_limit": limit,
        "cycle": cycle,
    });
    let current = Cycle::containing(now);
    if current.id == cycle {
        data["resets_at"] = serde_json::Value::from(redline_domain::time_util::iso8601(current.end_ms));
    }
    Some(WebhookMessage::new(owner, EventType::UsageThreshold, now, data))
}

#[async_trait::async_trait]
impl UsageStore for Db {
    async fn snapshot(&self, owner: Owner, cycle: &str) -> Result<UsageSnapshot, StoreError> {
        let owner = owner.to_string();
        let r: DbResult<(i64, Vec<PromoGrantRow>)> = with_conn!(self, |conn| Ok(read_state!(conn, &owner, cycle)));
        let (tier_used, rows) = r?;
        let grants = rows.into_iter().map(PromoGrantRecord::try_from).collect::<Result<_, _>>()?;
        Ok(UsageSnapshot { tier_used, grants })
    }

    async fn hold(
        &self,
        owner: Owner,
        request_id: &str,
        cycle: &str,
        limit: Option<u64>,
        now: Millis,
    ) -> Result<HoldOutcome, StoreError> {
        let owner_s = owner.to_string();
        let r: DbResult<Option<LedgerRow>> = with_tx!(self, |conn| {
            conn.lock_owner(&owner_s).await?;
            let existing: Option<LedgerRow> = usage_ledger::table
                .find(request_id)
                .select(LedgerRow::as_select())
                .get_result(conn)
                .await
                .optional()?;
            if let Some(row) = existing {
                return Ok(Some(row));
            }
            let (used, grant_rows) = read_state!(conn, &owner_s, cycle);
            let grants: Vec<_> = grant_rows.iter().map(domain_grant).collect();
            let used = u64::try_from(used.max(0)).unwrap_or(0);
            if !can_admit(limit, used, &grants, now) {
                return Ok(None);
            }
            let draw = allocate(1, limit, used, &grants, now);
            let row = LedgerRow {
                request_id: request_id.to_owned(),
                owner: owner_s.clone(),
                cycle: cycle.to_owned(),
                status: LedgerStatus::Held.as_str().to_owned(),
                tier_ops: ops_i64(draw.tier),
                promo_ops: ops_i64(draw.promo_total()),
                first_redemption: draw.first_grant().map(str::to_owned),
                created_at: now,
                settled_at: None,
            };
            diesel::insert_into(usage_ledger::table).values(&row).execute(conn).await?;
            apply_draw!(conn, &owner_s, cycle, request_id, draw);
            if let Some(message) = threshold_message(owner, cycle, used, used + draw.tier, limit, now) {
                queue_webhooks!(conn, &message, now);
            }
            Ok(Some(row))
        });
        match r? {
            Some(row) => Ok(HoldOutcome::Admitted(row.try_into()?)),
            None => Ok(HoldOutcome::Refused),
        }
    }

    async fn settle(
        &self,
        request_id: &str,
        total_ops: u64,
        limit: Option<u64>,
        now: Millis,
    ) -> Result<LedgerEntry, StoreError> {
        let r: DbResult<LedgerRow> = with_tx!(self, |conn| {
            let Some(row) = usage_ledger::table
                .find(request_id)
                .select(LedgerRow::as_select())
                .get_result(conn)
                .await
                .optional()?
            else {
                return Err(StoreError::NotFound.into());
            };
            // Lock, then read the row again: a concurrent settle or release of the same
            // request may have committed while this one waited for the lock.
            conn.lock_owner(&row.owner).await?;
            let row: LedgerRow =
                usage_ledger::table.find(request_id).select(LedgerRow::as_select()).get_result(conn).await?;
            match LedgerStatus::parse(&row.status) {
                Some(LedgerStatus::Charged) => return Ok(row),
                Some(LedgerStatus::Held) => {}
                _ => return Err(StoreError::NotFound.into()),
            }
            let extra = ops_i64(total_ops).saturating_sub(row.tier_ops + row.promo_ops).max(0);
            let (used, grant_rows) = read_state!(conn, &row.owner, &row.cycle);
            let grants: Vec<_> = grant_rows.iter().map(domain_grant).collect();
            let used = u64::try_from(used.max(0)).unwrap_or(0);
            let draw = allocate(u64::try_from(extra).unwrap_or(0), limit, used, &grants, now);
            if extra > 0 {
                apply_draw!(conn, &row.owner, &row.cycle, request_id, draw);
                let owner = Owner::parse(&row.owner);
                let message = owner.and_then(|o| threshold_message(o, &row.cycle, used, used + draw.tier, limit, now));
                if let Some(message) = message {
                    queue_webhooks!(conn, &message, now);
                }
            }
            let settled = LedgerRow {
                status: LedgerStatus::Charged.as_str().to_owned(),
                tier_ops: row.tier_ops + ops_i64(draw.tier),
                promo_ops: row.promo_ops + ops_i64(draw.promo_total()),
                first_redemption: row.first_redemption.clone().or_else(|| draw.first_grant().map(str::to_owned)),
                settled_at: Some(now),
                ..row
            };
            diesel::update(usage_ledger::table.find(request_id))
                .set((
                    usage_ledger::status.eq(&settled.status),
                    usage_ledger::tier_ops.eq(settled.tier_ops),
                    usage_ledger::promo_ops.eq(settled.promo_ops),
                    usage_ledger::first_redemption.eq(&settled.first_redemption),
                    usage_ledger::settled_at.eq(settled.settled_at),
                ))
                .execute(conn)
                .await?;
            Ok(settled)
        });
        r?.try_into()
    }

    async fn release(&self, request_id: &str, now: Millis) -> Result<LedgerEntry, StoreError> {
        let r: DbResult<LedgerRow> = with_tx!(self, |conn| {
            let Some(row) = usage_ledger::table
                .find(request_id)
                .select(LedgerRow::as_select())
                .get_result(conn)
                .await
                .optional()?
            else {
                return Err(StoreError::NotFound.into());
            };
            conn.lock_owner(&row.owner).await?;
            let row: LedgerRow =
                usage_ledger::table.find(request_id).select(LedgerRow::as_select()).get_result(conn).await?;
            if LedgerStatus::parse(&row.status) != Some(LedgerStatus::Held) {
                return Ok(row);
            }
            diesel::update(usage_counters::table.find((&row.owner, &row.cycle)))
                .set(usage_counters::tier_used.eq(usage_counters::tier_used - row.tier_ops))
                .execute(conn)
                .await?;
            let draws: Vec<(String, i64)> = usage_draws::table
                .filter(usage_draws::request_id.eq(request_id))
                .select((usage_draws::redemption_id, usage_draws::draw_ops))
                .load(conn)
                .await?;
            for (redemption, n) in draws {
                diesel::update(promo_grants::table.find(&redemption))
                    .set(promo_grants::ops_remaining.eq(promo_grants::ops_remaining + n))
                    .execute(conn)
                    .await?;
            }
            let released =
                LedgerRow { status: LedgerStatus::Released.as_str().to_owned(), settled_at: Some(now), ..row };
            diesel::update(usage_ledger::table.find(request_id))
                .set((usage_ledger::status.eq(&released.status), usage_ledger::settled_at.eq(released.settled_at)))
                .execute(conn)
                .await?;
            Ok(released)
        });
        r?.try_into()
    }

    async fn ledger_entry(&self, request_id: &str) -> Result<Option<LedgerEntry>, StoreError> {
        let r: DbResult<Option<LedgerRow>> = with_conn!(self, |conn| Ok(usage_ledger::table
            .find(request_id)
            .select(LedgerRow::as_select())
            .get_result(conn)
            .await
            .optional()?));
        r?.map(LedgerEntry::try_from).transpose()
    }

    async fn redeem_code(
        &self,
        owner: Owner,
        code: &str,
        redemption_id: &str,
        now: Millis,
    ) -> Result<PromoGrantRecord, StoreError> {
        let owner_s = owner.to_string();
        let r: DbResult<PromoGrantRow> = with_tx!(self, |conn| {
            // The code as written, else one that differs only in case (`launch1` for `LAUNCH1`).
            let mut promo: Option<PromoCodeRow> =
                promo_codes::table.find(code).select(PromoCodeRow::as_select()).get_result(conn).await.optional()?;
            if promo.is_none() {
                promo = promo_codes::table
                    .filter(crate::sql::lower(promo_codes::code).eq(code.to_ascii_lowercase()))
                    .order(promo_codes::code)
                    .select(PromoCodeRow::as_select())
                    .first(conn)
                    .await
                    .optional()?;
            }
            let Some(promo) = promo.filter(|p| p.expires_at.is_none_or(|at| at > now)) else {
                return Err(StoreError::NotFound.into());
            };
            let grant = PromoGrantRow {
                redemption_id: redemption_id.to_owned(),
                owner: owner_s.clone(),
                name: promo.name,
                code: Some(promo.code),
                ops_granted: promo.grant_ops,
                ops_remaining: promo.grant_ops,
                expires_at: promo.expires_at,
                created_at: now,
            };
            diesel::insert_into(promo_grants::table).values(&grant).execute(conn).await?;
            Ok(grant)
        });
        r?.try_into()
    }
}
