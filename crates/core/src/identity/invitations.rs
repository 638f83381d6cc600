//! Organization membership by invitation (docs/api.md, "Accounts, keys and organizations"):
//! an owner or admin invites an address, a link with a token is mailed to it, and the
//! organization is the invitee's only once they accept through that link, signed in with that
//! address. The token proves the mailbox: an account that merely claims the address gains
//! nothing.

use redline_domain::time_util::Millis;
use redline_domain::{Email, OrgId, UserId};
use redline_ports::mail::OutgoingMail;
use redline_ports::records::{InvitationRecord, MemberRecord, UserRecord};
use redline_ports::StoreError;

use super::{Identity, IdentityError, IdentityResult};
use crate::secrets;

/// Prefix of invitation tokens (`it_` + 43 base64url characters).
const INVITATION_TOKEN_PREFIX: &str = "it_";
/// How long an invitation can be accepted.
pub const INVITATION_TTL_MS: Millis = 7 * 24 * 3600 * 1000;

impl Identity {
    /// Invites `email` to the organization with `role`; only its owner or an admin may. The
    /// answer is the same whether or not the address has an account (an address already a
    /// member is 409). A pending invitation of the same address is replaced. The link goes to
    /// the address by mail.
    pub async fn invite(
        &self,
        actor: UserId,
        org: OrgId,
        email: &Email,
        role: &str,
    ) -> IdentityResult<InvitationRecord> {
        let (org_record, me) = self.org_for_member(actor, org).await?;
        if !me.manages() {
            return Err(IdentityError::Forbidden("only an owner or admin of the organization can invite members"));
        }
        if let Some(user) = self.store.user_by_email(email).await? {
            if self.store.member(org, user.id).await?.is_some() {
                return Err(IdentityError::Conflict("the user is already a member"));
            }
        }
        let token = secrets::new_token(INVITATION_TOKEN_PREFIX);
        let now = self.now();
        let invitation = InvitationRecord {
            id: format!("inv_{}", uuid::Uuid::new_v4().simple()),
            token_hash: secrets::sha256_hex(token.as_bytes()),
            org_id: org,
            email: email.clone(),
            role: role.to_owned(),
            invited_by: actor,
            created_at: now,
            expires_at: now + INVITATION_TTL_MS,
        };
        self.store.upsert_invitation(&invitation).await?;
        let inviter = self
            .store
            .user_by_id(actor)
            .await?
            .and_then(|u| u.email)
            .map_or_else(|| "A member".to_owned(), |e| e.to_string());
        let link = format!("{}/invitations#token={token}", self.config.public_base_url.trim_end_matches('/'));
        let mail = OutgoingMail {
            to: email.clone(),
            subject: "You are invited to an organization on Redline".to_owned(),
            text: format!(
                "{inviter} invited you to join the organization \"{}\" on Redline as {role}.\n\n\
                 To accept, open this link within 7 days and sign in (or create an account) with this address:\n\n{link}\n\n\
                 If you do not want to join, ignore this mail: nothing changes.\n",
                org_record.name
            ),
            html: None,
        };
        match &self.mailer {
            Some(mailer) => {
                mailer.send(&mail).await.map_err(|e| IdentityError::Store(StoreError::Unavailable(e.to_string())))?
            }
            None => tracing::warn!("an invitation was made, and no mailer is configured to send it"),
        }
        Ok(invitation)
    }

    /// The invitation behind a mailed link's token, for the signed-in `user` it was sent to.
    async fn invitation_for(&self, user: &UserRecord, token: &str) -> IdentityResult<InvitationRecord> {
        let invitation = self
            .store
            .invitation_by_token(&secrets::sha256_hex(token.as_bytes()))
            .await?
            .filter(|i| i.expires_at > self.now())
            .ok_or(IdentityError::NotFound("invitation"))?;
        if user.email.as_ref() != Some(&invitation.email) {
            return Err(IdentityError::Forbidden(
                "This invitation was sent to another address: sign in with the address it was sent to.",
            ));
        }
        Ok(invitation)
    }

    /// What an invitation offers, before it is accepted: the organization's name, the role
    /// and who invited.
    pub async fn invitation_summary(
        &self,
        user: &UserRecord,
        token: &str,
    ) -> IdentityResult<(InvitationRecord, String, Option<Email>)> {
        let invitation = self.invitation_for(user, token).await?;
        let org = self.store.org_by_id(invitation.org_id).await?.ok_or(IdentityError::NotFound("invitation"))?;
        let inviter = self.store.user_by_id(invitation.invited_by).await?.and_then(|u| u.email);
        Ok((invitation, org.name, inviter))
    }

    /// Accepts the invitation of a mailed link: the user becomes a member with its role.
    pub async fn accept_invitation(&self, user: &UserRecord, token: &str) -> IdentityResult<MemberRecord> {
        let invitation = self.invitation_for(user, token).await?;
        let member =
            MemberRecord { org_id: invitation.org_id, user_id: user.id, role: invitation.role, created_at: self.now() };
        match self.store.accept_invitation(&invitation.id, &member).await {
            Ok(()) => {
                // The mailed link reached the address: it is proven.
                self.address_proven(user).await?;
                Ok(member)
            }
            Err(StoreError::Duplicate(_)) => {
                Err(IdentityError::Conflict("you are already a member of this organization"))
            }
            Err(StoreError::NotFound) => Err(IdentityError::NotFound("invitation")),
            Err(e) => Err(e.into()),
        }
    }

    /// Declines the invitation of a mailed link.
    pub async fn decline_invitation(&self, user: &UserRecord, token: &str) -> IdentityResult<()> {
        let invitation = self.invitation_for(user, token).await?;
        self.store.delete_invitation(&invitation.id).await?;
        Ok(())
    }

    /// The organization's pending invitations, for its owner and admins.
    pub async fn invitations_of(&self, actor: UserId, org: OrgId) -> IdentityResult<Vec<InvitationRecord>> {
        self.org_admin(actor, org).await?;
        Ok(self.store.invitations_of(org, self.now()).await?)
    }

    /// Withdraws a pending invitation of the organization (owners and admins).
    pub async fn withdraw_invitation(&self, actor: UserId, org: OrgId, id: &str) -> IdentityResult<()> {
        self.org_admin(actor, org).await?;
        let pending = self.store.invitations_of(org, self.now()).await?;
        if !pending.iter().any(|i| i.id == id) || !self.store.delete_invitation(id).await? {
            return Err(IdentityError::NotFound("invitation"));
        }
        Ok(())
    }
}
