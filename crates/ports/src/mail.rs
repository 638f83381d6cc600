//! Outgoing e-mail. Adapter: `redline-mail` (`.eml` files in `<data_dir>/outbox` by default,
//! SMTP through `lettre` when `REDLINE_SMTP_URL` is set).

use redline_domain::Email;

/// One message to one recipient: a plain-text body, optionally with an HTML alternative.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingMail {
    pub to: Email,
    pub subject: String,
    pub text: String,
    pub html: Option<String>,
}

/// Why a message was not handed over.
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    /// The message itself was refused (a bad address, a header the transport rejects).
    #[error("message refused: {0}")]
    Rejected(String),
    /// The outbox or the SMTP server could not be reached; trying later may work.
    #[error("mail transport unavailable: {0}")]
    Unavailable(String),
}

#[cfg_attr(feature = "mocks", mockall::automock)]
#[async_trait::async_trait]
pub trait Mailer: Send + Sync {
    /// Hands one message over for delivery. MUST return `Ok` only once the message is durable
    /// (written whole to the outbox, or accepted by the SMTP server); a reader of the outbox
    /// never sees a part of a message.
    async fn send(&self, mail: &OutgoingMail) -> Result<(), MailError>;
}
