//! The one error type of the storage ports.

/// What a store can answer besides success. Adapters translate their driver errors into
/// these variants exactly once; `core` never sees a driver error.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A uniqueness rule was broken (an e-mail already taken, an id reused).
    #[error("duplicate: {0}")]
    Duplicate(String),
    /// The row the operation needs does not exist.
    #[error("not found")]
    NotFound,
    /// A limit checked inside the store's transaction was reached (e.g. keys per account).
    #[error("limit reached")]
    LimitReached,
    /// The database could not be reached or had no free connection in time.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// Anything else: a bug or a corrupt row. The message is for the log only.
    #[error("storage failure: {0}")]
    Other(String),
}
