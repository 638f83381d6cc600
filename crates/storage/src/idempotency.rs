//! Idempotency keys (`IdempotencyStore`): one row per owner and key. A claim is an insert that
//! does nothing on conflict, so of concurrent claims on any replica exactly one inserts; the
//! others read the row that won. Expired rows and lapsed claims are deleted first, by
//! conditions that only a row in that state meets. A claim is finished, renewed or released
//! only by the request whose token it holds: one whose lease lapsed and was taken over
//! touches nothing.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use redline_domain::time_util::Millis;
use redline_domain::Owner;
use redline_ports::{ClaimRef, IdempotencyClaim, IdempotencyStore, StoreError, StoredAnswer};

use crate::db::Db;
use crate::error::DbResult;
use crate::schema::idempotency_keys as k;

type Row = (String, Option<i32>, Option<String>, Option<Vec<u8>>);

/// The row of a claim still held by its token, not yet answered: the only row that renew,
/// finish and release touch.
macro_rules! held {
    ($owner:expr, $claim:expr) => {
        k::table
            .filter(k::owner.eq(&$owner))
            .filter(k::idem_key.eq($claim.key))
            .filter(k::claim_token.eq($claim.token))
            .filter(k::status.is_null())
    };
}

fn answer(status: i32, headers: Option<String>, body: Option<Vec<u8>>) -> Result<StoredAnswer, StoreError> {
    let headers: Vec<(String, String)> = match headers {
        Some(text) => serde_json::from_str(&text)
            .map_err(|e| StoreError::Other(format!("the headers of an idempotency key: {e}")))?,
        None => Vec::new(),
    };
    Ok(StoredAnswer { status: u16::try_from(status).unwrap_or(500), headers, body: body.unwrap_or_default() })
}

#[async_trait::async_trait]
impl IdempotencyStore for Db {
    async fn claim_idempotency_key(
        &self,
        owner: Owner,
        key: &str,
        token: &str,
        fingerprint: &str,
        now: Millis,
        lease_until: Millis,
        expired_before: Millis,
    ) -> Result<IdempotencyClaim, StoreError> {
        let owner = owner.to_string();
        let r: DbResult<Option<Row>> = with_write!(self, |conn| {
            let this = k::table.filter(k::owner.eq(&owner)).filter(k::idem_key.eq(key));
            diesel::delete(
                this.filter(k::created_at.lt(expired_before).or(k::status.is_null().and(k::lease_until.lt(now)))),
            )
            .execute(conn)
            .await?;
            let inserted = diesel::insert_into(k::table)
                .values((
                    k::owner.eq(&owner),
                    k::idem_key.eq(key),
                    k::fingerprint.eq(fingerprint),
                    k::created_at.eq(now),
                    k::lease_until.eq(lease_until),
                    k::claim_token.eq(token),
                ))
                .on_conflict_do_nothing()
                .execute(conn)
                .await?;
            if inserted == 1 {
                return Ok(None);
            }
            // Released between the insert and the read: the caller asks again.
            let row: Option<Row> =
                this.select((k::fingerprint, k::status, k::headers, k::body)).get_result(conn).await.optional()?;
            Ok(Some(row.unwrap_or_else(|| (fingerprint.to_owned(), None, None, None))))
        });
        Ok(match r? {
            None => IdempotencyClaim::Claimed,
            Some((found, _, _, _)) if found != fingerprint => IdempotencyClaim::Mismatch,
            Some((_, None, _, _)) => IdempotencyClaim::Running,
            Some((_, Some(status), headers, body)) => IdempotencyClaim::Done(answer(status, headers, body)?),
        })
    }

    async fn renew_idempotency_key<'a>(&self, claim: ClaimRef<'a>, lease_until: Millis) -> Result<bool, StoreError> {
        let owner = claim.owner.to_string();
        let r: DbResult<usize> = with_write!(self, |conn| Ok(diesel::update(held!(owner, claim))
            .set(k::lease_until.eq(lease_until))
            .execute(conn)
            .await?));
        Ok(r? == 1)
    }

    async fn finish_idempotency_key<'a>(&self, claim: ClaimRef<'a>, answer: &StoredAnswer) -> Result<(), StoreError> {
        let owner = claim.owner.to_string();
        let headers = serde_json::to_string(&answer.headers)
            .map_err(|e| StoreError::Other(format!("the headers of an idempotency key: {e}")))?;
        let r: DbResult<usize> = with_write!(self, |conn| Ok(diesel::update(held!(owner, claim))
            .set((k::status.eq(i32::from(answer.status)), k::headers.eq(&headers), k::body.eq(&answer.body)))
            .execute(conn)
            .await?));
        r?;
        Ok(())
    }

    async fn release_idempotency_key<'a>(&self, claim: ClaimRef<'a>) -> Result<(), StoreError> {
        let owner = claim.owner.to_string();
        let r: DbResult<usize> =
            with_write!(self, |conn| Ok(diesel::delete(held!(owner, claim)).execute(conn).await?));
        r?;
        Ok(())
    }

    async fn purge_idempotency_keys(&self, before: Millis, limit: i64) -> Result<usize, StoreError> {
        let r: DbResult<usize> = with_write!(self, |conn| {
            let old: Vec<(String, String)> = k::table
                .filter(k::created_at.lt(before))
                .select((k::owner, k::idem_key))
                .limit(limit)
                .load(conn)
                .await?;
            let mut n = 0;
            for (owner, key) in &old {
                n += diesel::delete(k::table.filter(k::owner.eq(owner)).filter(k::idem_key.eq(key)))
                    .execute(conn)
                    .await?;
            }
            Ok(n)
        });
        Ok(r?)
    }
}
