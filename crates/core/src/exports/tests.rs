//! The export use case against in-memory fakes of its ports.

use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use redline_domain::UserId;
use redline_ports::blobs::BlobMeta;
use redline_ports::documents::MockDocumentStore;
use redline_ports::files::{ImageRecord, SessionFiles};
use redline_ports::identity::MockIdentityStore;
use redline_ports::records::{PlanSettings, UserKind, UserRecord};

use super::fake_jobs::{FakeBus, FakeJobs};
use super::*;
use crate::worker::JobRunner;
use redline_domain::job::{JobStatus, JobType};
use redline_ports::documents::VersionRecord;
use redline_ports::jobs::JobRecord;

const T0: Millis = 1_800_000_000_000;

struct FakeClock(AtomicI64);

impl Clock for FakeClock {
    fn now_ms(&self) -> Millis {
        self.0.load(Ordering::SeqCst)
    }
}

#[derive(Default)]
struct FakeBlobs(Mutex<HashMap<String, Bytes>>);

#[async_trait::async_trait]
impl BlobStore for FakeBlobs {
    async fn put(&self, key: &str, bytes: Bytes) -> Result<(), BlobError> {
        self.0.lock().unwrap().insert(key.to_owned(), bytes);
        Ok(())
    }

    async fn put_stream(
        &self,
        _key: &str,
        _chunks: futures_util::stream::BoxStream<'_, Result<Bytes, std::io::Error>>,
        _limit: u64,
    ) -> Result<u64, BlobError> {
        Err(BlobError::Unavailable("not used by exports".into()))
    }

    async fn get(&self, key: &str) -> Result<Bytes, BlobError> {
        self.0.lock().unwrap().get(key).cloned().ok_or(BlobError::NotFound)
    }

    async fn head(&self, key: &str) -> Result<BlobMeta, BlobError> {
        let size = self.get(key).await?.len() as u64;
        Ok(BlobMeta { size })
    }

    async fn delete(&self, key: &str) -> Result<(), BlobError> {
        self.0.lock().unwrap().remove(key);
        Ok(())
    }

    async fn delete_prefix(&self, prefix: &str) -> Result<(), BlobError> {
        self.0.lock().unwrap().retain(|k, _| !k.starts_with(prefix));
        Ok(())
    }
}

#[derive(Default)]
struct FakeFiles {
    images: Mutex<Vec<ImageRecord>>,
    exports: Mutex<Vec<ExportFileRecord>>,
}

#[async_trait::async_trait]
impl FileIndex for FakeFiles {
    async fn insert_images(&self, images: &[ImageRecord]) -> Result<(), StoreError> {
        self.images.lock().unwrap().extend_from_slice(images);
        Ok(())
    }

    async fn image(&self, image_id: &str) -> Result<Option<ImageRecord>, StoreError> {
        Ok(self.images.lock().unwrap().iter().find(|i| i.image_id == image_id).cloned())
    }

    async fn insert_export(&self, export: &ExportFileRecord) -> Result<(), StoreError> {
        self.exports.lock().unwrap().push(export.clone());
        Ok(())
    }

    async fn export_file(&self, export_id: &str) -> Result<Option<ExportFileRecord>, StoreError> {
        Ok(self.exports.lock().unwrap().iter().find(|e| e.export_id == export_id).cloned())
    }

    async fn session_files(&self, _owner: Owner, _session: &SessionId) -> Result<SessionFiles, StoreError> {
        Ok(SessionFiles::default())
    }

    async fn take_expired_exports(&self, now: Millis) -> Result<Vec<String>, StoreError> {
        let mut exports = self.exports.lock().unwrap();
        let expired = exports.iter().filter(|e| e.expires_at < now).map(|e| e.export_id.clone()).collect();
        exports.retain(|e| e.expires_at >= now);
        Ok(expired)
    }
}

/// The mails sent; while `down`, the transport is unavailable.
#[derive(Default)]
struct FakeMailer(Mutex<Vec<OutgoingMail>>, std::sync::atomic::AtomicBool);

#[async_trait::async_trait]
impl Mailer for FakeMailer {
    async fn send(&self, mail: &OutgoingMail) -> Result<(), MailError> {
        if self.1.load(Ordering::SeqCst) {
            return Err(MailError::Unavailable("the fake transport is down".into()));
        }
        self.0.lock().unwrap().push(mail.clone());
        Ok(())
    }
}

/// Writes `<format>:<html>` followed by the bytes of every image the HTML names.
struct FakeExporter;

/// Renders of a "slow" document under way, and the most at once.
static SLOW_RENDERS: AtomicUsize = AtomicUsize::new(0);
static MOST_SLOW_RENDERS: AtomicUsize = AtomicUsize::new(0);

impl DocumentExporter for FakeExporter {
    /// `tracked:` and each part as `=html` or `-old+new`.
    fn export_tracked(
        &self,
        document: &redline_ports::TrackedDocument,
        _title: &str,
        _images: &dyn ImageSource,
    ) -> Result<Vec<u8>, ExportError> {
        let mut out = format!("tracked by {}:", document.author);
        for part in &document.parts {
            match part {
                redline_ports::TrackedPart::Same(html) => out.push_str(&format!("={html}")),
                redline_ports::TrackedPart::Changed(c) => out.push_str(&format!("-{}+{}", c.old, c.new)),
            }
        }
        Ok(out.into_bytes())
    }

    fn export(
        &self,
        html: &str,
        _title: &str,
        format: ExportFormat,
        images: &dyn ImageSource,
    ) -> Result<Vec<u8>, ExportError> {
        if html.contains("unrenderable") {
            return Err(ExportError::Render { format: format.as_str(), reason: "fake failure".into() });
        }
        if html.contains("slow") {
            let now = SLOW_RENDERS.fetch_add(1, Ordering::SeqCst) + 1;
            MOST_SLOW_RENDERS.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(40));
            SLOW_RENDERS.fetch_sub(1, Ordering::SeqCst);
        }
        let mut out = format!("{}:{html}", format.as_str()).into_bytes();
        for id in referenced_image_ids(html) {
            if let Some((_, bytes)) = images.image(&id) {
                out.extend_from_slice(&bytes);
            }
        }
        Ok(out)
    }
}

struct Fixture {
    exports: Arc<Exports>,
    /// Per session, its versions' HTML in order (`v_1`, `v_2`, ...); the last is current.
    docs: Arc<Mutex<HashMap<String, Vec<String>>>>,
    jobs: Arc<FakeJobs>,
    blobs: Arc<FakeBlobs>,
    files: Arc<FakeFiles>,
    mailer: Arc<FakeMailer>,
    clock: Arc<FakeClock>,
}

fn sid(s: &str) -> SessionId {
    SessionId::parse(s).unwrap()
}

fn record(owner: Owner, session: &str, versions: &[String]) -> Option<DocumentRecord> {
    Some(DocumentRecord {
        owner,
        session_id: sid(session),
        html: versions.last()?.clone(),
        version_id: Some(format!("v_{}", versions.len())),
        section_count: 1,
        title: None,
        created_at: T0,
        updated_at: T0,
    })
}

/// `docs` are the sessions that exist (for any owner), each with one version; `email` is the
/// users' address.
fn fixture(docs: Vec<(String, String)>, email: Option<&str>) -> Fixture {
    fixture_with(docs, email, MailRecipients::Any, |_| {})
}

/// [`fixture`] with a mail rule, and more expectations of the identity store (members).
fn fixture_with(
    docs: Vec<(String, String)>,
    email: Option<&str>,
    mail_to: MailRecipients,
    more: impl FnOnce(&mut MockIdentityStore),
) -> Fixture {
    let docs: Arc<Mutex<HashMap<String, Vec<String>>>> =
        Arc::new(Mutex::new(docs.into_iter().map(|(s, html)| (s, vec![html])).collect()));
    let mut store = MockDocumentStore::new();
    let current = docs.clone();
    store.expect_document().returning(move |owner, session| {
        Ok(current.lock().unwrap().get(session.as_str()).and_then(|v| record(owner, session.as_str(), v)))
    });
    let versions = docs.clone();
    store.expect_version().returning(move |_, session, version_id| {
        let n: usize = version_id.strip_prefix("v_").and_then(|n| n.parse().ok()).unwrap_or(0);
        let docs = versions.lock().unwrap();
        let html = docs.get(session.as_str()).and_then(|v| v.get(n.wrapping_sub(1)));
        Ok(html.map(|html| VersionRecord {
            version_id: version_id.to_owned(),
            html: html.clone(),
            section_count: 1,
            source: "save".into(),
            created_at: T0,
        }))
    });
    let mut identity = MockIdentityStore::new();
    let email = email.map(|e| Email::parse(e).unwrap());
    identity.expect_user_by_id().returning(move |id| {
        Ok(Some(UserRecord {
            id,
            kind: if email.is_some() { UserKind::Web } else { UserKind::Agent },
            email: email.clone(),
            password_hash: None,
            name: None,
            plan: PlanSettings { plan: redline_domain::Plan::Free, monthly_limit_override: None },
            created_at: T0,
        }))
    });
    let taken = AtomicUsize::new(0);
    identity.expect_take_throttle().returning(move |scopes, _| {
        assert_eq!(scopes.len(), 1);
        assert_eq!(scopes[0].1, MAIL_THROTTLE);
        // The policy's free mails, then a wait of a minute.
        Ok(if taken.fetch_add(1, Ordering::SeqCst) < MAIL_THROTTLE.free as usize { Ok(()) } else { Err(60_000) })
    });
    more(&mut identity);
    let blobs = Arc::new(FakeBlobs::default());
    let files = Arc::new(FakeFiles::default());
    let mailer = Arc::new(FakeMailer::default());
    let clock = Arc::new(FakeClock(AtomicI64::new(T0)));
    let jobs = Arc::new(FakeJobs::default());
    let config = ExportConfig {
        default_cap_bytes: 1_000,
        cap_overrides: [(ExportFormat::Docx, 40)].into_iter().collect(),
        link_ttl_ms: 60_000,
        public_base_url: "https://r.example/".into(),
        lease: Duration::from_secs(30),
        mail_to,
        // Proven addresses are tested over HTTP (crates/app/tests/api/exports.rs, accounts.rs).
        verified_only: false,
        revision_author: "Redline AI".to_owned(),
    };
    let exports = Arc::new(Exports::new(
        ExportPorts {
            documents: Arc::new(store),
            exporter: Arc::new(FakeExporter),
            blobs: blobs.clone(),
            files: files.clone(),
            identity: Arc::new(identity),
            mailer: mailer.clone(),
            clock: clock.clone(),
            jobs: jobs.clone(),
            bus: Arc::new(FakeBus::default()),
        },
        LinkSigner::new(b"test key".to_vec()),
        config,
    ));
    Fixture { exports, docs, jobs, blobs, files, mailer, clock }
}

impl Fixture {
    /// Claims the oldest pending job as a worker would.
    async fn claim(&self) -> Option<JobRecord> {
        self.jobs.claim_job(T0, T0 + 30_000).await.unwrap()
    }

    /// Runs every queued job, as the workers would.
    async fn run_queued(&self) {
        while let Some(job) = self.claim().await {
            self.exports.run(job).await;
        }
    }

    fn mails(&self) -> Vec<OutgoingMail> {
        self.mailer.0.lock().unwrap().clone()
    }
}

fn ann() -> Owner {
    Owner::User(UserId::new())
}

/// Runs the queued jobs and answers the first mail sent.
async fn wait_for_mail(f: &Fixture) -> OutgoingMail {
    f.run_queued().await;
    f.mails().first().cloned().expect("a mail was sent")
}

fn token_of(mail: &OutgoingMail) -> String {
    let at = mail.text.find(link::DOWNLOAD_PATH).expect("a download link in the text") + link::DOWNLOAD_PATH.len();
    mail.text[at..].split_whitespace().next().unwrap().to_owned()
}

#[test]
fn image_references_are_found_once_in_order() {
    let a = format!("img_{}", "a".repeat(32));
    let b = format!("img_{}", "b".repeat(32));
    let html = format!(
        "<img src=\"https://x/v1/documents/images/{b}\"><p>/v1/documents/images/{a}</p>\
         <img src=\"/v1/documents/images/{b}\"><img src=\"/v1/documents/images/img_short\"><img src=\"/v1/documents/images/\">"
    );
    assert_eq!(referenced_image_ids(&html), vec![b, a]);
    assert!(referenced_image_ids("<p>no images</p>").is_empty());
}

#[test]
fn caps_per_format() {
    let f = fixture(vec![], None);
    assert_eq!(f.exports.config().cap(ExportFormat::Docx), 40);
    assert_eq!(f.exports.config().cap(ExportFormat::Pdf), 1_000);
}

#[tokio::test]
async fn an_export_is_the_rendered_file_with_its_images() {
    let image_id = format!("img_{}", "c".repeat(32));
    let html = format!("<p>hello</p><img src=\"https://r.example/v1/documents/images/{image_id}\">");
    let f = fixture(vec![("s1".into(), html.clone())], None);
    let owner = ann();
    f.files.images.lock().unwrap().push(ImageRecord {
        image_id: image_id.clone(),
        owner,
        session_id: sid("s1"),
        content_type: "image/png".into(),
        size_bytes: 4,
        created_at: T0,
    });
    f.blobs.0.lock().unwrap().insert(image_key(&image_id), Bytes::from_static(b"PNG!"));

    let file = f.exports.export(owner, &sid("s1"), ExportFormat::Html).await.unwrap();
    assert_eq!(file.filename, "s1.html");
    assert_eq!(file.content_type, "text/html; charset=utf-8");
    assert_eq!(file.bytes, Bytes::from(format!("html:{html}PNG!")));

    let md = f.exports.export(owner, &sid("s1"), ExportFormat::Markdown).await.unwrap();
    assert_eq!(md.filename, "s1.md");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renders_run_one_per_core_and_the_rest_wait() {
    let f = fixture(vec![("s1".into(), "<p>slow</p>".into())], None);
    let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
    let tasks: Vec<_> = (0..cores * 3)
        .map(|_| {
            let exports = f.exports.clone();
            tokio::spawn(async move { exports.export(ann(), &sid("s1"), ExportFormat::Txt).await })
        })
        .collect();
    for t in tasks {
        assert!(t.await.unwrap().is_ok());
    }
    let most = MOST_SLOW_RENDERS.load(Ordering::SeqCst);
    assert!((1..=cores).contains(&most), "{most} renders at once on {cores} cores");
}

#[tokio::test]
async fn over_the_cap_is_too_large_with_the_sizes() {
    let f = fixture(vec![("s1".into(), "<p>a paragraph of some length, over the cap</p>".into())], None);
    let r = f.exports.export(ann(), &sid("s1"), ExportFormat::Docx).await;
    match r {
        Err(ExportFailure::TooLarge { format, size_bytes, max_bytes }) => {
            assert_eq!(format, ExportFormat::Docx);
            assert_eq!(max_bytes, 40);
            assert_eq!(size_bytes, "docx:<p>a paragraph of some length, over the cap</p>".len() as u64);
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    assert!(f.exports.export(ann(), &sid("s1"), ExportFormat::Txt).await.is_ok(), "the txt cap is the default");
}

#[tokio::test]
async fn unknown_sessions_and_render_failures() {
    let f = fixture(vec![("bad".into(), "<p>unrenderable</p>".into())], Some("ann@example.com"));
    assert!(matches!(f.exports.export(ann(), &sid("nope"), ExportFormat::Html).await, Err(ExportFailure::NotFound)));
    assert!(matches!(
        f.exports.request_email(ann(), &sid("nope"), ExportFormat::Html, None).await,
        Err(ExportFailure::NotFound)
    ));
    assert!(matches!(f.exports.export(ann(), &sid("bad"), ExportFormat::Pdf).await, Err(ExportFailure::Render(_))));

    // In the background, a failed render is told to the recipient; nothing is kept.
    f.exports.request_email(ann(), &sid("bad"), ExportFormat::Pdf, None).await.unwrap();
    let mail = wait_for_mail(&f).await;
    assert!(mail.subject.contains("failed"), "{mail:?}");
    assert!(f.blobs.0.lock().unwrap().is_empty());
    assert!(f.files.exports.lock().unwrap().is_empty());
}

#[tokio::test]
async fn the_recipient_is_the_given_address_or_the_accounts() {
    let f = fixture(vec![("s1".into(), "<p>x</p>".into())], None);
    let agent = ann();
    assert!(matches!(
        f.exports.request_email(agent, &sid("s1"), ExportFormat::Html, None).await,
        Err(ExportFailure::NoRecipient)
    ));
    let org = Owner::Org(redline_domain::OrgId::new());
    assert!(matches!(
        f.exports.request_email(org, &sid("s1"), ExportFormat::Html, None).await,
        Err(ExportFailure::NoRecipient)
    ));
    let to = Email::parse("bob@example.com").unwrap();
    f.exports.request_email(org, &sid("s1"), ExportFormat::Html, Some(to.clone())).await.unwrap();
    assert_eq!(wait_for_mail(&f).await.to, to);

    let g = fixture(vec![("s1".into(), "<p>x</p>".into())], Some("ann@example.com"));
    g.exports.request_email(ann(), &sid("s1"), ExportFormat::Html, None).await.unwrap();
    assert_eq!(wait_for_mail(&g).await.to.as_str(), "ann@example.com");
}

#[tokio::test]
async fn by_default_exports_are_mailed_only_to_the_account_or_its_members() {
    let docs = || vec![("s1".to_owned(), "<p>x</p>".to_owned())];
    // A web user: its own address (given or not), never a stranger's.
    let f = fixture_with(docs(), Some("ann@example.com"), MailRecipients::Account, |_| {});
    let stranger = Email::parse("victim@example.org").unwrap();
    assert!(matches!(
        f.exports.request_email(ann(), &sid("s1"), ExportFormat::Html, Some(stranger.clone())).await,
        Err(ExportFailure::RecipientNotAllowed)
    ));
    f.exports.request_email(ann(), &sid("s1"), ExportFormat::Html, ann_at()).await.unwrap();
    f.exports.request_email(ann(), &sid("s1"), ExportFormat::Html, None).await.unwrap();
    assert_eq!(f.jobs.0.lock().unwrap().len(), 2, "a refused request queues nothing");

    // An agent has no address: it cannot mail at all.
    let agent = fixture_with(docs(), None, MailRecipients::Account, |_| {});
    for to in [None, Some(stranger.clone())] {
        assert!(matches!(
            agent.exports.request_email(ann(), &sid("s1"), ExportFormat::Html, to).await,
            Err(ExportFailure::RecipientNotAllowed)
        ));
    }

    // An organization: a member's address only.
    let member = UserId::new();
    let f = fixture_with(docs(), None, MailRecipients::Account, |identity| {
        identity.expect_user_by_email().returning(move |e| {
            Ok((e.as_str() == "member@example.com").then(|| UserRecord {
                id: member,
                kind: UserKind::Web,
                email: Some(e.clone()),
                password_hash: None,
                name: None,
                plan: PlanSettings { plan: redline_domain::Plan::Free, monthly_limit_override: None },
                created_at: T0,
            }))
        });
        identity.expect_member().returning(move |org, user| {
            Ok((user == member).then(|| redline_ports::records::MemberRecord {
                org_id: org,
                user_id: user,
                role: "member".to_owned(),
                created_at: T0,
            }))
        });
    });
    let org = Owner::Org(redline_domain::OrgId::new());
    let to_member = Email::parse("member@example.com").unwrap();
    f.exports.request_email(org, &sid("s1"), ExportFormat::Html, Some(to_member)).await.unwrap();
    assert!(matches!(
        f.exports.request_email(org, &sid("s1"), ExportFormat::Html, Some(stranger)).await,
        Err(ExportFailure::RecipientNotAllowed)
    ));
}

#[tokio::test]
async fn mailing_is_throttled_per_account() {
    let f = fixture(vec![("s1".into(), "<p>x</p>".into())], Some("ann@example.com"));
    for _ in 0..MAIL_THROTTLE.free {
        f.exports.request_email(ann(), &sid("s1"), ExportFormat::Txt, None).await.unwrap();
    }
    assert!(matches!(
        f.exports.request_email(ann(), &sid("s1"), ExportFormat::Txt, None).await,
        Err(ExportFailure::MailThrottled { retry_after_secs: 60 })
    ));
}

#[tokio::test]
async fn an_emailed_link_downloads_until_it_expires() {
    let f = fixture(vec![("s1".into(), "<p>a paragraph well over forty bytes long</p>".into())], None);
    let to = Email::parse("ann@example.com").unwrap();
    let owner = ann();
    let request_id = f.exports.request_email(owner, &sid("s1"), ExportFormat::Docx, Some(to)).await.unwrap();
    let mail = wait_for_mail(&f).await;
    assert!(mail.text.contains("https://r.example/v1/documents/export/download/"), "{}", mail.text);
    assert!(mail
        .html
        .as_deref()
        .unwrap_or_default()
        .contains("href=\"https://r.example/v1/documents/export/download/"));

    // No cap on this path: the docx cap (40 bytes) is what the e-mail is the remedy for.
    let token = token_of(&mail);
    let file = f.exports.download(&token).await.unwrap();
    assert_eq!(file.filename, "s1.docx");
    assert_eq!(file.format, ExportFormat::Docx);
    assert!(file.bytes.len() > 40);
    let kept = f.files.export_file(&request_id).await.unwrap().expect("the export is recorded");
    assert_eq!((kept.owner, kept.expires_at), (owner, T0 + 60_000));

    let mut tampered = token.clone().into_bytes();
    let last = tampered.len() - 1;
    tampered[last] = if tampered[last] == b'0' { b'1' } else { b'0' };
    let tampered = String::from_utf8(tampered).unwrap();
    assert!(matches!(f.exports.download(&tampered).await, Err(ExportFailure::LinkNotFound)));
    assert!(matches!(f.exports.download("garbage").await, Err(ExportFailure::LinkNotFound)));

    f.clock.0.store(T0 + 60_000, Ordering::SeqCst);
    assert!(matches!(f.exports.download(&token).await, Err(ExportFailure::LinkNotFound)), "expired");

    // The next request sweeps expired files away.
    f.clock.0.store(T0 + 60_001, Ordering::SeqCst);
    f.mailer.0.lock().unwrap().clear();
    f.exports
        .request_email(owner, &sid("s1"), ExportFormat::Txt, Some(Email::parse("ann@example.com").unwrap()))
        .await
        .unwrap();
    wait_for_mail(&f).await;
    assert!(f.files.export_file(&request_id).await.unwrap().is_none());
    assert!(!f.blobs.0.lock().unwrap().contains_key(&export_key(&request_id)));
}

fn ann_at() -> Option<Email> {
    Some(Email::parse("ann@example.com").unwrap())
}

#[tokio::test]
async fn an_emailed_export_is_an_internal_job_with_a_typed_versioned_request() {
    let f = fixture(vec![("s1".into(), "<p>one</p>".into())], None);
    let owner = ann();
    let id = f.exports.request_email(owner, &sid("s1"), ExportFormat::Pdf, ann_at()).await.unwrap();
    assert!(id.starts_with("exp_") && id.len() == 36, "{id}");
    assert!(f.mails().is_empty(), "nothing is rendered before a worker claims the job");

    let job = f.jobs.get(&id).expect("the request id is the job's id");
    assert_eq!(
        (job.job_type, job.status, job.owner, job.session_id.as_str()),
        (JobType::EmailedExport, JobStatus::Pending, owner, "s1")
    );
    assert!(!job.job_type.is_public());
    let request = EmailedExport::read(&job.request).unwrap();
    let expected = EmailedExport {
        export_id: id.clone(),
        owner,
        session: sid("s1"),
        format: ExportFormat::Pdf,
        to: ann_at().unwrap(),
        version_id: Some("v_1".into()),
    };
    assert_eq!(request, expected);
    assert_eq!(job.request["format"], 1, "{}", job.request);
    assert_eq!(job.request["export_format"], "pdf");

    // A request written by a newer build is refused, not misread; a corrupt one too.
    let mut newer = job.request.clone();
    newer["format"] = serde_json::json!(2);
    assert!(EmailedExport::read(&newer).is_err());
    let mut corrupt = job.request.clone();
    corrupt["to"] = serde_json::json!("not an address");
    assert!(EmailedExport::read(&corrupt).is_err());

    f.run_queued().await;
    let done = f.jobs.get(&id).unwrap();
    assert_eq!((done.status, done.progress), (JobStatus::Completed, 100));
    assert_eq!(done.result, Some(serde_json::json!({"export_id": id})));
    assert_eq!(f.mails().len(), 1);
}

#[tokio::test]
async fn the_file_is_the_version_asked_for_not_a_later_one() {
    let f = fixture(vec![("s1".into(), "<p>as asked</p>".into())], None);
    let owner = ann();
    f.exports.request_email(owner, &sid("s1"), ExportFormat::Txt, ann_at()).await.unwrap();
    // A turn commits a new version before a worker takes the job.
    f.docs.lock().unwrap().get_mut("s1").unwrap().push("<p>edited later</p>".into());
    let mail = wait_for_mail(&f).await;
    let file = f.exports.download(&token_of(&mail)).await.unwrap();
    assert_eq!(file.bytes, Bytes::from("txt:<p>as asked</p>"));
}

#[tokio::test]
async fn a_run_after_a_crash_mails_the_stored_file_without_rendering_again() {
    let f = fixture(vec![("s1".into(), "<p>once</p>".into())], None);
    let id = f.exports.request_email(ann(), &sid("s1"), ExportFormat::Html, ann_at()).await.unwrap();
    f.run_queued().await;
    let first = f.mails();
    assert_eq!(first.len(), 1);
    // As if the worker had died after mailing, before completing: the sweep queues the job
    // again, and the document has meanwhile become one that cannot be rendered.
    f.jobs.set_status(&id, JobStatus::Pending);
    f.docs.lock().unwrap().get_mut("s1").unwrap()[0] = "<p>unrenderable</p>".into();
    f.run_queued().await;
    let mails = f.mails();
    assert_eq!(mails.len(), 2, "the link goes out again: at least once");
    assert_eq!(mails[1].subject, first[0].subject, "{mails:?}");
    assert_eq!(f.jobs.get(&id).unwrap().status, JobStatus::Completed);
    assert_eq!(f.files.exports.lock().unwrap().len(), 1, "recorded once");
}

#[tokio::test]
async fn a_job_taken_away_is_not_mailed_and_a_mail_outage_is_retried() {
    let f = fixture(vec![("s1".into(), "<p>x</p>".into())], None);
    let id = f.exports.request_email(ann(), &sid("s1"), ExportFormat::Html, ann_at()).await.unwrap();
    // Handed back (a replica shutting down) after its claim: this worker mails nothing.
    let job = f.claim().await.unwrap();
    f.jobs.set_status(&id, JobStatus::Pending);
    f.exports.run(job).await;
    assert!(f.mails().is_empty());
    assert_eq!(f.jobs.get(&id).unwrap().status, JobStatus::Pending);

    // The mail transport is down: the job stays in progress for its lease to run out (the
    // sweep retries it); it neither fails nor completes.
    f.mailer.1.store(true, Ordering::SeqCst);
    let job = f.claim().await.unwrap();
    f.exports.run(job).await;
    let held = f.jobs.get(&id).unwrap();
    assert_eq!(held.status, JobStatus::InProgress);
    assert!(f.mails().is_empty());

    // The retry, once the transport is back, delivers.
    f.mailer.1.store(false, Ordering::SeqCst);
    f.jobs.set_status(&id, JobStatus::Pending);
    f.run_queued().await;
    assert_eq!(f.mails().len(), 1);
    assert!(f.mails()[0].subject.contains("is ready"), "{:?}", f.mails());
    assert_eq!(f.jobs.get(&id).unwrap().status, JobStatus::Completed);
}

#[tokio::test]
async fn a_job_given_up_by_the_sweep_tells_the_recipient() {
    let f = fixture(vec![("s1".into(), "<p>x</p>".into())], None);
    let id = f.exports.request_email(ann(), &sid("s1"), ExportFormat::Docx, ann_at()).await.unwrap();
    let mut job = f.jobs.get(&id).unwrap();
    // Only a failed export job is told; anything else is not this runner's to tell.
    f.exports.given_up(job.clone()).await;
    assert!(f.mails().is_empty());
    job.status = JobStatus::Failed;
    f.exports.given_up(job).await;
    let mails = f.mails();
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].to.as_str(), "ann@example.com");
    assert!(mails[0].subject.contains("failed"), "{mails:?}");
}

#[tokio::test]
async fn a_session_deleted_before_the_run_fails_the_job_and_tells_the_recipient() {
    let f = fixture(vec![("s1".into(), "<p>x</p>".into())], None);
    let id = f.exports.request_email(ann(), &sid("s1"), ExportFormat::Docx, ann_at()).await.unwrap();
    f.docs.lock().unwrap().clear();
    f.run_queued().await;
    let job = f.jobs.get(&id).unwrap();
    assert_eq!(job.status, JobStatus::Failed);
    assert!(job.error.as_deref().unwrap_or_default().contains("deleted"), "{job:?}");
    assert!(f.mails()[0].subject.contains("failed"));
    assert!(f.blobs.0.lock().unwrap().is_empty());
}
