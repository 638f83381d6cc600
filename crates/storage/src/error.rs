//! Driver errors, translated into the ports' `StoreError` exactly once.

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use redline_ports::StoreError;

/// The adapter's internal error: what a query or the pool can fail with.
#[derive(Debug)]
pub(crate) enum DbError {
    Diesel(DieselError),
    Pool(String),
    Store(StoreError),
}

impl From<DieselError> for DbError {
    fn from(e: DieselError) -> Self {
        DbError::Diesel(e)
    }
}

impl From<StoreError> for DbError {
    fn from(e: StoreError) -> Self {
        DbError::Store(e)
    }
}

impl From<DbError> for StoreError {
    fn from(e: DbError) -> Self {
        match e {
            DbError::Store(e) => e,
            DbError::Pool(msg) => StoreError::Unavailable(msg),
            DbError::Diesel(DieselError::NotFound) => StoreError::NotFound,
            DbError::Diesel(DieselError::DatabaseError(kind, info)) => match kind {
                DatabaseErrorKind::UniqueViolation => StoreError::Duplicate(info.message().to_owned()),
                DatabaseErrorKind::ForeignKeyViolation => StoreError::NotFound,
                DatabaseErrorKind::ClosedConnection => StoreError::Unavailable(info.message().to_owned()),
                // SQLITE_BUSY after the busy timeout: the database is overloaded, not broken.
                _ if info.message().contains("database is locked") => {
                    StoreError::Unavailable(info.message().to_owned())
                }
                _ => StoreError::Other(info.message().to_owned()),
            },
            DbError::Diesel(other) => StoreError::Other(other.to_string()),
        }
    }
}

pub(crate) type DbResult<T> = Result<T, DbError>;
