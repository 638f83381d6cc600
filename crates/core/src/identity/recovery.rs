//! Accounts people can recover and control (docs/api.md, "Accounts"): the list of signed-in
//! sessions and signing them out, changing the password, resetting it by e-mail, and the
//! operator's reset.

use redline_domain::throttle;
use redline_domain::{Email, Password, UserId};
use redline_ports::mail::OutgoingMail;
use redline_ports::records::{PasswordResetRecord, UserKind, UserRecord, WebSessionRecord};

use super::{throttle_scope, Guess, Identity, IdentityError, IdentityResult};
use crate::secrets;

/// Prefix of password-reset tokens (`pr_` + 43 base64url characters).
const RESET_TOKEN_PREFIX: &str = "pr_";
/// The most sessions a list shows (the most recently used).
const SESSIONS_LISTED: usize = 100;

/// A signed-in session as its user sees it in the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionListing {
    pub session: WebSessionRecord,
    /// Whether this is the session making the request.
    pub current: bool,
}

impl Identity {
    /// The live sessions of the user behind `token`, most recently used first.
    pub async fn sessions_of(&self, user: UserId, token: &str) -> IdentityResult<Vec<SessionListing>> {
        let now = self.now();
        let current = secrets::sha256_hex(token.as_bytes());
        let idle = self.config.web_session_idle_ms;
        let sessions = self.store.web_sessions_of(user, now, SESSIONS_LISTED).await?;
        Ok(sessions
            .into_iter()
            .filter(|s| now - s.last_seen_at < idle)
            .map(|session| SessionListing { current: session.token_hash == current, session })
            .collect())
    }

    /// Signs out one of the user's sessions by its public id (the current one too).
    pub async fn sign_out_session(&self, user: UserId, id: &str) -> IdentityResult<()> {
        if self.store.delete_web_session_by_id(user, id).await? {
            Ok(())
        } else {
            Err(IdentityError::NotFound("sign-in session"))
        }
    }

    /// Signs out every session of the user, this one included ("sign out everywhere").
    pub async fn sign_out_everywhere(&self, user: UserId) -> IdentityResult<u64> {
        Ok(self.store.delete_web_sessions_of(user, None).await?)
    }

    /// Changes the password of the user behind the session `token`: the current password
    /// must be right (its guesses are throttled per account as sign-ins are, in a scope of
    /// their own: a stolen session guessing cannot lock its owner out of signing in), the new
    /// one must follow the
    /// rules. Every other session ends; this one goes on. Answers how many ended.
    pub async fn change_password(
        &self,
        user: &UserRecord,
        token: &str,
        current: &str,
        new: &str,
    ) -> IdentityResult<u64> {
        let scope = throttle_scope("password-change", &user.id.to_string());
        self.take_throttle(vec![(scope.clone(), throttle::ACCOUNT)], Guess::Password).await?;
        let right = match user.password_hash.clone() {
            Some(hash) => secrets::verify_secret(current.to_owned(), hash).await,
            None => false,
        };
        if !right {
            return Err(IdentityError::WrongCurrentPassword);
        }
        self.store.give_back_throttle(&scope, true).await?;
        let password = Password::new_for(new, user.email.as_ref()).map_err(IdentityError::BadPassword)?;
        self.set_password(user.id, &password).await?;
        let keep = secrets::sha256_hex(token.as_bytes());
        Ok(self.store.delete_web_sessions_of(user.id, Some(keep)).await?)
    }

    async fn set_password(&self, user: UserId, password: &Password) -> IdentityResult<()> {
        let hash = secrets::hash_secret(password.expose().to_owned()).await.map_err(IdentityError::Hashing)?;
        self.store.set_password_hash(user, &hash).await.map_err(super::not_found("user"))
    }

    /// Asks for a password-reset mail to `email`. The answer is the same whether or not an
    /// account has the address (the mail is only sent when one does); requests are throttled
    /// per address asked for and per client address, and each counts.
    pub async fn request_password_reset(&self, email: &str, client: &str) -> IdentityResult<()> {
        let email = Email::unchecked(email);
        self.take_throttle(
            vec![
                (throttle_scope("reset-account", email.as_str()), throttle::RESET_ACCOUNT),
                (throttle_scope("reset-address", client), throttle::RESET_ADDRESS),
            ],
            Guess::PasswordReset,
        )
        .await?;
        let Some(user) = self.store.user_by_email(&email).await? else {
            return Ok(());
        };
        if user.kind != UserKind::Web {
            return Ok(());
        }
        let token = secrets::new_token(RESET_TOKEN_PREFIX);
        let now = self.now();
        let record = PasswordResetRecord {
            token_hash: secrets::sha256_hex(token.as_bytes()),
            user_id: user.id,
            created_at: now,
            expires_at: now + self.config.password_reset_ttl_ms,
        };
        self.store.insert_password_reset(&record).await?;
        let Some(mailer) = self.mailer.clone() else {
            tracing::warn!("a password reset was asked for, and no mailer is configured");
            return Ok(());
        };
        let link = format!("{}/reset-password#token={token}", self.config.public_base_url.trim_end_matches('/'));
        let minutes = self.config.password_reset_ttl_ms / 60_000;
        let mail = OutgoingMail {
            to: email,
            subject: "Reset your Redline password".to_owned(),
            text: format!(
                "Someone, hopefully you, asked to reset the password of your Redline account.\n\n\
                 To choose a new password, open this link within {minutes} minutes (it works once):\n\n{link}\n\n\
                 If you did not ask for this, ignore this mail: your password stays as it is.\n"
            ),
            html: None,
        };
        // The answer does not wait for the mail, so its timing does not tell whether the
        // address has an account.
        tokio::spawn(async move {
            if let Err(e) = mailer.send(&mail).await {
                tracing::warn!(error = %e, "the password-reset mail was not sent");
            }
        });
        Ok(())
    }

    /// Sets a new password with a reset link's token: the link works once, until it expires;
    /// the new password follows the rules (a refused password leaves the link usable). Every
    /// session of the account ends, and its failed sign-ins are forgotten.
    pub async fn reset_password(&self, token: &str, new: &str) -> IdentityResult<()> {
        let token_hash = secrets::sha256_hex(token.as_bytes());
        let now = self.now();
        let pending = self.store.password_reset(&token_hash, now).await?.ok_or(IdentityError::ResetLinkInvalid)?;
        let user = self.store.user_by_id(pending).await?.ok_or(IdentityError::ResetLinkInvalid)?;
        let password = Password::new_for(new, user.email.as_ref()).map_err(IdentityError::BadPassword)?;
        let hash = secrets::hash_secret(password.expose().to_owned()).await.map_err(IdentityError::Hashing)?;
        // Used at the same moment by another request: only one of them sets its password.
        let Some(user_id) = self.store.use_password_reset(&token_hash, self.now()).await? else {
            return Err(IdentityError::ResetLinkInvalid);
        };
        self.store.set_password_hash(user_id, &hash).await.map_err(super::not_found("user"))?;
        self.store.delete_web_sessions_of(user_id, None).await?;
        // The mailed link reached the address: it is proven.
        self.address_proven(&user).await?;
        if let Some(email) = &user.email {
            self.store.give_back_throttle(&throttle_scope("account", email.as_str()), true).await?;
        }
        Ok(())
    }

    /// The operator's `reset-password`: sets the password of the account with `email`
    /// (following the rules) and ends all its sessions.
    pub async fn admin_reset_password(&self, email: &Email, new: &str) -> IdentityResult<UserRecord> {
        let user = self.store.user_by_email(email).await?.ok_or(IdentityError::NotFound("user"))?;
        if user.kind != UserKind::Web {
            return Err(IdentityError::Conflict("this account is an agent's: it has no password"));
        }
        let password = Password::new_for(new, Some(email)).map_err(IdentityError::BadPassword)?;
        self.set_password(user.id, &password).await?;
        self.store.delete_web_sessions_of(user.id, None).await?;
        self.store.give_back_throttle(&throttle_scope("account", email.as_str()), true).await?;
        Ok(user)
    }
}
