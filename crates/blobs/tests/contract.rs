//! The `BlobStore` contract, run against the local folder store and against a real
//! S3-compatible server (moto, started on loopback by the test).
//!
//! moto comes from PyPI (`pip install 'moto[server]'`, which `.ci/run` and `scripts/test.sh` do
//! into `.venv`). The S3 half looks for `moto_server` in `$REDLINE_MOTO_SERVER`, then in the
//! workspace's `.venv/bin`, then on `PATH`. When it is missing the S3 half is skipped with a
//! printed reason, unless `CI=true`, where that is a failure.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::stream::{self, StreamExt};
use redline_blobs::{BlobLocation, ObjectBlobStore, PART_BYTES};
use redline_ports::blobs::{BlobError, BlobStore};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn chunks(data: Vec<Bytes>) -> futures_util::stream::BoxStream<'static, Result<Bytes, std::io::Error>> {
    stream::iter(data.into_iter().map(Ok)).boxed()
}

/// `n` bytes that are not all alike, so that a misplaced part shows.
fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

fn split(data: &[u8], chunk: usize) -> Vec<Bytes> {
    data.chunks(chunk).map(Bytes::copy_from_slice).collect()
}

async fn assert_absent(store: &dyn BlobStore, key: &str) {
    assert!(matches!(store.get(key).await, Err(BlobError::NotFound)), "{key} should not exist");
    assert!(matches!(store.head(key).await, Err(BlobError::NotFound)), "{key} should have no metadata");
}

/// Every sentence of the port's contract.
async fn contract(store: &dyn BlobStore) {
    // put / get / head / replace.
    assert_absent(store, "images/missing").await;
    store.put("images/a", Bytes::from_static(b"first")).await.unwrap();
    assert_eq!(store.get("images/a").await.unwrap(), Bytes::from_static(b"first"));
    assert_eq!(store.head("images/a").await.unwrap().size, 5);
    store.put("images/a", Bytes::from_static(b"second, longer")).await.unwrap();
    assert_eq!(store.get("images/a").await.unwrap(), Bytes::from_static(b"second, longer"));
    assert_eq!(store.head("images/a").await.unwrap().size, 14);
    store.put("images/empty", Bytes::new()).await.unwrap();
    assert_eq!(store.get("images/empty").await.unwrap().len(), 0);

    // delete, and deleting what is not there.
    store.delete("images/a").await.unwrap();
    assert_absent(store, "images/a").await;
    store.delete("images/a").await.unwrap();
    store.delete("never/was").await.unwrap();

    // A small stream: one atomic put.
    let small = pattern(100_000, 1);
    let n = store.put_stream("attachments/small", chunks(split(&small, 7_000)), 1_000_000).await.unwrap();
    assert_eq!(n, small.len() as u64);
    assert_eq!(store.get("attachments/small").await.unwrap().as_ref(), small.as_slice());

    // Exactly at the cap is allowed; one byte over is not, and leaves nothing.
    let n = store.put_stream("attachments/at-cap", chunks(split(&small, 10_000)), small.len() as u64).await.unwrap();
    assert_eq!(n, small.len() as u64);
    let over = store.put_stream("attachments/over", chunks(split(&small, 10_000)), small.len() as u64 - 1).await;
    assert!(matches!(over, Err(BlobError::TooLarge { limit }) if limit == small.len() as u64 - 1), "{over:?}");
    assert_absent(store, "attachments/over").await;

    // A large stream: a multipart upload, parts put together in order.
    let large = pattern(2 * PART_BYTES + 123_457, 2);
    let n = store.put_stream("attachments/large", chunks(split(&large, 1 << 20)), 64 << 20).await.unwrap();
    assert_eq!(n, large.len() as u64);
    let back = store.get("attachments/large").await.unwrap();
    assert_eq!(back.len(), large.len());
    assert!(back.as_ref() == large.as_slice(), "the parts come back in order");
    assert_eq!(store.head("attachments/large").await.unwrap().size, large.len() as u64);

    // Over the cap after parts were uploaded: the upload is aborted, nothing is stored.
    let over = store.put_stream("attachments/large-over", chunks(split(&large, 1 << 20)), PART_BYTES as u64 + 10).await;
    assert!(matches!(over, Err(BlobError::TooLarge { .. })), "{over:?}");
    assert_absent(store, "attachments/large-over").await;

    // A failing source: an error, nothing stored (before and after a part went up).
    for (key, before_failure) in
        [("attachments/broken-small", 3_000usize), ("attachments/broken-large", PART_BYTES + 5)]
    {
        let data = pattern(before_failure, 3);
        let failing = stream::iter(split(&data, 1 << 20).into_iter().map(Ok))
            .chain(stream::once(async { Err(std::io::Error::other("client went away")) }))
            .boxed();
        let r = store.put_stream(key, failing, 64 << 20).await;
        assert!(matches!(r, Err(BlobError::Unavailable(_))), "{key}: {r:?}");
        assert_absent(store, key).await;
    }

    // A stream replaces what was there.
    store.put_stream("attachments/small", chunks(vec![Bytes::from_static(b"new")]), 10).await.unwrap();
    assert_eq!(store.get("attachments/small").await.unwrap(), Bytes::from_static(b"new"));

    // delete_prefix removes that folder only.
    for key in ["exports/s1/a", "exports/s1/b", "exports/s1/deep/c", "exports/s10/a", "exports/s2/a"] {
        store.put(key, Bytes::from_static(b"x")).await.unwrap();
    }
    store.delete_prefix("exports/s1/").await.unwrap();
    for gone in ["exports/s1/a", "exports/s1/b", "exports/s1/deep/c"] {
        assert_absent(store, gone).await;
    }
    for kept in ["exports/s10/a", "exports/s2/a", "attachments/large"] {
        assert!(store.get(kept).await.is_ok(), "{kept} is not under exports/s1/");
    }
    store.delete_prefix("exports/none/").await.unwrap();
}

/// Files under `dir`, relative, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
            let path = entry.path();
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                out.push(path.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_folder_store() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("blobs");
    let store = ObjectBlobStore::open(&BlobLocation::Local(root.clone())).unwrap();
    assert!(root.is_dir(), "the folder is created");
    contract(&store).await;
    // Aborted and failed uploads leave no staging files behind.
    assert_eq!(
        files_under(&root),
        [
            "attachments/at-cap",
            "attachments/large",
            "attachments/small",
            "exports/s10/a",
            "exports/s2/a",
            "images/empty",
        ]
    );
}

#[test]
fn keys_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let store = ObjectBlobStore::open(&BlobLocation::Local(dir.path().to_path_buf())).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    for bad in ["", "/abs", "a/../b", "a//b"] {
        let r = rt.block_on(store.put(bad, Bytes::from_static(b"x")));
        assert!(matches!(r, Err(BlobError::Unavailable(_))), "{bad:?}: {r:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// S3 through moto.

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

fn moto_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("REDLINE_MOTO_SERVER") {
        return Some(PathBuf::from(p));
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/moto_server");
    if venv.is_file() {
        return Some(venv);
    }
    std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|p| p.join("moto_server")).find(|p| p.is_file()))
}

/// A moto server on a free loopback port, stopped (by its pid) on drop.
struct Moto {
    child: Child,
    endpoint: String,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_moto(binary: &Path) -> Moto {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(binary)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
    let mut moto = Moto { child, endpoint: format!("http://127.0.0.1:{port}") };
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = moto.child.try_wait() {
            panic!("moto_server exited at start: {status}");
        }
        assert!(Instant::now() < deadline, "moto_server did not listen on {port} within 60 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    moto
}

/// `PUT /<bucket>` (moto does not check signatures).
async fn create_bucket(endpoint: &str, bucket: &str) {
    let authority = endpoint.trim_start_matches("http://");
    let mut conn = tokio::net::TcpStream::connect(authority).await.unwrap();
    let request =
        format!("PUT /{bucket} HTTP/1.1\r\nHost: {authority}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    conn.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "create bucket: {answer}");
}

fn s3_location(endpoint: &str, url: &str) -> BlobLocation {
    let settings = [
        ("AWS_ENDPOINT_URL", endpoint),
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_PROFILE", "ignored-by-us"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    BlobLocation::from_url(Some(url), Path::new("/unused"), settings).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_compatible_store() {
    let Some(binary) = moto_binary() else {
        assert!(!in_ci(), "CI=true: moto_server is required for the S3 blob tests (pip install 'moto[server]')");
        eprintln!("SKIPPED s3_compatible_store: moto_server not found (pip install 'moto[server]' into .venv)");
        return;
    };
    let moto = start_moto(&binary);
    create_bucket(&moto.endpoint, "redline-test").await;

    let store = ObjectBlobStore::open(&s3_location(&moto.endpoint, "s3://redline-test")).unwrap();
    contract(&store).await;

    // A prefix keeps two stores apart in one bucket.
    let tenant = ObjectBlobStore::open(&s3_location(&moto.endpoint, "s3://redline-test/tenant-a")).unwrap();
    tenant.put("images/a", Bytes::from_static(b"tenant")).await.unwrap();
    assert_eq!(store.get("tenant-a/images/a").await.unwrap(), Bytes::from_static(b"tenant"));
    assert!(matches!(tenant.get("attachments/large").await, Err(BlobError::NotFound)));
    tenant.delete_prefix("images/").await.unwrap();
    assert!(matches!(store.get("tenant-a/images/a").await, Err(BlobError::NotFound)));

    // A bucket that does not exist is an error, not a panic or a hang.
    let missing = ObjectBlobStore::open(&s3_location(&moto.endpoint, "s3://no-such-bucket")).unwrap();
    let r = missing.put("images/x", Bytes::from_static(b"x")).await;
    assert!(r.is_err(), "{r:?}");
}

#[test]
fn plain_http_to_another_host_is_refused() {
    let location = s3_location("http://s3.example.com:9000", "s3://bucket");
    let store = ObjectBlobStore::open(&location).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let r = rt.block_on(store.put("images/x", Bytes::from_static(b"x")));
    assert!(matches!(r, Err(BlobError::Unavailable(_))), "{r:?}");
}
