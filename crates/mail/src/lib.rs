//! The `Mailer` adapter: messages are built with `lettre` and either written as `.eml` files
//! into an outbox folder (the embedded default, `<data_dir>/outbox`, which a developer or a
//! test reads) or sent to an SMTP server (`REDLINE_SMTP_URL`, e.g.
//! `smtps://user:pass@smtp.example.com` or `smtp://127.0.0.1:2525`).
//!
//! Invariant: a message in the outbox is complete: it is written under a temporary name and
//! renamed to `*.eml` only once whole.

use std::path::PathBuf;
use std::sync::Arc;

use lettre::message::header::ContentType;
use lettre::message::{Mailbox, MultiPart, SinglePart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use rand::RngCore;
use redline_ports::mail::{MailError, Mailer, OutgoingMail};

/// The sender of every message when none is configured.
pub const DEFAULT_FROM: &str = "Redline <no-reply@redline.invalid>";

/// How mail leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailTransport {
    /// `.eml` files in this folder.
    Outbox(PathBuf),
    /// An SMTP URL as `lettre` reads it (`smtp://`, `smtps://`, `?tls=required`, credentials
    /// in the user-info part).
    Smtp(String),
}

/// Builds the mailer of `transport`, sending as `from` (`Name <address>` or an address).
pub fn open(transport: &MailTransport, from: &str) -> Result<Arc<dyn Mailer>, MailError> {
    let from: Mailbox = from.parse().map_err(|e| MailError::Rejected(format!("sender {from:?}: {e}")))?;
    Ok(match transport {
        MailTransport::Outbox(dir) => Arc::new(OutboxMailer::new(dir.clone(), from)?),
        MailTransport::Smtp(url) => Arc::new(SmtpMailer::new(url, from)?),
    })
}

/// The RFC 5322 message of `mail`.
pub fn message(from: &Mailbox, mail: &OutgoingMail) -> Result<Message, MailError> {
    let to: Mailbox =
        mail.to.as_str().parse().map_err(|e| MailError::Rejected(format!("recipient {}: {e}", mail.to)))?;
    let builder = Message::builder().from(from.clone()).to(to).subject(mail.subject.clone());
    let built = match &mail.html {
        Some(html) => builder.multipart(MultiPart::alternative_plain_html(mail.text.clone(), html.clone())),
        None => builder.singlepart(SinglePart::builder().header(ContentType::TEXT_PLAIN).body(mail.text.clone())),
    };
    built.map_err(|e| MailError::Rejected(e.to_string()))
}

/// Writes each message as `<outbox>/<millis>-<random>.eml`.
pub struct OutboxMailer {
    dir: PathBuf,
    from: Mailbox,
}

impl OutboxMailer {
    /// Creates the folder when needed.
    pub fn new(dir: PathBuf, from: Mailbox) -> Result<Self, MailError> {
        std::fs::create_dir_all(&dir)
            .map_err(|e| MailError::Unavailable(format!("cannot create the outbox {}: {e}", dir.display())))?;
        Ok(Self { dir, from })
    }
}

fn file_stem() -> String {
    let mut random = [0u8; 8];
    rand::rngs::OsRng.fill_bytes(&mut random);
    let millis =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or_default();
    format!("{millis}-{}", hex::encode(random))
}

#[async_trait::async_trait]
impl Mailer for OutboxMailer {
    async fn send(&self, mail: &OutgoingMail) -> Result<(), MailError> {
        let bytes = message(&self.from, mail)?.formatted();
        let stem = file_stem();
        let partial = self.dir.join(format!(".{stem}.partial"));
        let done = self.dir.join(format!("{stem}.eml"));
        let unavailable = |e: std::io::Error| MailError::Unavailable(format!("outbox {}: {e}", self.dir.display()));
        tokio::fs::write(&partial, &bytes).await.map_err(unavailable)?;
        if let Err(e) = tokio::fs::rename(&partial, &done).await {
            let _ = tokio::fs::remove_file(&partial).await;
            return Err(unavailable(e));
        }
        tracing::info!(path = %done.display(), "mail written to the outbox");
        Ok(())
    }
}

/// Sends through an SMTP server (pooled connections).
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl SmtpMailer {
    pub fn new(url: &str, from: Mailbox) -> Result<Self, MailError> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|e| MailError::Rejected(format!("REDLINE_SMTP_URL: {e}")))?
            .build();
        Ok(Self { transport, from })
    }
}

#[async_trait::async_trait]
impl Mailer for SmtpMailer {
    async fn send(&self, mail: &OutgoingMail) -> Result<(), MailError> {
        let message = message(&self.from, mail)?;
        match self.transport.send(message).await {
            Ok(_) => Ok(()),
            Err(e) if e.is_permanent() => Err(MailError::Rejected(e.to_string())),
            Err(e) => Err(MailError::Unavailable(e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_has_sender_recipient_subject_and_both_bodies() {
        let from: Mailbox = DEFAULT_FROM.parse().unwrap();
        let mail = OutgoingMail {
            to: redline_domain::Email::parse("Ann@Example.com").unwrap(),
            subject: "Your export".into(),
            text: "Download: https://x.example/v1/documents/export/download/abc".into(),
            html: Some("<p><a href=\"https://x.example/d\">Download</a></p>".into()),
        };
        let text = String::from_utf8(message(&from, &mail).unwrap().formatted()).unwrap();
        assert!(text.contains("To: ann@example.com"), "{text}");
        assert!(text.contains("From: Redline <no-reply@redline.invalid>"), "{text}");
        assert!(text.contains("Subject: Your export"), "{text}");
        assert!(text.contains("multipart/alternative"), "{text}");
        assert!(text.contains("text/html"), "{text}");
    }

    #[test]
    fn a_bad_sender_is_refused() {
        assert!(matches!(
            open(&MailTransport::Smtp("smtp://127.0.0.1:1".into()), "not an address"),
            Err(MailError::Rejected(_))
        ));
    }
}
