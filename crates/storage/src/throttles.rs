//! Throttling of guesses (`IdentityStore::take_throttle`): one row per scope, read and written
//! in one transaction under a lock per scope (SQLite's single writer; PostgreSQL advisory
//! locks, taken in sorted order so that two attempts never wait on each other in a cycle).

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use redline_domain::throttle::{ThrottlePolicy, ThrottleState};
use redline_domain::time_util::Millis;
use redline_ports::StoreError;

use crate::db::{BackendOps, Db};
use crate::error::DbResult;
use crate::schema::throttles;

/// Stale rows deleted at most per new scope.
const SWEEP_BATCH: i64 = 100;

pub(crate) async fn take(
    db: &Db,
    scopes: &[(String, ThrottlePolicy)],
    now: Millis,
) -> Result<Result<(), Millis>, StoreError> {
    let mut scopes: Vec<&(String, ThrottlePolicy)> = scopes.iter().collect();
    scopes.sort_by(|a, b| a.0.cmp(&b.0));
    scopes.dedup_by(|a, b| a.0 == b.0);
    let oldest_kept = now - 2 * scopes.iter().map(|(_, p)| p.window_ms).max().unwrap_or(0);
    let r: DbResult<Result<(), Millis>> = with_tx!(db, |conn| {
        let mut next = Vec::with_capacity(scopes.len());
        let mut wait: Millis = 0;
        for (scope, policy) in &scopes {
            conn.lock_owner(&format!("throttle:{scope}")).await?;
            let row: Option<(i64, i64)> = throttles::table
                .find(scope)
                .select((throttles::failures, throttles::last_at))
                .get_result(conn)
                .await
                .optional()?;
            let state = row.map_or(ThrottleState::default(), |(failures, last_at)| ThrottleState {
                failures: u32::try_from(failures).unwrap_or(u32::MAX),
                last_at,
            });
            match policy.take(state, now) {
                Ok(state) => next.push((scope, state, row.is_none())),
                Err(w) => wait = wait.max(w),
            }
        }
        if wait > 0 {
            return Ok(Err(wait));
        }
        let mut new_scopes = false;
        for (scope, state, new) in next {
            new_scopes |= new;
            let failures = i64::from(state.failures);
            diesel::insert_into(throttles::table)
                .values((
                    throttles::scope.eq(scope),
                    throttles::failures.eq(failures),
                    throttles::last_at.eq(state.last_at),
                ))
                .on_conflict(throttles::scope)
                .do_update()
                .set((throttles::failures.eq(failures), throttles::last_at.eq(state.last_at)))
                .execute(conn)
                .await?;
        }
        if new_scopes {
            // Scopes nobody guesses any more: a few at a time, so the table stays as large
            // as the guessing of the last two windows.
            let stale: Vec<String> = throttles::table
                .filter(throttles::last_at.lt(oldest_kept))
                .select(throttles::scope)
                .limit(SWEEP_BATCH)
                .load(conn)
                .await?;
            if !stale.is_empty() {
                diesel::delete(throttles::table.filter(throttles::scope.eq_any(&stale))).execute(conn).await?;
            }
        }
        Ok(Ok(()))
    });
    Ok(r?)
}

pub(crate) async fn give_back(db: &Db, scope: &str, forget: bool) -> Result<(), StoreError> {
    let r: DbResult<usize> = if forget {
        with_write!(db, |conn| Ok(diesel::delete(throttles::table.find(scope)).execute(conn).await?))
    } else {
        with_write!(db, |conn| Ok(diesel::update(throttles::table.find(scope).filter(throttles::failures.gt(0)))
            .set(throttles::failures.eq(throttles::failures - 1))
            .execute(conn)
            .await?))
    };
    r?;
    Ok(())
}
