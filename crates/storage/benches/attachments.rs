//! Attachment indexing throughput and search latency (docs/benchmarks.md, "Attachments").
//!
//! The requirement (issue 6): index at least 20 MB of extracted text per second; search p95
//! under 20 ms for a session with 100 attachments (about 10 MB of text), on SQLite and on
//! PostgreSQL.
//!
//! - Text: the English Markdown and text files of the test corpus (`tests/fixtures/corpus`:
//!   the pandoc manual, the CommonMark spec, pandoc's release announcements, …), cut into
//!   blocks at blank lines (`#` lines are headings). Attachment `i` takes about 100 KB of
//!   blocks starting at a different place in that text.
//! - Indexing: for each attachment, the time of what processing does after extraction:
//!   `split_passages` (domain) and `AttachmentStore::replace_passages` (one transaction:
//!   delete the old passages, insert the new ones into the full-text index, mark it ready,
//!   complete its processing job: the commit the client waits for),
//!   through the real `Db` (pool checkout and, on SQLite, the blocking-pool hop included).
//!   Also one 10 MB attachment in one transaction.
//! - Search: `AttachmentSearch::search_passages(limit 10)` timed one by one: the 20 questions
//!   of the relevance test, then queries of 1 to 4 words drawn (seeded, so every run asks the
//!   same) from the vocabulary of the text. A second owner's session of 20 attachments sits
//!   in the same index, as it would in a shared database.
//! - Upgrade (SQLite): everything stored is taken back to migration 000009 and forward again,
//!   as the first start after an upgrade to 000011 does it: the passages renumbered into
//!   their sessions' ranges and all of them indexed again.
//!
//! CPU time (this process, plus the PostgreSQL server's processes read from `/proc`) is
//! reported beside wall time: the machine is shared.
//!
//! Run: `cargo bench -p redline-storage --bench attachments`. SQLite runs on a fresh file in
//! a temporary folder; PostgreSQL on a fresh database `redline_bench_<uuid>` created through
//! `postgres://postgres@127.0.0.1:5432/test` (override with `REDLINE_TEST_PG_URL`) and dropped
//! afterwards, skipped with a message when unreachable. `REDLINE_BENCH_ONLY=sqlite` (or
//! `postgres`) runs one half. Under `cargo test --benches` (no
//! `--bench` argument) it runs a small version as a check.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use redline_domain::attachment::{split_passages, PassageRules, TextBlock};
use redline_domain::job::{JobStatus, JobType};
use redline_domain::{Owner, SessionId, UserId};
use redline_ports::attachments::{AttachmentRecord, AttachmentSource, AttachmentState, ExtractedText, Replaced};
use redline_ports::jobs::{JobRecord, JobUpdate};
use redline_ports::{AttachmentSearch, AttachmentStore, JobStore, SessionStore};
use redline_storage::{Db, DbConfig};
use tokio::runtime::Runtime;
use uuid::Uuid;

const DEFAULT_PG_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/test";
const PG_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Bytes of text per attachment.
const ATTACHMENT_BYTES: usize = 100_000;
/// Attachments processed at once in the burst (the job workers' default on a small machine).
const WORKERS: usize = 4;

/// The relevance test's questions (crates/app/tests/api/relevance.rs).
const QUESTIONS: [&str; 20] = [
    "What does pandoc exit code 47 mean?",
    "How should I use pandoc if my local character encoding is not UTF-8?",
    "Which engine does pandoc use by default to create a PDF?",
    "Why does Markdown need a specification?",
    "How much indentation does an indented code block need?",
    "Which characters make a thematic break line?",
    "When was Pandoc 0.3 announced?",
    "Who redesigned the pandoc build system and wrappers?",
    "Who created the Mozilla community and when?",
    "What kind of software is Bugzilla?",
    "When did Eich step down as CEO?",
    "Who is the Hermitian matrix named after?",
    "Can every Hermitian matrix be diagonalized by a unitary matrix?",
    "How does remoteStorage handle access control?",
    "When does the remoteStorage internet draft expire?",
    "How much faster does TraceMonkey make traceable programs?",
    "Which type represents JavaScript values in SpiderMonkey?",
    "Why are fat bytecodes a problem for the trace recorder?",
    "Which health plan were the CHDS participants members of?",
    "Which strategy is proposed for multi-microrobot control and assembly?",
];

/// The sizes of one run.
struct Plan {
    attachments: usize,
    other_attachments: usize,
    random_queries: usize,
    big_bytes: usize,
}

fn plan() -> Plan {
    if std::env::args().any(|a| a == "--bench") {
        Plan { attachments: 100, other_attachments: 20, random_queries: 480, big_bytes: 10_000_000 }
    } else {
        Plan { attachments: 3, other_attachments: 1, random_queries: 20, big_bytes: 200_000 }
    }
}

fn now_ms() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

/// xorshift64*: a fixed sequence, so every run asks the same queries.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The corpus text as blocks.
fn corpus_blocks() -> Vec<TextBlock> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/corpus");
    let mut blocks = Vec::new();
    for file in [
        "md/pandoc-MANUAL.md",
        "md/commonmark-spec.md",
        "txt/pandoc-release-announcements.txt",
        "md/pandoc-testsuite.md",
        "md/pandoc-markdown-reader-more.md",
        "txt/pandoc-writer.plain.txt",
        "md/markdown-it-demo-sample.md",
    ] {
        let path = dir.join(file);
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let text = String::from_utf8_lossy(&bytes);
        for block in text.split("\n\n") {
            let block = block.trim();
            if !block.is_empty() {
                let heading = block.starts_with('#');
                blocks.push(TextBlock::new(block.split_whitespace().collect::<Vec<_>>().join(" "), heading));
            }
        }
    }
    blocks
}

/// About `bytes` of blocks, starting at block `start` (wrapping around).
fn text_of(blocks: &[TextBlock], start: usize, bytes: usize) -> Vec<TextBlock> {
    let mut out = Vec::new();
    let mut size = 0;
    let mut i = start % blocks.len();
    while size < bytes {
        size += blocks[i].text.len() + 1;
        out.push(blocks[i].clone());
        i = (i + 1) % blocks.len();
    }
    out
}

fn record(id: &str, owner: Owner, session: &SessionId, bytes: usize) -> AttachmentRecord {
    let now = now_ms();
    AttachmentRecord {
        attachment_id: id.to_owned(),
        owner,
        session_id: session.clone(),
        filename: format!("{id}.md"),
        content_type: "text/markdown".to_owned(),
        size_bytes: i64::try_from(bytes).unwrap_or(i64::MAX),
        state: AttachmentState::Processing,
        source: AttachmentSource::Upload,
        job_id: None,
        error: None,
        preview: String::new(),
        text_chars: 0,
        passage_count: 0,
        created_at: now,
        updated_at: now,
        upload_expires_at: None,
        progress: 0,
    }
}

/// The processing job of attachment `id`, as a worker holds it (claimed, in progress).
fn job(id: &str, owner: Owner, session: &SessionId) -> JobRecord {
    let now = now_ms();
    JobRecord {
        job_id: format!("job_{id}"),
        owner,
        session_id: session.clone(),
        job_type: JobType::AttachmentProcessing,
        status: JobStatus::InProgress,
        progress: 70,
        attempts: 1,
        request: serde_json::json!({"attachment_id": id, "blob_key": format!("blob_{id}")}),
        result: None,
        error: None,
        metadata: serde_json::json!({"filename": format!("{id}.md"), "attachment_id": id}),
        state: serde_json::json!({}),
        created_at: now,
        updated_at: now,
        finished_at: None,
        lease_until: Some(now + 60_000),
    }
}

/// Records attachment `id` of `session` with its processing job, in progress.
async fn insert(db: &Db, id: &str, owner: Owner, session: &SessionId, bytes: usize) {
    db.insert_attachment(&record(id, owner, session, bytes), Some(&job(id, owner, session))).await.expect("insert");
}

/// Indexes one attachment as processing does after extraction, up to its job's completion;
/// answers the time it took.
async fn index(db: &Db, id: &str, blocks: &[TextBlock]) -> (Duration, usize, usize) {
    let started = Instant::now();
    let passages = split_passages(blocks, PassageRules::default());
    let chars: usize = blocks.iter().map(|b| b.text.chars().count()).sum();
    let text = ExtractedText { passages, preview: String::new(), text_chars: i64::try_from(chars).unwrap_or(0) };
    let done = JobUpdate {
        status: Some(JobStatus::Completed),
        progress: Some(100),
        result: Some(serde_json::json!({"attachment_id": id, "passages": text.passages.len()})),
        lease_until: Some(None),
        ..Default::default()
    };
    let job_id = format!("job_{id}");
    let replaced = db.replace_passages(id, &text, Some((&job_id, &done)), now_ms()).await.expect("replace passages");
    assert_eq!(replaced, Replaced::Ready);
    let bytes = blocks.iter().map(|b| b.text.len() + 1).sum();
    (started.elapsed(), bytes, text.passages.len())
}

/// CPU time used so far by this process and by the PostgreSQL server's processes, from
/// `/proc` (Linux; zero elsewhere). The machine is shared, so wall time alone understates
/// what one core does; CPU time is reported beside it.
#[derive(Clone, Copy, Default)]
struct Cpu {
    own: Duration,
    postgres: Duration,
}

/// utime + stime of `/proc/<pid>/stat`, in clock ticks (100 per second on Linux).
fn ticks(stat: &str) -> Option<u64> {
    let after = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

fn cpu_now() -> Cpu {
    let tick = |t: u64| Duration::from_millis(t * 10);
    let own = std::fs::read_to_string("/proc/self/stat").ok().and_then(|s| ticks(&s)).map_or(Duration::ZERO, tick);
    let mut postgres = 0;
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
            if comm.trim() == "postgres" {
                postgres +=
                    std::fs::read_to_string(entry.path().join("stat")).ok().and_then(|s| ticks(&s)).unwrap_or(0);
            }
        }
    }
    Cpu { own, postgres: tick(postgres) }
}

/// CPU time since `start`: (this process, the PostgreSQL server).
fn cpu_split(start: Cpu) -> (Duration, Duration) {
    let now = cpu_now();
    (now.own.saturating_sub(start.own), now.postgres.saturating_sub(start.postgres))
}

/// `CPU 1.2s: 8.3 MB/s`, with the part of each side on PostgreSQL.
fn cpu_report(bytes: usize, start: Cpu) -> String {
    let (own, postgres) = cpu_split(start);
    let all = own + postgres;
    let mut out = format!("CPU {all:.2?}: {:.1} MB/s", mb_per_s(bytes, all));
    if !postgres.is_zero() {
        out.push_str(&format!("; this process {own:.2?}, PostgreSQL {postgres:.2?}"));
    }
    out
}

fn mb_per_s(bytes: usize, took: Duration) -> f64 {
    bytes as f64 / 1_000_000.0 / took.as_secs_f64()
}

fn percentile(sorted: &[Duration], q: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Runs the phases on `db`; answers how many bytes of text it leaves stored.
async fn run_backend(db: &Db, label: &str) -> usize {
    let plan = plan();
    let blocks = corpus_blocks();
    let corpus_bytes: usize = blocks.iter().map(|b| b.text.len() + 1).sum();
    eprintln!("[{label}] corpus: {} blocks, {:.2} MB of text", blocks.len(), corpus_bytes as f64 / 1e6);

    // A second owner's session shares the index.
    let other = Owner::User(UserId::new());
    let other_session = SessionId::parse("bench-other").expect("session id");
    db.ensure_session(other, &other_session, now_ms()).await.expect("session");
    let mut stored = 0;
    for i in 0..plan.other_attachments {
        let id = format!("att_other_{i:03}");
        insert(db, &id, other, &other_session, ATTACHMENT_BYTES).await;
        stored += index(db, &id, &text_of(&blocks, i * 7919 + 13, ATTACHMENT_BYTES)).await.1;
    }

    // The measured session: `plan.attachments` attachments of ~100 KB, one transaction each.
    let owner = Owner::User(UserId::new());
    let session = SessionId::parse("bench").expect("session id");
    db.ensure_session(owner, &session, now_ms()).await.expect("session");
    let texts: Vec<Vec<TextBlock>> =
        (0..plan.attachments).map(|i| text_of(&blocks, i * 997, ATTACHMENT_BYTES)).collect();
    for i in 0..plan.attachments {
        insert(db, &format!("att_bench_{i:03}"), owner, &session, ATTACHMENT_BYTES).await;
    }
    let started = Instant::now();
    for text in &texts {
        std::hint::black_box(split_passages(text, PassageRules::default()));
    }
    let split_only = started.elapsed();
    // CPU is read around the whole loop: reading it (a walk of `/proc`) costs CPU too.
    let (mut total, mut bytes, mut passages) = (Duration::ZERO, 0usize, 0usize);
    let cpu_start = cpu_now();
    for (i, text) in texts.iter().enumerate() {
        let (took, b, n) = index(db, &format!("att_bench_{i:03}"), text).await;
        total += took;
        bytes += b;
        passages += n;
    }
    let cpu = cpu_report(bytes, cpu_start);
    eprintln!(
        "[{label}] indexed {} attachments, {:.2} MB, {passages} passages in {:.2?}: {:.1} MB/s \
         ({cpu}; splitting alone {:.2?}, {:.0} MB/s)",
        plan.attachments,
        bytes as f64 / 1e6,
        total,
        mb_per_s(bytes, total),
        split_only,
        mb_per_s(bytes, split_only),
    );

    // The same amount again in another session, processed the way the job workers do it: four
    // attachments at a time (`REDLINE_WORKERS` defaults to max(cores, 4)).
    let burst = SessionId::parse("bench-burst").expect("session id");
    db.ensure_session(owner, &burst, now_ms()).await.expect("session");
    for i in 0..plan.attachments {
        let id = format!("att_burst_{i:03}");
        insert(db, &id, owner, &burst, ATTACHMENT_BYTES).await;
    }
    let texts: Vec<Vec<TextBlock>> =
        (0..plan.attachments).map(|i| text_of(&blocks, i * 991, ATTACHMENT_BYTES)).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let cpu_start = cpu_now();
    let started = Instant::now();
    let burst_bytes: usize = futures_util::future::join_all((0..WORKERS).map(|_| async {
        let mut bytes = 0;
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if i >= plan.attachments {
                return bytes;
            }
            let id = format!("att_burst_{i:03}");
            bytes += index(db, &id, &texts[i]).await.1;
        }
    }))
    .await
    .into_iter()
    .sum();
    let took = started.elapsed();
    eprintln!(
        "[{label}] {} attachments, {WORKERS} at a time: {:.2} MB in {took:.2?}: {:.1} MB/s ({})",
        plan.attachments,
        burst_bytes as f64 / 1e6,
        mb_per_s(burst_bytes, took),
        cpu_report(burst_bytes, cpu_start),
    );

    // One large attachment in one transaction (a 10 MB text file).
    let big_session = SessionId::parse("bench-big").expect("session id");
    db.ensure_session(owner, &big_session, now_ms()).await.expect("session");
    insert(db, "att_big", owner, &big_session, plan.big_bytes).await;
    let big = text_of(&blocks, 0, plan.big_bytes);
    let cpu_start = cpu_now();
    let (took, b, n) = index(db, "att_big", &big).await;
    eprintln!(
        "[{label}] one attachment of {:.2} MB ({n} passages) in {took:.2?}: {:.1} MB/s ({})",
        b as f64 / 1e6,
        mb_per_s(b, took),
        cpu_report(b, cpu_start),
    );
    // Re-indexing it (a retried job, in progress again) replaces, in the same transaction.
    let retry = JobUpdate { status: Some(JobStatus::InProgress), ..Default::default() };
    db.update_job("job_att_big", &[JobStatus::Completed], &retry, now_ms()).await.expect("job in progress again");
    let (took, b, _) = index(db, "att_big", &big).await;
    eprintln!("[{label}] the same again (delete then insert): {took:.2?}, {:.1} MB/s", mb_per_s(b, took));
    stored += bytes + burst_bytes + b;

    // Search latency in the 100-attachment session.
    let mut vocabulary: Vec<String> = blocks
        .iter()
        .flat_map(|b| b.text.split(|c: char| !c.is_alphanumeric()).map(str::to_lowercase).collect::<Vec<_>>())
        .filter(|w| w.len() > 3)
        .collect();
    vocabulary.sort();
    vocabulary.dedup();
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let mut queries: Vec<String> = QUESTIONS.iter().map(|q| (*q).to_owned()).collect();
    for _ in 0..plan.random_queries {
        let n = 1 + rng.below(4);
        queries.push((0..n).map(|_| vocabulary[rng.below(vocabulary.len())].clone()).collect::<Vec<_>>().join(" "));
    }
    for q in queries.iter().take(20) {
        std::hint::black_box(db.search_passages(owner, &session, q, 10).await.expect("warm-up search"));
    }
    let mut times = Vec::with_capacity(queries.len());
    let mut hits = 0usize;
    for q in &queries {
        let started = Instant::now();
        let found = db.search_passages(owner, &session, q, 10).await.expect("search");
        times.push(started.elapsed());
        hits += found.len();
    }
    let mean = times.iter().sum::<Duration>() / u32::try_from(times.len()).unwrap_or(1);
    times.sort_unstable();
    eprintln!(
        "[{label}] search in the {}-attachment session: {} queries, {:.1} passages each: \
         p50 {:.2?}  p95 {:.2?}  p99 {:.2?}  max {:.2?}  mean {:.2?}",
        plan.attachments,
        times.len(),
        hits as f64 / times.len() as f64,
        percentile(&times, 0.50),
        percentile(&times, 0.95),
        percentile(&times, 0.99),
        percentile(&times, 1.0),
        mean,
    );
    let questions: Vec<Duration> = {
        let mut q: Vec<Duration> = Vec::new();
        for question in QUESTIONS {
            let started = Instant::now();
            std::hint::black_box(db.search_passages(owner, &session, question, 10).await.expect("search"));
            q.push(started.elapsed());
        }
        q.sort_unstable();
        q
    };
    eprintln!(
        "[{label}] the 20 relevance questions alone: p50 {:.2?}  p95 {:.2?}  max {:.2?}",
        percentile(&questions, 0.5),
        percentile(&questions, 0.95),
        percentile(&questions, 1.0)
    );
    stored
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime")
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.0) {
            eprintln!("warning: cannot remove {}: {e}", self.0.display());
        }
    }
}

fn bench_sqlite(rt: &Runtime) {
    let dir = TempDir(std::env::temp_dir().join(format!("redline-bench-{}", Uuid::new_v4().simple())));
    std::fs::create_dir_all(&dir.0).expect("create the bench folder");
    let url = format!("sqlite://{}", dir.0.join("redline.sqlite3").display());
    let db = rt.block_on(Db::open(&DbConfig::new(url.clone()))).unwrap_or_else(|e| panic!("open {url}: {e}"));
    let stored = rt.block_on(run_backend(&db, "sqlite"));
    // The first start after an upgrade to migration 000011 renumbers the stored passages and
    // indexes them all again before it serves (docs/api.md, Attachments).
    rt.block_on(async {
        db.revert_migrations_after("20261123000009").await.expect("revert 000011");
        let cpu_start = cpu_now();
        let started = Instant::now();
        db.run_pending_migrations().await.expect("apply 000011 and index again");
        let took = started.elapsed();
        eprintln!(
            "[sqlite] upgrade to migration 000011: {:.2} MB of stored text indexed again in {took:.2?}: {:.1} MB/s ({})",
            stored as f64 / 1e6,
            mb_per_s(stored, took),
            cpu_report(stored, cpu_start),
        );
    });
    drop(db);
    drop(dir);
}

/// `admin` with its database name replaced by `name`.
fn database_url(admin: &str, name: &str) -> String {
    let (base, query) = admin.split_once('?').map_or((admin, None), |(b, q)| (b, Some(q)));
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let authority_end = base[authority_start..].find('/').map_or(base.len(), |i| authority_start + i);
    let mut url = format!("{}/{name}", &base[..authority_end]);
    if let Some(query) = query {
        url.push('?');
        url.push_str(query);
    }
    url
}

async fn connect_admin(admin: &str) -> Result<AsyncPgConnection, String> {
    match tokio::time::timeout(PG_CONNECT_TIMEOUT, AsyncPgConnection::establish(admin)).await {
        Ok(Ok(conn)) => Ok(conn),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no answer within {PG_CONNECT_TIMEOUT:?}")),
    }
}

/// Drops the bench database when it goes out of scope, even when the bench panics.
struct PgDatabase<'rt> {
    rt: &'rt Runtime,
    admin: String,
    name: String,
}

impl Drop for PgDatabase<'_> {
    fn drop(&mut self) {
        let sql = format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name);
        let outcome = self.rt.block_on(async {
            let mut conn = connect_admin(&self.admin).await?;
            conn.batch_execute(&sql).await.map_err(|e| e.to_string())
        });
        if let Err(e) = outcome {
            eprintln!("warning: cannot drop bench database {}: {e}", self.name);
        }
    }
}

fn bench_postgres(rt: &Runtime) {
    let admin = std::env::var("REDLINE_TEST_PG_URL").unwrap_or_else(|_| DEFAULT_PG_ADMIN_URL.to_owned());
    let name = format!("redline_bench_{}", Uuid::new_v4().simple());
    let created = rt.block_on(async {
        let mut conn = connect_admin(&admin).await?;
        conn.batch_execute(&format!("CREATE DATABASE \"{name}\"")).await.map_err(|e| e.to_string())
    });
    if let Err(e) = created {
        eprintln!("PostgreSQL unreachable at {admin} ({e}): skipping the PostgreSQL half");
        return;
    }
    let guard = PgDatabase { rt, admin: admin.clone(), name: name.clone() };
    let url = database_url(&admin, &name);
    let db = rt.block_on(Db::open(&DbConfig::new(url.clone()))).unwrap_or_else(|e| panic!("open {url}: {e}"));
    rt.block_on(run_backend(&db, "postgres"));
    // The pool's connections must be gone before the database is dropped.
    drop(db);
    drop(guard);
}

fn main() {
    let rt = runtime();
    // `REDLINE_BENCH_ONLY=sqlite` or `=postgres` runs one half (for a profiler).
    let only = std::env::var("REDLINE_BENCH_ONLY").unwrap_or_default();
    if only != "postgres" {
        bench_sqlite(&rt);
    }
    if only != "sqlite" {
        bench_postgres(&rt);
    }
}
