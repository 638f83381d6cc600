//! Exports (docs/api.md, "Export"): a document rendered to DOCX, PDF, HTML, Markdown or text, either
//! answered at once (under a per-format cap) or rendered by a job of the database queue
//! (`job.rs`), kept in the blob store and e-mailed as a signed download link.

mod job;
mod link;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use bytes::Bytes;
use redline_domain::export::ExportFormat;
use redline_domain::image_urls::public_image_urls;
use redline_domain::throttle::ThrottlePolicy;
use redline_domain::time_util::Millis;
use redline_domain::{Email, Owner, SessionId};
use redline_ports::documents::DocumentRecord;
use redline_ports::files::ExportFileRecord;
use redline_ports::jobs::Signal;
use redline_ports::mail::{MailError, OutgoingMail};
use redline_ports::{
    BlobError, BlobStore, Clock, DocumentExporter, DocumentStore, EventBus, ExportError, FileIndex, IdentityStore,
    ImageSource, JobStore, Mailer, StoreError, TrackedDocument, TrackedPart,
};

use crate::documents::{export_key, image_key, is_image_id, IMAGE_PATH};

pub use job::EmailedExport;
pub use link::{LinkSigner, SignedLink};

/// Images fetched for one export at most, in number and in bytes; further images are left
/// out of the file (and the log says so).
pub const MAX_EXPORT_IMAGES: usize = 512;
pub const MAX_EXPORT_IMAGE_BYTES: usize = 256 * 1024 * 1024;

/// Settings of exports (README.md, "Configuration").
#[derive(Debug, Clone)]
pub struct ExportConfig {
    /// `REDLINE_EXPORT_CAP_BYTES`: the cap of every format without its own.
    pub default_cap_bytes: u64,
    /// `REDLINE_EXPORT_CAP_BYTES_<FORMAT>`.
    pub cap_overrides: HashMap<ExportFormat, u64>,
    /// `REDLINE_EXPORT_LINK_TTL_SECS`, in milliseconds.
    pub link_ttl_ms: Millis,
    /// scheme://host[:port] of the service, for the links in e-mails and the addresses of
    /// pictures that a format keeps as links (Markdown).
    pub public_base_url: String,
    /// `REDLINE_JOB_LEASE_SECS`: how long an e-mailed export's job is this worker's without
    /// a renewal.
    pub lease: std::time::Duration,
    /// `REDLINE_EXPORT_MAIL_TO`: who an e-mailed export may be sent to.
    pub mail_to: MailRecipients,
    /// `REDLINE_REQUIRE_VERIFIED_EMAIL`: under [`MailRecipients::Account`], the recipient's
    /// address must be proven (docs/api.md, "E-mail verification").
    pub verified_only: bool,
    /// `REDLINE_REVISION_AUTHOR`: who the revisions and comments of a tracked DOCX are
    /// credited to.
    pub revision_author: String,
}

/// Who an e-mailed export may go to (docs/api.md, "Export by e-mail").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MailRecipients {
    /// The account's own address; for an organization, the address of one of its members.
    /// Agents, which have no address, cannot mail exports.
    #[default]
    Account,
    /// Any address (a private deployment whose callers are all trusted).
    Any,
}

impl MailRecipients {
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "account" => Some(Self::Account),
            "any" => Some(Self::Any),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Account => "account",
            Self::Any => "any",
        }
    }
}

/// E-mailed exports one account may request: ten at once, then a growing wait (a minute,
/// two, four … up to an hour), forgotten an hour after the last.
pub const MAIL_THROTTLE: ThrottlePolicy =
    ThrottlePolicy { free: 10, base_ms: 60_000, cap_ms: 3_600_000, window_ms: 3_600_000 };

impl ExportConfig {
    /// The cap of a directly answered export of `format`.
    pub fn cap(&self, format: ExportFormat) -> u64 {
        self.cap_overrides.get(&format).copied().unwrap_or(self.default_cap_bytes)
    }
}

/// What exports need from the world.
pub struct ExportPorts {
    pub documents: Arc<dyn DocumentStore>,
    pub exporter: Arc<dyn DocumentExporter>,
    pub blobs: Arc<dyn BlobStore>,
    pub files: Arc<dyn FileIndex>,
    pub identity: Arc<dyn IdentityStore>,
    pub mailer: Arc<dyn Mailer>,
    pub clock: Arc<dyn Clock>,
    /// The queue of e-mailed exports.
    pub jobs: Arc<dyn JobStore>,
    pub bus: Arc<dyn EventBus>,
}

#[derive(Debug, thiserror::Error)]
pub enum ExportFailure {
    /// The session does not exist for this owner.
    #[error("session not found")]
    NotFound,
    /// The rendered file is over the format's cap (413; the remedy is the e-mailed link).
    #[error("the {format} export is {size_bytes} bytes, over the cap of {max_bytes}")]
    TooLarge { format: ExportFormat, size_bytes: u64, max_bytes: u64 },
    /// No `email` was given and the account has no address.
    #[error("no recipient")]
    NoRecipient,
    /// The address is not the account's own, nor one of its organization's members'.
    #[error("recipient not allowed")]
    RecipientNotAllowed,
    /// The recipient's address is the account's, not proven yet.
    #[error("recipient not verified")]
    RecipientUnverified,
    /// Too many e-mailed exports lately: wait this long.
    #[error("mail throttled: retry after {retry_after_secs} s")]
    MailThrottled { retry_after_secs: u64 },
    /// A download link that is malformed, tampered with, expired, or whose file is gone.
    #[error("download link not found or expired")]
    LinkNotFound,
    #[error(transparent)]
    Render(#[from] ExportError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Blob(#[from] BlobError),
    #[error("worker failed: {0}")]
    Worker(String),
}

pub type ExportResult<T> = Result<T, ExportFailure>;

/// A rendered file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportedFile {
    pub format: ExportFormat,
    /// `<session_id>.<extension>` (session ids are letters, digits, `_`, `-` and `.`).
    pub filename: String,
    pub content_type: String,
    pub bytes: Bytes,
}

/// The images of one export, fetched before the (synchronous) exporter runs.
struct FetchedImages(HashMap<String, (String, Vec<u8>)>);

impl ImageSource for FetchedImages {
    fn image(&self, image_id: &str) -> Option<(String, Vec<u8>)> {
        self.0.get(image_id).cloned()
    }
}

/// The image ids a document's HTML refers to through `/v1/documents/images/{id}`, in order of
/// first appearance.
pub fn referenced_image_ids(html: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut ids = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find(IMAGE_PATH) {
        rest = &rest[at + IMAGE_PATH.len()..];
        let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        let candidate = &rest[..end];
        if is_image_id(candidate) && seen.insert(candidate.to_owned()) {
            ids.push(candidate.to_owned());
        }
    }
    ids
}

fn len_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// A fresh export id: `exp_` + 32 hex characters.
fn new_export_id() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("exp_{}", hex::encode(bytes))
}

pub struct Exports {
    ports: ExportPorts,
    signer: LinkSigner,
    config: ExportConfig,
    /// Renders at once, one per core: a render is CPU-bound and holds the whole document's
    /// model and file in memory (a PDF of a 30 MB document takes well over a gigabyte), so
    /// more at a time only multiplies the memory. Others wait their turn.
    renders: tokio::sync::Semaphore,
}

impl Exports {
    pub fn new(ports: ExportPorts, signer: LinkSigner, config: ExportConfig) -> Self {
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
        Self { ports, signer, config, renders: tokio::sync::Semaphore::new(cores) }
    }

    pub fn config(&self) -> &ExportConfig {
        &self.config
    }

    async fn document(&self, owner: Owner, session: &SessionId) -> ExportResult<DocumentRecord> {
        self.ports.documents.document(owner, session).await?.ok_or(ExportFailure::NotFound)
    }

    /// Fetches the images the HTML shows (bounded in number and bytes).
    async fn images_of(&self, html: &str) -> ExportResult<FetchedImages> {
        let mut fetched = HashMap::new();
        let mut total = 0usize;
        for image_id in referenced_image_ids(html) {
            if fetched.len() >= MAX_EXPORT_IMAGES {
                tracing::warn!(limit = MAX_EXPORT_IMAGES, "export: too many images, the rest are left out");
                break;
            }
            let Some(record) = self.ports.files.image(&image_id).await? else { continue };
            let bytes = match self.ports.blobs.get(&image_key(&image_id)).await {
                Ok(bytes) => bytes,
                Err(BlobError::NotFound) => continue,
                Err(e) => return Err(e.into()),
            };
            total += bytes.len();
            if total > MAX_EXPORT_IMAGE_BYTES {
                tracing::warn!(
                    limit = MAX_EXPORT_IMAGE_BYTES,
                    "export: images too large in total, the rest are left out"
                );
                break;
            }
            fetched.insert(image_id, (record.content_type, bytes.to_vec()));
        }
        Ok(FetchedImages(fetched))
    }

    /// Renders the document on the blocking pool.
    async fn render(&self, document: &DocumentRecord, format: ExportFormat) -> ExportResult<ExportedFile> {
        self.render_html(&document.html, &document.session_id, document.title.as_deref(), format).await
    }

    /// Renders a document's HTML on the blocking pool, named after its title (else its
    /// session id).
    async fn render_html(
        &self,
        html: &str,
        session: &SessionId,
        title: Option<&str>,
        format: ExportFormat,
    ) -> ExportResult<ExportedFile> {
        let _turn = self.renders.acquire().await.map_err(|e| ExportFailure::Worker(e.to_string()))?;
        let images = self.images_of(html).await?;
        let exporter = self.ports.exporter.clone();
        // The pictures a format links to rather than embeds are linked under the public URL.
        let html = public_image_urls(html, &self.config.public_base_url).into_owned();
        let filename = redline_domain::title::file_name(title, session.as_str(), format.extension());
        let title = title.unwrap_or(session.as_str()).to_owned();
        let bytes = tokio::task::spawn_blocking(move || exporter.export(&html, &title, format, &images))
            .await
            .map_err(|e| ExportFailure::Worker(e.to_string()))??;
        Ok(ExportedFile { format, filename, content_type: format.content_type().to_owned(), bytes: Bytes::from(bytes) })
    }

    /// The session's document as a file of `format`, refused when over the format's cap.
    pub async fn export(&self, owner: Owner, session: &SessionId, format: ExportFormat) -> ExportResult<ExportedFile> {
        let document = self.document(owner, session).await?;
        let file = self.render(&document, format).await?;
        let max_bytes = self.config.cap(format);
        let size_bytes = len_u64(file.bytes.len());
        if size_bytes > max_bytes {
            return Err(ExportFailure::TooLarge { format, size_bytes, max_bytes });
        }
        Ok(file)
    }

    /// The session's document as a DOCX whose `document` changes are Word revisions by
    /// [`ExportConfig::revision_author`] (docs/export.md, "Tracked changes"), refused when
    /// over the DOCX cap.
    pub async fn export_tracked(
        &self,
        owner: Owner,
        session: &SessionId,
        document: TrackedDocument,
    ) -> ExportResult<ExportedFile> {
        let record = self.document(owner, session).await?;
        let file = self.render_tracked(&record, document).await?;
        let (size_bytes, max_bytes) = (len_u64(file.bytes.len()), self.config.cap(ExportFormat::Docx));
        if size_bytes > max_bytes {
            return Err(ExportFailure::TooLarge { format: ExportFormat::Docx, size_bytes, max_bytes });
        }
        Ok(file)
    }

    /// Renders `document`, the tracked reading of `record`, as a DOCX on the blocking pool.
    async fn render_tracked(
        &self,
        record: &DocumentRecord,
        mut document: TrackedDocument,
    ) -> ExportResult<ExportedFile> {
        let format = ExportFormat::Docx;
        let _turn = self.renders.acquire().await.map_err(|e| ExportFailure::Worker(e.to_string()))?;
        let images = self.images_of(&document.all_html()).await?;
        document.author.clone_from(&self.config.revision_author);
        let base = &self.config.public_base_url;
        for part in &mut document.parts {
            match part {
                TrackedPart::Same(html) => *html = public_image_urls(html, base).into_owned(),
                TrackedPart::Changed(change) => {
                    change.old = public_image_urls(&change.old, base).into_owned();
                    change.new = public_image_urls(&change.new, base).into_owned();
                }
            }
        }
        let session = record.session_id.as_str();
        let title = record.title.as_deref();
        let filename = redline_domain::title::file_name(title, session, format.extension());
        let title = title.unwrap_or(session).to_owned();
        let exporter = self.ports.exporter.clone();
        let bytes = tokio::task::spawn_blocking(move || exporter.export_tracked(&document, &title, &images))
            .await
            .map_err(|e| ExportFailure::Worker(e.to_string()))??;
        Ok(ExportedFile { format, filename, content_type: format.content_type().to_owned(), bytes: Bytes::from(bytes) })
    }

    /// Who an e-mailed export goes to: `email`, else the account's own address.
    /// The address to mail: `email`, else the account's own; refused unless
    /// [`MailRecipients`] allows it.
    async fn recipient(&self, owner: Owner, email: Option<Email>) -> ExportResult<Email> {
        let own = match owner {
            Owner::User(id) => self.ports.identity.user_by_id(id).await?.and_then(|u| u.email),
            Owner::Org(_) => None,
        };
        let Some(to) = email.or_else(|| own.clone()) else {
            return Err(match (self.config.mail_to, owner) {
                (MailRecipients::Account, Owner::User(_)) => ExportFailure::RecipientNotAllowed,
                _ => ExportFailure::NoRecipient,
            });
        };
        // The account whose address the recipient is.
        let account = match (self.config.mail_to, owner) {
            (MailRecipients::Any, _) => return Ok(to),
            (MailRecipients::Account, Owner::User(id)) => (own.as_ref() == Some(&to)).then_some(id),
            (MailRecipients::Account, Owner::Org(org)) => match self.ports.identity.user_by_email(&to).await? {
                Some(user) if self.ports.identity.member(org, user.id).await?.is_some() => Some(user.id),
                _ => None,
            },
        };
        let Some(account) = account else { return Err(ExportFailure::RecipientNotAllowed) };
        if self.config.verified_only {
            let proven = self.ports.identity.verified_email(account).await?;
            if proven.is_none_or(|(email, _)| email != to) {
                return Err(ExportFailure::RecipientUnverified);
            }
        }
        Ok(to)
    }

    /// Takes one of the owner's e-mailed exports (`MAIL_THROTTLE`), shared by the replicas.
    async fn take_mail(&self, owner: Owner) -> ExportResult<()> {
        let scope = crate::secrets::sha256_hex(format!("mail:{owner}").as_bytes());
        let now = self.ports.clock.now_ms();
        self.ports.identity.take_throttle(&[(scope, MAIL_THROTTLE)], now).await?.map_err(|wait_ms| {
            ExportFailure::MailThrottled { retry_after_secs: redline_domain::throttle::retry_after_secs(wait_ms) }
        })
    }

    /// Accepts an e-mailed export: checks the session and the recipient now and queues the
    /// job that renders the document's current version (no cap: this is the remedy for a
    /// file over it), keeps the file in the blob store and mails a signed link. Answers the
    /// request id (the export's id, and its job's).
    pub async fn request_email(
        &self,
        owner: Owner,
        session: &SessionId,
        format: ExportFormat,
        email: Option<Email>,
    ) -> ExportResult<String> {
        self.queue_email(owner, session, format, email, None).await
    }

    /// [`Exports::request_email`] of the DOCX whose `tracked` changes are Word revisions
    /// (the `track_changes` of a direct export): rendered now, with no cap, and kept; the job
    /// finds it recorded and mails its link.
    pub async fn request_email_tracked(
        &self,
        owner: Owner,
        session: &SessionId,
        email: Option<Email>,
        tracked: TrackedDocument,
    ) -> ExportResult<String> {
        self.queue_email(owner, session, ExportFormat::Docx, email, Some(tracked)).await
    }

    async fn queue_email(
        &self,
        owner: Owner,
        session: &SessionId,
        format: ExportFormat,
        email: Option<Email>,
        tracked: Option<TrackedDocument>,
    ) -> ExportResult<String> {
        let document = self.document(owner, session).await?;
        let to = self.recipient(owner, email).await?;
        self.take_mail(owner).await?;
        let request = EmailedExport {
            export_id: new_export_id(),
            owner,
            session: session.clone(),
            format,
            to,
            version_id: document.version_id.clone(),
        };
        if let Some(tracked) = tracked {
            let file = self.render_tracked(&document, tracked).await?;
            self.store_file(&request, &file).await?;
        }
        self.ports.jobs.insert_job(&request.job(self.ports.clock.now_ms())).await?;
        self.ports.bus.publish(Signal::Queued).await;
        Ok(request.export_id)
    }

    async fn mail_failure(&self, session: &SessionId, format: ExportFormat, to: &Email) -> Result<(), MailError> {
        let text = format!(
            "Your {} export of \"{}\" could not be prepared. Please try again; if it fails again, contact support.\n",
            format.as_str().to_uppercase(),
            session.as_str()
        );
        let mail = OutgoingMail {
            to: to.clone(),
            subject: format!("Your Redline export of {} failed", session.as_str()),
            text,
            html: None,
        };
        self.ports.mailer.send(&mail).await
    }

    /// Deletes the files whose links expired.
    async fn purge_expired(&self) {
        let now = self.ports.clock.now_ms();
        match self.ports.files.take_expired_exports(now).await {
            Ok(ids) => {
                for id in ids {
                    if let Err(e) = self.ports.blobs.delete(&export_key(&id)).await {
                        tracing::warn!(export_id = %id, error = %e, "could not remove an expired export");
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not list the expired exports"),
        }
    }

    /// The file behind a signed download link (no authorization: the link is the capability).
    pub async fn download(&self, token: &str) -> ExportResult<ExportedFile> {
        let SignedLink { export_id, expires_at } = self.signer.verify(token).ok_or(ExportFailure::LinkNotFound)?;
        let now = self.ports.clock.now_ms();
        if now >= expires_at {
            return Err(ExportFailure::LinkNotFound);
        }
        let record = self.ports.files.export_file(&export_id).await?.ok_or(ExportFailure::LinkNotFound)?;
        if now >= record.expires_at {
            return Err(ExportFailure::LinkNotFound);
        }
        let bytes = match self.ports.blobs.get(&export_key(&export_id)).await {
            Ok(bytes) => bytes,
            Err(BlobError::NotFound) => return Err(ExportFailure::LinkNotFound),
            Err(e) => return Err(e.into()),
        };
        let format = ExportFormat::parse(&record.format)
            .map(|r| r.format)
            .ok_or_else(|| ExportFailure::Worker(format!("stored export with unknown format {:?}", record.format)))?;
        Ok(ExportedFile { format, filename: record.filename, content_type: record.content_type, bytes })
    }
}

/// A stored export, as its mail describes it.
struct ReadyFile {
    filename: String,
    format: ExportFormat,
    size_bytes: usize,
    expires_at: Millis,
}

impl ReadyFile {
    fn of_record(record: &ExportFileRecord) -> Option<Self> {
        Some(Self {
            filename: record.filename.clone(),
            format: ExportFormat::parse(&record.format)?.format,
            size_bytes: usize::try_from(record.size_bytes).unwrap_or(0),
            expires_at: record.expires_at,
        })
    }
}

fn human_size(bytes: usize) -> String {
    let b = bytes as f64;
    if b >= 1_048_576.0 {
        format!("{:.1} MB", b / 1_048_576.0)
    } else if b >= 1024.0 {
        format!("{:.0} KB", b / 1024.0)
    } else {
        format!("{bytes} bytes")
    }
}

fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The e-mail carrying a download link.
fn ready_mail(to: &Email, session: &SessionId, file: &ReadyFile, link: &str, ttl_ms: Millis) -> OutgoingMail {
    let hours = ttl_ms / 3_600_000;
    let validity = match hours {
        h if h >= 48 && h % 24 == 0 => format!("{} days", h / 24),
        h if h >= 1 => format!("{h} hours"),
        _ => format!("{} seconds", ttl_ms / 1000),
    };
    let what = format!("{} ({}, {})", file.filename, file.format.as_str().to_uppercase(), human_size(file.size_bytes));
    let text = format!(
        "Your export of \"{session}\" is ready: {what}.\n\nDownload it here (the link works for {validity}, without signing in, for anyone who has it):\n\n{link}\n",
        session = session.as_str(),
    );
    let html = format!(
        "<p>Your export of &ldquo;{session}&rdquo; is ready: {what}.</p>\
         <p><a href=\"{link}\">Download the file</a> (the link works for {validity}, without signing in, for anyone who has it).</p>",
        session = escape_html(session.as_str()),
        what = escape_html(&what),
        link = escape_html(link),
    );
    OutgoingMail {
        to: to.clone(),
        subject: format!("Your Redline export of {} is ready", session.as_str()),
        text,
        html: Some(html),
    }
}

#[cfg(test)]
mod fake_jobs;
#[cfg(test)]
mod tests;
