//! The usage ledger: holds, charges and refunds of operations, and promotion grants.
//!
//! Every billable request leaves one ledger row keyed by its request (job) id. Admission
//! *holds* one operation (the least any turn costs) inside the same transaction that checks
//! the quota, so concurrent requests can never be admitted on the same last operation;
//! completion *settles* the row to the turn's full cost; failure or cancellation *releases*
//! it. All three are idempotent per request id, so a retried job is never charged twice.

use redline_domain::time_util::Millis;
use redline_domain::Owner;

use crate::error::StoreError;
use crate::records::PromoGrantRecord;

/// State of one ledger row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LedgerStatus {
    /// One operation held at admission.
    Held,
    /// Settled to the turn's full cost.
    Charged,
    /// Given back (the turn failed or was cancelled).
    Released,
}

impl LedgerStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            LedgerStatus::Held => "held",
            LedgerStatus::Charged => "charged",
            LedgerStatus::Released => "released",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "held" => Some(LedgerStatus::Held),
            "charged" => Some(LedgerStatus::Charged),
            "released" => Some(LedgerStatus::Released),
            _ => None,
        }
    }
}

/// One billable request in the ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerEntry {
    pub request_id: String,
    pub owner: Owner,
    /// The cycle (`YYYY-MM`) in which the request was admitted; its charge goes there.
    pub cycle: String,
    pub status: LedgerStatus,
    pub tier_ops: i64,
    pub promo_ops: i64,
    /// The grant the first promotion operation came from, if any.
    pub first_redemption: Option<String>,
    pub created_at: Millis,
    pub settled_at: Option<Millis>,
}

impl LedgerEntry {
    pub fn ops(&self) -> i64 {
        self.tier_ops + self.promo_ops
    }
}

/// What `hold` answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HoldOutcome {
    Admitted(LedgerEntry),
    /// Nothing left in the tier nor in any live grant; nothing was written.
    Refused,
}

/// The tier's use of a cycle and the owner's grants, read in one snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageSnapshot {
    pub tier_used: i64,
    pub grants: Vec<PromoGrantRecord>,
}

#[cfg_attr(feature = "mocks", mockall::automock)]
#[async_trait::async_trait]
pub trait UsageStore: Send + Sync {
    /// Tier operations used by `owner` in `cycle` and all of the owner's grants (expired and
    /// used-up ones included; callers filter).
    async fn snapshot(&self, owner: Owner, cycle: &str) -> Result<UsageSnapshot, StoreError>;

    /// In one transaction serialised per owner: unless the ledger already has `request_id`
    /// (then it MUST return that row as `Admitted` and change nothing), checks admission
    /// with `redline_domain::usage::can_admit` against `limit` (`None` = unlimited) and, when
    /// admitted, draws one operation by `redline_domain::usage::allocate` and writes the
    /// held row, the cycle counter and the grant balances.
    async fn hold(
        &self,
        owner: Owner,
        request_id: &str,
        cycle: &str,
        limit: Option<u64>,
        now: Millis,
    ) -> Result<HoldOutcome, StoreError>;

    /// Settles a held row to `total_ops` (at least its held operations): the extra
    /// operations are drawn like a charge in the row's own cycle, overrun allowed. A row
    /// already charged MUST be returned unchanged. `NotFound` for an unknown request id;
    /// a released row is `NotFound` too (it cannot be charged any more).
    async fn settle(
        &self,
        request_id: &str,
        total_ops: u64,
        limit: Option<u64>,
        now: Millis,
    ) -> Result<LedgerEntry, StoreError>;

    /// Gives a held row's operations back (tier counter and grants). A row already
    /// released, or charged, MUST be returned unchanged. `NotFound` for an unknown id.
    async fn release(&self, request_id: &str, now: Millis) -> Result<LedgerEntry, StoreError>;

    async fn ledger_entry(&self, request_id: &str) -> Result<Option<LedgerEntry>, StoreError>;

    /// Redeems a promotion code for `owner`: adds a grant of its operations. The code as
    /// written, else one that differs from it only in ASCII case. `NotFound` for an unknown or
    /// expired code; `Duplicate` when this owner already redeemed it.
    async fn redeem_code(
        &self,
        owner: Owner,
        code: &str,
        redemption_id: &str,
        now: Millis,
    ) -> Result<PromoGrantRecord, StoreError>;
}
