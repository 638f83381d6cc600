//! Files, mail and signed links: their configuration (README.md, "Configuration") and the adapters
//! it chooses.
//!
//! | variable | default |
//! | - | - |
//! | `REDLINE_STORAGE_URL` | unset: the folder `<data_dir>/blobs`; `s3://bucket[/prefix]` with the usual `AWS_*` variables (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, …) |
//! | `REDLINE_SMTP_URL` | unset: `.eml` files in the outbox folder |
//! | `REDLINE_OUTBOX_DIR` | `<data_dir>/outbox` (on PostgreSQL without SMTP it must be set: [`crate::config::Config::refusals`]) |
//! | `REDLINE_MAIL_FROM` | `Redline <no-reply@redline.invalid>` |
//! | `REDLINE_SECRET` | unset: a random key kept in `<data_dir>/secret` (replicas must share one) |
//! | `REDLINE_EXPORT_CAP_BYTES` | 104857600, per format; `REDLINE_EXPORT_CAP_BYTES_DOCX` (`_PDF`, `_HTML`, `_MARKDOWN`, `_TXT`) overrides one |
//! | `REDLINE_EXPORT_LINK_TTL_SECS` | 604800 (7 days) |
//! | `REDLINE_EXPORT_MAIL_TO` | `account`: exports are mailed to the account's own address (an organization's: a member's); `any`: to any address |

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context};
use rand::RngCore;
use redline_blobs::{BlobLocation, ObjectBlobStore};
use redline_core::exports::MailRecipients;
use redline_domain::export::ExportFormat;
use redline_mail::MailTransport;
use redline_ports::{BlobStore, Mailer};

/// The file that keeps the generated signing key when `REDLINE_SECRET` is unset.
pub const SECRET_FILE: &str = "secret";

#[derive(Clone)]
pub struct OutboundConfig {
    pub storage_url: Option<String>,
    /// `AWS_*` variables, for an `s3://` storage URL.
    pub aws_settings: Vec<(String, String)>,
    pub smtp_url: Option<String>,
    /// `REDLINE_OUTBOX_DIR`: the outbox folder when there is no SMTP (else `<data_dir>/outbox`).
    pub outbox_dir: Option<PathBuf>,
    pub mail_from: String,
    /// `REDLINE_SECRET`: the HMAC key of signed links.
    pub secret: Option<String>,
    pub export_cap_bytes: u64,
    pub export_cap_overrides: HashMap<ExportFormat, u64>,
    pub export_link_ttl: Duration,
    pub export_mail_to: MailRecipients,
    /// `REDLINE_REQUIRE_VERIFIED_EMAIL` (default true): exports are mailed only to proven
    /// addresses.
    pub require_verified_email: bool,
    /// `REDLINE_REVISION_AUTHOR` (default "Redline AI"): the author of the revisions of a
    /// tracked DOCX export.
    pub revision_author: String,
}

impl std::fmt::Debug for OutboundConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Credentials stay out of logs: only the names of the AWS variables are shown.
        f.debug_struct("OutboundConfig")
            .field("storage_url", &self.storage_url)
            .field("aws_settings", &self.aws_settings.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>())
            .field("smtp_url", &self.smtp_url.as_ref().map(|_| "<set>"))
            .field("outbox_dir", &self.outbox_dir)
            .field("mail_from", &self.mail_from)
            .field("secret", &self.secret.as_ref().map(|_| "<set>"))
            .field("export_cap_bytes", &self.export_cap_bytes)
            .field("export_cap_overrides", &self.export_cap_overrides)
            .field("export_link_ttl", &self.export_link_ttl)
            .field("export_mail_to", &self.export_mail_to)
            .field("require_verified_email", &self.require_verified_email)
            .field("revision_author", &self.revision_author)
            .finish()
    }
}

impl OutboundConfig {
    /// Reads `REDLINE_*` (and `AWS_*`) variables.
    pub fn from_vars(vars: &HashMap<String, String>) -> anyhow::Result<Self> {
        let get = |name: &str| vars.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
        let bytes = |name: &str, default: u64| -> anyhow::Result<u64> {
            match get(name) {
                None => Ok(default),
                Some(v) => v.parse().map_err(|_| anyhow!("{name}={v:?} is not a valid number of bytes")),
            }
        };
        let export_cap_bytes = bytes("REDLINE_EXPORT_CAP_BYTES", 104_857_600)?;
        let mut export_cap_overrides = HashMap::new();
        for format in ExportFormat::ALL {
            let name = format!("REDLINE_EXPORT_CAP_BYTES_{}", format.as_str().to_ascii_uppercase());
            if get(&name).is_some() {
                export_cap_overrides.insert(format, bytes(&name, export_cap_bytes)?);
            }
        }
        let ttl = bytes("REDLINE_EXPORT_LINK_TTL_SECS", 604_800)?;
        if ttl == 0 {
            return Err(anyhow!("REDLINE_EXPORT_LINK_TTL_SECS must be at least 1"));
        }
        let export_mail_to = match get("REDLINE_EXPORT_MAIL_TO") {
            None => MailRecipients::default(),
            Some(v) => MailRecipients::parse(v)
                .ok_or_else(|| anyhow!("REDLINE_EXPORT_MAIL_TO={v:?} must be `account` or `any`"))?,
        };
        let mut aws_settings: Vec<(String, String)> =
            vars.iter().filter(|(k, _)| k.starts_with("AWS_")).map(|(k, v)| (k.clone(), v.clone())).collect();
        aws_settings.sort();
        Ok(Self {
            storage_url: get("REDLINE_STORAGE_URL").map(str::to_owned),
            aws_settings,
            smtp_url: get("REDLINE_SMTP_URL").map(str::to_owned),
            outbox_dir: get("REDLINE_OUTBOX_DIR").map(PathBuf::from),
            mail_from: get("REDLINE_MAIL_FROM").unwrap_or(redline_mail::DEFAULT_FROM).to_owned(),
            secret: get("REDLINE_SECRET").map(str::to_owned),
            export_cap_bytes,
            export_cap_overrides,
            export_link_ttl: Duration::from_secs(ttl),
            export_mail_to,
            require_verified_email: crate::config::flag_or(
                "REDLINE_REQUIRE_VERIFIED_EMAIL",
                get("REDLINE_REQUIRE_VERIFIED_EMAIL"),
                true,
            )?,
            revision_author: get("REDLINE_REVISION_AUTHOR").unwrap_or("Redline AI").chars().take(100).collect(),
        })
    }

    /// The blob store.
    pub fn blob_store(&self, data_dir: &Path) -> anyhow::Result<(Arc<dyn BlobStore>, String)> {
        let location = BlobLocation::from_url(self.storage_url.as_deref(), data_dir, self.aws_settings.clone())?;
        let store = ObjectBlobStore::open(&location).context("cannot open the blob store")?;
        let description = store.description().to_owned();
        Ok((Arc::new(store), description))
    }

    /// The outbox folder (used without SMTP).
    pub fn outbox(&self, data_dir: &Path) -> PathBuf {
        self.outbox_dir.clone().unwrap_or_else(|| data_dir.join("outbox"))
    }

    /// The mailer.
    pub fn mailer(&self, data_dir: &Path) -> anyhow::Result<Arc<dyn Mailer>> {
        let transport = match &self.smtp_url {
            Some(url) => MailTransport::Smtp(url.clone()),
            None => MailTransport::Outbox(self.outbox(data_dir)),
        };
        redline_mail::open(&transport, &self.mail_from).context("cannot set up mail")
    }

    /// The signing key: `REDLINE_SECRET`, else the one kept in `<data_dir>/secret`
    /// (generated on first start, readable by this user only).
    pub fn signing_key(&self, data_dir: &Path) -> anyhow::Result<Vec<u8>> {
        if let Some(secret) = &self.secret {
            return Ok(secret.as_bytes().to_vec());
        }
        let path = data_dir.join(SECRET_FILE);
        match std::fs::read_to_string(&path) {
            Ok(kept) if !kept.trim().is_empty() => return Ok(kept.trim().as_bytes().to_vec()),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(anyhow!("cannot read {}: {e}", path.display())),
        }
        let mut key = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut key);
        let key = hex::encode(key);
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(&path) {
            Ok(mut file) => {
                file.write_all(key.as_bytes()).with_context(|| format!("cannot write {}", path.display()))?;
                Ok(key.into_bytes())
            }
            // Another process (a `redline admin` beside the server) wrote it first: use theirs.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let kept = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
                Ok(kept.trim().as_bytes().to_vec())
            }
            Err(e) => Err(anyhow!("cannot create {}: {e}", path.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn defaults_and_per_format_caps() {
        let c = OutboundConfig::from_vars(&HashMap::new()).unwrap();
        assert_eq!(c.export_cap_bytes, 104_857_600);
        assert!(c.export_cap_overrides.is_empty());
        assert_eq!(c.export_link_ttl, Duration::from_secs(604_800));
        assert_eq!(c.storage_url, None);
        assert_eq!(c.smtp_url, None);

        let c = OutboundConfig::from_vars(&vars(&[
            ("REDLINE_EXPORT_CAP_BYTES", "2048"),
            ("REDLINE_EXPORT_CAP_BYTES_DOCX", "100"),
            ("REDLINE_EXPORT_CAP_BYTES_MARKDOWN", "200"),
            ("REDLINE_EXPORT_LINK_TTL_SECS", "8"),
            ("REDLINE_STORAGE_URL", "s3://bucket/p"),
            ("AWS_ENDPOINT_URL", "http://127.0.0.1:9000"),
            ("AWS_SECRET_ACCESS_KEY", "hush"),
        ]))
        .unwrap();
        assert_eq!(c.export_cap_bytes, 2048);
        assert_eq!(c.export_cap_overrides.get(&ExportFormat::Docx), Some(&100));
        assert_eq!(c.export_cap_overrides.get(&ExportFormat::Markdown), Some(&200));
        assert_eq!(c.export_cap_overrides.get(&ExportFormat::Pdf), None);
        assert_eq!(c.export_link_ttl, Duration::from_secs(8));
        assert_eq!(c.aws_settings.len(), 2);
        let shown = format!("{c:?}");
        assert!(!shown.contains("hush") && shown.contains("AWS_SECRET_ACCESS_KEY"), "{shown}");

        for bad in [
            ("REDLINE_EXPORT_CAP_BYTES", "big"),
            ("REDLINE_EXPORT_CAP_BYTES_PDF", "-1"),
            ("REDLINE_EXPORT_LINK_TTL_SECS", "0"),
        ] {
            let err = OutboundConfig::from_vars(&vars(&[bad])).unwrap_err().to_string();
            assert!(err.contains(bad.0), "{err}");
        }
    }

    #[test]
    fn the_signing_key_is_generated_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let c = OutboundConfig::from_vars(&HashMap::new()).unwrap();
        let first = c.signing_key(dir.path()).unwrap();
        assert_eq!(first.len(), 64);
        assert_eq!(c.signing_key(dir.path()).unwrap(), first, "read back, not generated again");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(SECRET_FILE)).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "only the owner may read the key");
        }
        let set = OutboundConfig::from_vars(&vars(&[("REDLINE_SECRET", "configured")])).unwrap();
        assert_eq!(set.signing_key(dir.path()).unwrap(), b"configured");
    }
}
