//! Usage metering as the chat turn sees it: `admit` before queueing, `charge` on completion,
//! `release` when a turn fails or is cancelled; and `current` for `GET /v1/usage`.

use std::sync::Arc;

use redline_domain::time_util::Millis;
use redline_domain::usage::{effective_limit, ops_for_sections, standing, Cycle, Grant};
use redline_domain::{KeyId, Owner, Plan};
use redline_ports::records::{PlanSettings, PromoGrantRecord};
use redline_ports::usage::{HoldOutcome, LedgerEntry};
use redline_ports::{Clock, IdentityStore, StoreError, UsageStore};

/// One active promotion grant (the contract's ActivePromotionInfo).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromotionInfo {
    pub redemption_id: String,
    pub name: String,
    pub ops_remaining: i64,
    pub ops_granted: i64,
    pub expires_at: Option<Millis>,
}

/// Which bucket paid for a charge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bucket {
    Tier,
    Promo,
}

impl Bucket {
    pub fn as_str(self) -> &'static str {
        match self {
            Bucket::Tier => "tier",
            Bucket::Promo => "promo",
        }
    }
}

/// Everything the contract's UsageInfo shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageInfo {
    pub monthly_used: i64,
    /// -1 when unlimited.
    pub monthly_limit: i64,
    /// -1 when unlimited; never below 0.
    pub monthly_remaining: i64,
    pub was_billable: bool,
    pub ops_charged: i64,
    pub quota_exhausted: bool,
    pub subscription_tier: Plan,
    pub bucket_used: Option<Bucket>,
    pub redemption_id: Option<String>,
    /// Active grants (live, with operations left), oldest-expiring first.
    pub promotions: Vec<PromotionInfo>,
    /// When the cycle ends and the tier's count starts again (the next month, 00:00 UTC).
    pub resets_at: Millis,
}

/// A billable request that was let in: one operation is held for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admission {
    pub owner: Owner,
    pub request_id: String,
    pub cycle: String,
}

#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// Nothing left in the tier nor in any promotion grant (429).
    #[error("monthly operation limit reached")]
    Exhausted { limit: i64, used: i64, retry_after_secs: u64 },
    #[error("account not found")]
    UnknownAccount,
    /// `charge` of a request that was never admitted or was released.
    #[error("request {0} holds no admission")]
    NotAdmitted(String),
    #[error("unknown or expired promotion code")]
    UnknownCode,
    #[error("promotion code already redeemed")]
    AlreadyRedeemed,
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for UsageError {
    fn from(e: StoreError) -> Self {
        UsageError::Store(e)
    }
}

pub type UsageResult<T> = Result<T, UsageError>;

pub struct Usage {
    accounts: Arc<dyn IdentityStore>,
    ledger: Arc<dyn UsageStore>,
    clock: Arc<dyn Clock>,
}

fn grants_of(records: &[PromoGrantRecord]) -> Vec<Grant> {
    records
        .iter()
        .map(|g| Grant {
            redemption_id: g.redemption_id.clone(),
            remaining: u64::try_from(g.ops_remaining.max(0)).unwrap_or(0),
            expires_at: g.expires_at,
            created_at: g.created_at,
        })
        .collect()
}

impl Usage {
    pub fn new(accounts: Arc<dyn IdentityStore>, ledger: Arc<dyn UsageStore>, clock: Arc<dyn Clock>) -> Self {
        Self { accounts, ledger, clock }
    }

    async fn plan(&self, owner: Owner) -> UsageResult<PlanSettings> {
        match self.accounts.plan_of(owner).await {
            Ok(p) => Ok(p),
            Err(StoreError::NotFound) => Err(UsageError::UnknownAccount),
            Err(e) => Err(e.into()),
        }
    }

    /// The usage of the owner's current cycle, as of `now`.
    async fn info(&self, owner: Owner, plan: PlanSettings, cycle: &Cycle, now: Millis) -> UsageResult<UsageInfo> {
        let snapshot = self.ledger.snapshot(owner, &cycle.id).await?;
        let limit = effective_limit(plan.plan, plan.monthly_limit_override);
        let grants = grants_of(&snapshot.grants);
        let s = standing(limit, u64::try_from(snapshot.tier_used.max(0)).unwrap_or(0), &grants, now);
        let order = redline_domain::usage::drawing_order(&grants, now);
        let promotions = order
            .iter()
            .filter(|g| g.remaining > 0)
            .filter_map(|g| snapshot.grants.iter().find(|r| r.redemption_id == g.redemption_id))
            .map(|r| PromotionInfo {
                redemption_id: r.redemption_id.clone(),
                name: r.name.clone(),
                ops_remaining: r.ops_remaining,
                ops_granted: r.ops_granted,
                expires_at: r.expires_at,
            })
            .collect();
        Ok(UsageInfo {
            monthly_used: i64::try_from(s.used).unwrap_or(i64::MAX),
            monthly_limit: s.limit,
            monthly_remaining: s.remaining,
            was_billable: false,
            ops_charged: 0,
            quota_exhausted: s.quota_exhausted,
            subscription_tier: plan.plan,
            bucket_used: None,
            redemption_id: None,
            promotions,
            resets_at: cycle.end_ms,
        })
    }

    /// `GET /v1/usage`: the current cycle. Not billable.
    pub async fn current(&self, owner: Owner) -> UsageResult<UsageInfo> {
        let now = self.clock.now_ms();
        let plan = self.plan(owner).await?;
        self.info(owner, plan, &Cycle::containing(now), now).await
    }

    /// Lets a billable request in, holding one operation for it, or refuses it with what
    /// the 429 needs. Idempotent per `request_id`.
    pub async fn admit(&self, owner: Owner, request_id: &str) -> UsageResult<Admission> {
        let now = self.clock.now_ms();
        let plan = self.plan(owner).await?;
        let cycle = Cycle::containing(now);
        let limit = effective_limit(plan.plan, plan.monthly_limit_override);
        match self.ledger.hold(owner, request_id, &cycle.id, limit, now).await? {
            HoldOutcome::Admitted(entry) => Ok(Admission { owner, request_id: entry.request_id, cycle: entry.cycle }),
            HoldOutcome::Refused => {
                let info = self.info(owner, plan, &cycle, now).await?;
                Err(UsageError::Exhausted {
                    limit: info.monthly_limit,
                    used: info.monthly_used,
                    retry_after_secs: cycle.seconds_until_reset(now),
                })
            }
        }
    }

    /// Charges an admitted turn in full for the sections it edited (in the cycle it was
    /// admitted in) and returns the usage to show with its result. Idempotent: charging the
    /// same admission again returns the same charge.
    pub async fn charge(&self, admission: &Admission, sections_edited: u64) -> UsageResult<UsageInfo> {
        let now = self.clock.now_ms();
        let plan = self.plan(admission.owner).await?;
        let limit = effective_limit(plan.plan, plan.monthly_limit_override);
        let entry = match self.ledger.settle(&admission.request_id, ops_for_sections(sections_edited), limit, now).await
        {
            Ok(e) => e,
            Err(StoreError::NotFound) => return Err(UsageError::NotAdmitted(admission.request_id.clone())),
            Err(e) => return Err(e.into()),
        };
        // What the caller sees is the cycle they are in now (the charge itself went to the
        // admission's cycle).
        let mut info = self.info(admission.owner, plan, &Cycle::containing(now), now).await?;
        info.was_billable = true;
        info.ops_charged = entry.ops();
        let (bucket, redemption) = bucket_of(&entry);
        info.bucket_used = Some(bucket);
        info.redemption_id = redemption;
        Ok(info)
    }

    /// Gives the held operation back (the turn failed or was cancelled). Idempotent.
    pub async fn release(&self, admission: &Admission) -> UsageResult<()> {
        match self.ledger.release(&admission.request_id, self.clock.now_ms()).await {
            Ok(_) | Err(StoreError::NotFound) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Redeems a promotion code for the owner.
    pub async fn redeem(&self, owner: Owner, code: &str) -> UsageResult<PromotionInfo> {
        let redemption_id = format!("red_{}", KeyId::new().as_uuid().simple());
        let redeemed = self.ledger.redeem_code(owner, code.trim(), &redemption_id, self.clock.now_ms()).await;
        match redeemed {
            Ok(g) => Ok(PromotionInfo {
                redemption_id: g.redemption_id,
                name: g.name,
                ops_remaining: g.ops_remaining,
                ops_granted: g.ops_granted,
                expires_at: g.expires_at,
            }),
            Err(StoreError::NotFound) => Err(UsageError::UnknownCode),
            Err(StoreError::Duplicate(_)) => Err(UsageError::AlreadyRedeemed),
            Err(e) => Err(e.into()),
        }
    }
}

/// `promo` when any promotion operation paid for the turn (with the first grant drawn),
/// else `tier`.
fn bucket_of(entry: &LedgerEntry) -> (Bucket, Option<String>) {
    if entry.promo_ops > 0 {
        (Bucket::Promo, entry.first_redemption.clone())
    } else {
        (Bucket::Tier, None)
    }
}

#[cfg(test)]
mod tests;
