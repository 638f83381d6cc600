//! Files: uploads, extracted images, rendered exports. Adapter: `redline-blobs`
//! (object_store: a local folder by default, any S3-compatible store by URL).

use bytes::Bytes;
use futures_util::stream::BoxStream;

/// Why a blob operation failed.
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    #[error("blob not found")]
    NotFound,
    /// A streamed write went over the caller's cap; nothing is left behind.
    #[error("blob larger than {limit} bytes")]
    TooLarge { limit: u64 },
    #[error("blob store unavailable: {0}")]
    Unavailable(String),
}

/// A stored blob's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobMeta {
    pub size: u64,
}

/// Keys are relative paths made by the core (`images/<id>`, `attachments/<id>`,
/// `exports/<id>`), never from user input.
#[async_trait::async_trait]
pub trait BlobStore: Send + Sync {
    /// Stores `bytes` under `key`, replacing what was there. Atomic: a reader sees the old
    /// blob, the new one, or none, never a part.
    async fn put(&self, key: &str, bytes: Bytes) -> Result<(), BlobError>;

    /// Streams chunks to `key`. Over `limit` bytes in total → `TooLarge` and nothing stored.
    /// Answers the number of bytes written.
    async fn put_stream(
        &self,
        key: &str,
        chunks: BoxStream<'_, Result<Bytes, std::io::Error>>,
        limit: u64,
    ) -> Result<u64, BlobError>;

    async fn get(&self, key: &str) -> Result<Bytes, BlobError>;

    async fn head(&self, key: &str) -> Result<BlobMeta, BlobError>;

    /// Deletes `key`; deleting a missing key is not an error.
    async fn delete(&self, key: &str) -> Result<(), BlobError>;

    /// Deletes every key under `prefix` (ending in `/`).
    async fn delete_prefix(&self, prefix: &str) -> Result<(), BlobError>;
}
