//! The `BlobStore` adapter: the `object_store` crate over a local folder (the embedded
//! default, `<data_dir>/blobs`) or any S3-compatible store (`REDLINE_STORAGE_URL=s3://bucket[/prefix]`,
//! endpoint and credentials from the usual `AWS_*` variables).
//!
//! Invariant: memory is bounded whatever the blob's size. A streamed write holds at most one
//! part ([`PART_BYTES`]) plus one incoming chunk; larger blobs go up as a multipart upload,
//! which is aborted (nothing left behind) when the stream fails or passes its cap.
//!
//! A store that cannot be reached fails fast: a request is retried at most [`S3_RETRIES`]
//! times within [`S3_RETRY_WINDOW`] (object_store's default keeps trying for 3 minutes),
//! so an upload during an outage gets its 503 in about a second, not after a minute.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures_util::stream::BoxStream;
use futures_util::{StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::prefix::PrefixStore;
use object_store::{BackoffConfig, MultipartUpload, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig};
use redline_ports::blobs::{BlobError, BlobMeta, BlobStore};

/// Size of the parts of a multipart upload (S3 wants at least 5 MiB for every part but the
/// last). A streamed blob smaller than this is written with one atomic `put`.
pub const PART_BYTES: usize = 8 * 1024 * 1024;

/// Retries of one S3 request (connection refused, 5xx, a timeout of an idempotent request),
/// with a backoff from 100 ms doubling up to 1 s.
pub const S3_RETRIES: usize = 3;
/// The longest an S3 request is retried, from its first try.
pub const S3_RETRY_WINDOW: std::time::Duration = std::time::Duration::from_secs(10);

/// Where blobs live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlobLocation {
    /// A folder on this machine.
    Local(PathBuf),
    /// An S3-compatible bucket, optionally under a key prefix.
    S3 {
        bucket: String,
        prefix: Option<String>,
        /// `AWS_*` settings (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_REGION`, …),
        /// names as in the environment.
        settings: Vec<(String, String)>,
    },
}

/// Why a storage URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocationError {
    #[error("REDLINE_STORAGE_URL must be s3://bucket[/prefix] or a folder (file:///path), got {0:?}")]
    Unsupported(String),
    #[error("REDLINE_STORAGE_URL names no bucket: {0:?}")]
    NoBucket(String),
}

impl BlobLocation {
    /// The location of `REDLINE_STORAGE_URL`: absent → `<data_dir>/blobs`; `s3://bucket[/prefix]`
    /// → that bucket, configured by `aws_settings`; `file:///path` or a bare path → that folder.
    pub fn from_url(
        url: Option<&str>,
        data_dir: &Path,
        aws_settings: Vec<(String, String)>,
    ) -> Result<Self, LocationError> {
        let Some(url) = url.map(str::trim).filter(|u| !u.is_empty()) else {
            return Ok(BlobLocation::Local(data_dir.join("blobs")));
        };
        if let Some(rest) = url.strip_prefix("s3://") {
            let (bucket, prefix) = match rest.split_once('/') {
                Some((bucket, prefix)) => (bucket, Some(prefix.trim_matches('/')).filter(|p| !p.is_empty())),
                None => (rest, None),
            };
            if bucket.is_empty() {
                return Err(LocationError::NoBucket(url.to_owned()));
            }
            return Ok(BlobLocation::S3 {
                bucket: bucket.to_owned(),
                prefix: prefix.map(str::to_owned),
                settings: aws_settings,
            });
        }
        if let Some(path) = url.strip_prefix("file://") {
            return Ok(BlobLocation::Local(PathBuf::from(path)));
        }
        if url.contains("://") {
            return Err(LocationError::Unsupported(url.to_owned()));
        }
        Ok(BlobLocation::Local(PathBuf::from(url)))
    }
}

/// The blob store: one `ObjectStore` behind the port.
pub struct ObjectBlobStore {
    store: Arc<dyn ObjectStore>,
    description: String,
}

impl std::fmt::Debug for ObjectBlobStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ObjectBlobStore({})", self.description)
    }
}

fn unavailable(e: impl std::fmt::Display) -> BlobError {
    BlobError::Unavailable(e.to_string())
}

fn map_error(e: object_store::Error) -> BlobError {
    match e {
        object_store::Error::NotFound { .. } => BlobError::NotFound,
        other => unavailable(other),
    }
}

/// Whether `endpoint` is plain HTTP to this machine (a test server or a local gateway),
/// which is the only place plain HTTP is allowed without `AWS_ALLOW_HTTP=true`.
pub fn is_loopback_http(endpoint: &str) -> bool {
    let Some(rest) = endpoint.strip_prefix("http://") else {
        return false;
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

impl ObjectBlobStore {
    /// Opens the store (creating the local folder when needed). S3 settings are checked
    /// here; credentials and the bucket are only reached by the first request.
    pub fn open(location: &BlobLocation) -> Result<Self, BlobError> {
        match location {
            BlobLocation::Local(dir) => {
                std::fs::create_dir_all(dir)
                    .map_err(|e| unavailable(format!("cannot create the blob folder {}: {e}", dir.display())))?;
                let fs = LocalFileSystem::new_with_prefix(dir).map_err(unavailable)?.with_automatic_cleanup(true);
                Ok(Self { store: Arc::new(fs), description: format!("folder {}", dir.display()) })
            }
            BlobLocation::S3 { bucket, prefix, settings } => {
                // object_store's HTTP client uses rustls without a built-in provider choice.
                let _already_installed = rustls::crypto::ring::default_provider().install_default();
                let mut builder = AmazonS3Builder::new().with_bucket_name(bucket).with_region("us-east-1");
                let mut allow_http = false;
                for (name, value) in settings {
                    let key = name.to_ascii_lowercase();
                    if key == "aws_allow_http" {
                        allow_http |= value.eq_ignore_ascii_case("true");
                        continue;
                    }
                    if matches!(key.as_str(), "aws_endpoint_url" | "aws_endpoint") && is_loopback_http(value) {
                        allow_http = true;
                    }
                    // Variables object_store does not know (AWS_PROFILE, …) are not ours to refuse.
                    if let Ok(k) = key.parse::<AmazonS3ConfigKey>() {
                        builder = builder.with_config(k, value);
                    }
                }
                let retry = RetryConfig {
                    backoff: BackoffConfig {
                        init_backoff: std::time::Duration::from_millis(100),
                        max_backoff: std::time::Duration::from_secs(1),
                        base: 2.,
                    },
                    max_retries: S3_RETRIES,
                    retry_timeout: S3_RETRY_WINDOW,
                };
                let s3 = builder.with_allow_http(allow_http).with_retry(retry).build().map_err(unavailable)?;
                let description = format!("s3://{bucket}/{}", prefix.as_deref().unwrap_or(""));
                let store: Arc<dyn ObjectStore> = match prefix {
                    Some(p) => Arc::new(PrefixStore::new(s3, p.as_str())),
                    None => Arc::new(s3),
                };
                Ok(Self { store, description })
            }
        }
    }

    /// Where the blobs are, for the start-up log.
    pub fn description(&self) -> &str {
        &self.description
    }

    fn path(key: &str) -> Result<ObjectPath, BlobError> {
        if key.is_empty() || key.starts_with('/') {
            return Err(unavailable(format!("invalid blob key {key:?}")));
        }
        ObjectPath::parse(key).map_err(|e| unavailable(format!("invalid blob key {key:?}: {e}")))
    }

    async fn upload_streamed(
        &self,
        path: &ObjectPath,
        mut chunks: BoxStream<'_, Result<Bytes, std::io::Error>>,
        limit: u64,
    ) -> Result<u64, BlobError> {
        let mut buffer = BytesMut::new();
        let mut total: u64 = 0;
        let mut upload: Option<Box<dyn MultipartUpload>> = None;
        let outcome: Result<(), BlobError> = async {
            while let Some(chunk) = chunks.next().await {
                let chunk = chunk.map_err(|e| unavailable(format!("reading the data to store: {e}")))?;
                total += chunk.len() as u64;
                if total > limit {
                    return Err(BlobError::TooLarge { limit });
                }
                buffer.extend_from_slice(&chunk);
                while buffer.len() >= PART_BYTES {
                    let part = buffer.split_to(PART_BYTES).freeze();
                    let up = match &mut upload {
                        Some(up) => up,
                        None => upload.insert(self.store.put_multipart(path).await.map_err(map_error)?),
                    };
                    up.put_part(PutPayload::from(part)).await.map_err(map_error)?;
                }
            }
            Ok(())
        }
        .await;
        match (outcome, upload) {
            (Err(e), Some(mut up)) => {
                if let Err(abort) = up.abort().await {
                    tracing::warn!(error = %abort, "could not abort a multipart upload");
                }
                Err(e)
            }
            (Err(e), None) => Err(e),
            (Ok(()), None) => {
                self.store.put(path, PutPayload::from(buffer.freeze())).await.map_err(map_error)?;
                Ok(total)
            }
            (Ok(()), Some(mut up)) => {
                let finished = async {
                    if !buffer.is_empty() {
                        up.put_part(PutPayload::from(buffer.freeze())).await?;
                    }
                    up.complete().await
                }
                .await;
                match finished {
                    Ok(_) => Ok(total),
                    Err(e) => {
                        if let Err(abort) = up.abort().await {
                            tracing::warn!(error = %abort, "could not abort a multipart upload");
                        }
                        Err(map_error(e))
                    }
                }
            }
        }
    }
}

#[async_trait::async_trait]
impl BlobStore for ObjectBlobStore {
    async fn put(&self, key: &str, bytes: Bytes) -> Result<(), BlobError> {
        let path = Self::path(key)?;
        self.store.put(&path, PutPayload::from(bytes)).await.map_err(map_error)?;
        Ok(())
    }

    async fn put_stream(
        &self,
        key: &str,
        chunks: BoxStream<'_, Result<Bytes, std::io::Error>>,
        limit: u64,
    ) -> Result<u64, BlobError> {
        let path = Self::path(key)?;
        self.upload_streamed(&path, chunks, limit).await
    }

    async fn get(&self, key: &str) -> Result<Bytes, BlobError> {
        let path = Self::path(key)?;
        self.store.get(&path).await.map_err(map_error)?.bytes().await.map_err(map_error)
    }

    async fn head(&self, key: &str) -> Result<BlobMeta, BlobError> {
        let path = Self::path(key)?;
        let meta = self.store.head(&path).await.map_err(map_error)?;
        Ok(BlobMeta { size: meta.size })
    }

    async fn delete(&self, key: &str) -> Result<(), BlobError> {
        let path = Self::path(key)?;
        match self.store.delete(&path).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(map_error(e)),
        }
    }

    async fn delete_prefix(&self, prefix: &str) -> Result<(), BlobError> {
        let path = Self::path(prefix.trim_end_matches('/'))?;
        let listed: Vec<ObjectPath> =
            match self.store.list(Some(&path)).map_ok(|meta| meta.location).try_collect().await {
                Ok(paths) => paths,
                Err(object_store::Error::NotFound { .. }) => Vec::new(),
                Err(e) => return Err(map_error(e)),
            };
        for location in listed {
            match self.store.delete(&location).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(map_error(e)),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_urls() {
        let data = Path::new("/srv/redline");
        assert_eq!(BlobLocation::from_url(None, data, vec![]), Ok(BlobLocation::Local(data.join("blobs"))));
        assert_eq!(BlobLocation::from_url(Some("  "), data, vec![]), Ok(BlobLocation::Local(data.join("blobs"))));
        assert_eq!(
            BlobLocation::from_url(Some("s3://docs/tenant/a/"), data, vec![("AWS_REGION".into(), "eu".into())]),
            Ok(BlobLocation::S3 {
                bucket: "docs".into(),
                prefix: Some("tenant/a".into()),
                settings: vec![("AWS_REGION".into(), "eu".into())]
            })
        );
        assert_eq!(
            BlobLocation::from_url(Some("s3://docs"), data, vec![]),
            Ok(BlobLocation::S3 { bucket: "docs".into(), prefix: None, settings: vec![] })
        );
        assert_eq!(
            BlobLocation::from_url(Some("file:///var/blobs"), data, vec![]),
            Ok(BlobLocation::Local("/var/blobs".into()))
        );
        assert!(matches!(BlobLocation::from_url(Some("s3://"), data, vec![]), Err(LocationError::NoBucket(_))));
        assert!(matches!(
            BlobLocation::from_url(Some("gs://bucket"), data, vec![]),
            Err(LocationError::Unsupported(_))
        ));
    }

    #[test]
    fn plain_http_only_to_this_machine() {
        assert!(is_loopback_http("http://127.0.0.1:9000"));
        assert!(is_loopback_http("http://localhost:5000/"));
        assert!(is_loopback_http("http://[::1]:9000"));
        assert!(!is_loopback_http("https://127.0.0.1:9000"));
        assert!(!is_loopback_http("http://s3.example.com"));
        assert!(!is_loopback_http("http://10.0.0.1:9000"));
    }
}
