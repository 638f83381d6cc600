//! E-mail verification (docs/api.md, "E-mail verification"): a link mailed to an account's
//! address proves that its owner receives mail there. Mailed exports go only to proven
//! addresses; an accepted invitation or a used password-reset link proves the address too.

use redline_domain::throttle;
use redline_domain::time_util::Millis;
use redline_domain::UserId;
use redline_ports::mail::OutgoingMail;
use redline_ports::records::{EmailVerificationRecord, UserKind, UserRecord};

use super::{throttle_scope, Guess, Identity, IdentityError, IdentityResult};
use crate::secrets;

/// Prefix of verification tokens (`ev_` + 43 base64url characters).
const VERIFICATION_TOKEN_PREFIX: &str = "ev_";
/// How long a verification link works.
pub const VERIFICATION_TTL_MS: Millis = 24 * 3600 * 1000;

/// Where an account's address stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmailStatus {
    /// Proven (at this time).
    Verified(Millis),
    /// Not proven yet (or changed since it was).
    Unverified,
    /// The account has no address (an agent's).
    NoAddress,
}

impl Identity {
    /// Whether the user's current address is proven.
    pub async fn email_status(&self, user: &UserRecord) -> IdentityResult<EmailStatus> {
        let Some(email) = &user.email else { return Ok(EmailStatus::NoAddress) };
        Ok(match self.store.verified_email(user.id).await? {
            Some((proven, at)) if &proven == email => EmailStatus::Verified(at),
            _ => EmailStatus::Unverified,
        })
    }

    /// Mails a verification link to the user's address, unless it is proven already (409).
    /// Asked for by the user, it is throttled per account (3 free, then a minute, doubling
    /// up to an hour); sign-up and claims send the first one without counting.
    pub async fn send_verification(&self, user: &UserRecord, asked: bool) -> IdentityResult<()> {
        let Some(email) = user.email.clone() else {
            return Err(IdentityError::Conflict("this account has no e-mail address to verify"));
        };
        if user.kind != UserKind::Web {
            return Err(IdentityError::Conflict("this account has no e-mail address to verify"));
        }
        if let EmailStatus::Verified(_) = self.email_status(user).await? {
            return Err(IdentityError::Conflict("your e-mail address is already verified"));
        }
        if asked {
            let scope = throttle_scope("verify-mail", &user.id.to_string());
            self.take_throttle(vec![(scope, throttle::VERIFICATION_MAIL)], Guess::VerificationMail).await?;
        }
        let token = secrets::new_token(VERIFICATION_TOKEN_PREFIX);
        let now = self.now();
        let link = EmailVerificationRecord {
            token_hash: secrets::sha256_hex(token.as_bytes()),
            user_id: user.id,
            email: email.clone(),
            created_at: now,
            expires_at: now + VERIFICATION_TTL_MS,
        };
        self.store.insert_email_verification(&link).await?;
        let Some(mailer) = self.mailer.clone() else {
            tracing::warn!("an e-mail verification was asked for, and no mailer is configured");
            return Ok(());
        };
        let url = format!("{}/verify-email#token={token}", self.config.public_base_url.trim_end_matches('/'));
        let mail = OutgoingMail {
            to: email,
            subject: "Verify your e-mail address for Redline".to_owned(),
            text: format!(
                "Someone, hopefully you, made a Redline account with this address.\n\n\
                 To confirm that this address is yours, open this link within 24 hours:\n\n{url}\n\n\
                 Until then, Redline mails no exports to it. If you did not make this account, \
                 ignore this mail.\n"
            ),
            html: None,
        };
        tokio::spawn(async move {
            if let Err(e) = mailer.send(&mail).await {
                tracing::warn!(error = %e, "the verification mail was not sent");
            }
        });
        Ok(())
    }

    /// Uses a verification link's token (no sign-in needed: the link may be opened in another
    /// browser): its address becomes the account's proven one. A link works until it expires
    /// or is used; a used, unknown or expired one is refused.
    pub async fn verify_email(&self, token: &str) -> IdentityResult<UserId> {
        let token_hash = secrets::sha256_hex(token.as_bytes());
        self.store.use_email_verification(&token_hash, self.now()).await?.ok_or(IdentityError::VerificationLinkInvalid)
    }

    /// Records the user's current address as proven: a mailed link of another kind (an
    /// invitation, a password reset) reached it.
    pub(super) async fn address_proven(&self, user: &UserRecord) -> IdentityResult<()> {
        if let Some(email) = &user.email {
            self.store.set_verified_email(user.id, email, self.now()).await?;
        }
        Ok(())
    }
}
